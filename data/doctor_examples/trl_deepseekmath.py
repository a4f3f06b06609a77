# Source: huggingface/trl@f2cd57710ae3 docs/source/paper_index.md (DeepSeekMath, GRPOConfig with the DeepSeek-R1 hyperparameters; the doctor assumes release 1.16.0)
from trl import GRPOConfig, GRPOTrainer

training_args = GRPOConfig(
    loss_type="grpo",
    beta=0.001,  # "the KL coefficient to 0.001"
    epsilon=10.0, # "the GRPO clip ratio ϵ to 10"
    num_generations=16,  # "For each question, we sample 16 outputs..."
    max_completion_length=32_768,  # "...with a maximum length of 32,768"
    steps_per_generation=16,  # "To accelerate training, each rollout generates 8,192 outputs, which are randomly split into 16 minibatches"
    per_device_train_batch_size=4,
    gradient_accumulation_steps=128,
)
trainer = GRPOTrainer(
    ...,
    args=training_args,
)
