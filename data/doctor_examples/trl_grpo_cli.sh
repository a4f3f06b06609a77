# Source: huggingface/trl@f2cd57710ae3 docs/source/clis.md (the `trl grpo` example command; the doctor assumes release 1.16.0)
trl grpo \
  --model_name_or_path Qwen/Qwen2.5-0.5B \
  --dataset_name HuggingFaceH4/Polaris-Dataset-53K \
  --reward_funcs accuracy_reward
