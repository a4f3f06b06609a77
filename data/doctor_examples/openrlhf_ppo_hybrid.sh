# Source: OpenRLHF/OpenRLHF@3c3be6234e0c (tag v0.11.0) examples/scripts/train_ppo_ray_hybrid_engine.sh (trimmed to the KL, batch and a few other flags; read as OpenRLHF 0.10.2–0.11.1, the release it was written for)
set -x

python3 -m openrlhf.cli.train_ppo_ray \
   --ref.num_nodes 1 \
   --ref.num_gpus_per_node 8 \
   --vllm.num_engines 4 \
   --train.colocate_all \
   --actor.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \
   --reward.model_name_or_path OpenRLHF/Llama-3-8b-rm-700k \
   --train.batch_size 128 \
   --rollout.batch_size 1024 \
   --rollout.n_samples_per_prompt 1 \
   --train.max_epochs 1 \
   --actor.adam.lr 5e-7 \
   --critic.adam.lr 9e-6 \
   --algo.kl.init_coef 0.01 \
   --data.apply_chat_template \
   --reward.normalize_enable \
   --algo.advantage.is_correction_enable

# Enable tensor parallelism for DeepSpeed
#    --ds.tensor_parallel_size 2 \
