# Source: OpenRLHF/OpenRLHF@3c3be6234e0c (tag v0.11.0) examples/scripts/train_dapo_ray_hybrid_engine.sh (trimmed to the KL, batch and a few other flags; the doctor assumes release 0.11.2)
set -x

python3 -m openrlhf.cli.train_ppo_ray \
   --ref.num_nodes 1 \
   --actor.num_nodes 1 \
   --algo.kl.init_coef 1e-3 \
   --algo.advantage.gamma 1.0 \
   --algo.kl.use_loss \
   --algo.kl.estimator k3 \
   --algo.advantage.estimator group_norm \
   --algo.dynamic_filtering_range 0 1 \
   --actor.eps_clip_low_high 0.2 0.27 \
   --train.micro_batch_size 8 \
   --train.batch_size 128 \
   --rollout.micro_batch_size 16 \
   --rollout.batch_size 128 \
   --rollout.n_samples_per_prompt 8 \
   --train.max_epochs 1 \
   --actor.adam.lr 5e-7

# You could also try
#   --algo.kl.estimator k2 \
