# Source: verl-project/verl@1dda039b9c63 docs/start/quickstart.rst (the PPO example command, trimmed; the snapshot predates release 0.9.1, whose defaults the doctor assumes)
PYTHONUNBUFFERED=1 python3 -m verl.trainer.main_ppo \
 data.train_files=$HOME/data/gsm8k/train.parquet \
 data.train_batch_size=256 \
 actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct \
 actor_rollout_ref.actor.optim.lr=1e-6 \
 actor_rollout_ref.actor.ppo_mini_batch_size=64 \
 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 \
 critic.optim.lr=1e-5 \
 critic.model.path=Qwen/Qwen2.5-0.5B-Instruct \
 algorithm.kl_ctrl.kl_coef=0.001 \
 trainer.logger=console \
 trainer.total_epochs=15 2>&1 | tee verl_demo.log
