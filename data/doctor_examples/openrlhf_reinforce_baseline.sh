# Source: OpenRLHF/OpenRLHF@3c3be6234e0c (tag v0.11.0) examples/scripts/train_reinforce_baseline_hybrid_engine.sh (trimmed to the arrays' KL, batch and a few other flags; read as OpenRLHF 0.10.2–0.11.1, the release it was written for)
SCRIPT_DIR="$(dirname "$0")"
WORK_DIR=$(cd "$SCRIPT_DIR/../.." && pwd)

set -x

MODEL_PATH="Qwen/Qwen3-4B-Thinking-2507"
SAVE_PATH="${WORK_DIR}/exp/Qwen3-4B-Thinking"

CKPT_ARGS=(
   --actor.model_name_or_path ${MODEL_PATH}
   # --reward.model_name_or_path ${REWARD_MODEL}
   --ckpt.output_dir ${SAVE_PATH}
)

ROLLOUT_ARGS=(
   --rollout.batch_size 128
   --rollout.n_samples_per_prompt 8
   --train.batch_size 1024
   --train.max_epochs 1
)

OPTIMIZER_ARGS=(
   --algo.advantage.estimator reinforce_baseline
   --actor.adam.lr 5e-7
   # --critic.adam.lr 9e-6
   --algo.kl.init_coef 1e-5
   --algo.kl.use_loss
   --algo.kl.estimator k2
   --algo.advantage.is_correction_enable
   --algo.advantage.is_correction_type icepop
)

ray job submit --address="http://127.0.0.1:8265" \
   -- python3 -m openrlhf.cli.train_ppo_ray \
   ${CKPT_ARGS[@]} \
   ${ROLLOUT_ARGS[@]} \
   ${OPTIMIZER_ARGS[@]}
