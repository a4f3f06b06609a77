# Source: verl-project/verl@1dda039b9c63 examples/rloo_trainer/run_qwen3_8b_fsdp.sh (trimmed to the launch and its KL and batch settings; the snapshot predates release 0.9.1, whose defaults the doctor assumes)
set -xeuo pipefail

train_files="['$HOME/data/gsm8k/train.parquet', '$HOME/data/math/train.parquet']"
train_batch_size=1024
ppo_mini_batch_size=256

DATA=(
    algorithm.adv_estimator=rloo
    algorithm.use_kl_in_reward=True
    algorithm.kl_penalty=kl
    algorithm.kl_ctrl.kl_coef=0.001
    data.train_files="$train_files"
    data.train_batch_size=${train_batch_size}
)

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=${ppo_mini_batch_size}
    actor_rollout_ref.actor.use_kl_loss=False
    actor_rollout_ref.actor.entropy_coeff=0
    actor_rollout_ref.rollout.n=5
)

python3 -m verl.trainer.main_ppo \
    "${DATA[@]}" \
    "${ACTOR[@]}" \
    trainer.critic_warmup=0 \
    trainer.total_epochs=15 \
    "$@"
