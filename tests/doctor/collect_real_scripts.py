"""Copy the real launch scripts and configs the doctor is tested on out of git snapshots of public repositories.

Never runs any of them: each file is read with ``git show REV:PATH`` and written
as it is (a ``lines`` range cuts one code block out of a documentation page).
The expected cards beside them (``*.expected.toml``) are written by hand from
each library's own code at the same release, not from the doctor's output.

Usage: ``uv run python tests/doctor/collect_real_scripts.py MIRRORS_DIR`` where
MIRRORS_DIR holds ``owner+name/repo`` git directories (bare snapshots).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "real_scripts"

FILES = [
    # (library dir, name, repo, rev, path, lines)
    ("openrlhf", "v0.5.9_train_ppo_llama_ray.sh", "OpenRLHF/OpenRLHF", "v0.5.9", "examples/scripts/train_ppo_llama_ray.sh", None),
    ("openrlhf", "v0.6.0_train_grpo_ray_hybrid_engine.sh", "OpenRLHF/OpenRLHF", "v0.6.0", "examples/scripts/train_grpo_ray_hybrid_engine.sh", None),
    ("openrlhf", "v0.7.5_train_grpo_ray_hybrid_engine.sh", "OpenRLHF/OpenRLHF", "v0.7.5", "examples/scripts/train_grpo_ray_hybrid_engine.sh", None),
    ("openrlhf", "v0.8.11_train_reinforce_baseline_llama_ray_hybrid_engine.sh", "OpenRLHF/OpenRLHF", "v0.8.11", "examples/scripts/train_reinforce_baseline_llama_ray_hybrid_engine.sh", None),
    ("openrlhf", "v0.9.10_train_ppo_ray_slurm.sh", "OpenRLHF/OpenRLHF", "v0.9.10", "examples/scripts/train_ppo_ray_slurm.sh", None),
    ("openrlhf", "v0.10.4_train_reinforce_baseline_hybrid_engine.sh", "OpenRLHF/OpenRLHF", "v0.10.4", "examples/scripts/train_reinforce_baseline_hybrid_engine.sh", None),
    ("openrlhf", "v0.11.0_train_ppo_ray_hybrid_engine.sh", "OpenRLHF/OpenRLHF", "v0.11.0", "examples/scripts/train_ppo_ray_hybrid_engine.sh", None),
    ("openrlhf", "v0.11.0_train_dapo_ray_hybrid_engine.sh", "OpenRLHF/OpenRLHF", "v0.11.0", "examples/scripts/train_dapo_ray_hybrid_engine.sh", None),
    ("verl", "v0.3.0.post1_ppo_run_deepseek7b_llm.sh", "volcengine/verl", "v0.3.0.post1", "examples/ppo_trainer/run_deepseek7b_llm.sh", None),
    ("verl", "v0.3.0.post1_grpo_run_qwen2-7b.sh", "volcengine/verl", "v0.3.0.post1", "examples/grpo_trainer/run_qwen2-7b.sh", None),
    ("verl", "v0.4.1_ppo_run_deepseek7b_llm.sh", "volcengine/verl", "v0.4.1", "examples/ppo_trainer/run_deepseek7b_llm.sh", None),
    ("verl", "v0.4.1_grpo_run_qwen2-7b.sh", "volcengine/verl", "v0.4.1", "examples/grpo_trainer/run_qwen2-7b.sh", None),
    ("verl", "v0.4.1_run_dapo_qwen2.5_32b.sh", "volcengine/verl", "v0.4.1", "recipe/dapo/run_dapo_qwen2.5_32b.sh", None),
    ("verl", "v0.4.1_entropy_7b_kl_cov.sh", "volcengine/verl", "v0.4.1", "recipe/entropy/7b_kl_cov.sh", None),
    ("verl", "v0.6.1_ppo_run_deepseek7b_llm.sh", "volcengine/verl", "v0.6.1", "examples/ppo_trainer/run_deepseek7b_llm.sh", None),
    ("verl", "v0.7.0_grpo_run_qwen2-7b_math.sh", "volcengine/verl", "v0.7.0", "examples/grpo_trainer/run_qwen2-7b_math.sh", None),
    ("verl", "tinyzero_train_tiny_zero.sh", "Jiayi-Pan/TinyZero", "95df88f2dcb05f33bd18da546531b52d0954c18b", "scripts/train_tiny_zero.sh", None),
    ("verl", "logic-rl_main_grpo.sh", "Unakar/Logic-RL", "9d2c457525ec14639e85afa12d49bb16efb053a4", "main_grpo.sh", None),
    ("verl", "search-r1_train_ppo.sh", "PeterGriffinJin/Search-R1", "a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06", "train_ppo.sh", None),
    ("verl", "search-r1_train_grpo.sh", "PeterGriffinJin/Search-R1", "a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06", "train_grpo.sh", None),
    ("verl", "simplerl_train_grpo_math_tune_ray.sh", "hkust-nlp/simpleRL-reason", "cf1c7858bfc145a27aa733e75d930d34f0d318a6", "train_grpo_math_tune_ray.sh", None),
    ("verl", "rllm_deepscaler_1.5b_8k.sh", "agentica-project/rllm", "874daa4acb7f451dc2a4b2b6e8ce28f5aa88d1f5", "scripts/deepscaler/train/deepscaler_1.5b_8k.sh", None),
    ("verl", "rllm_deepcoder_14b_coding_32k.sh", "agentica-project/rllm", "874daa4acb7f451dc2a4b2b6e8ce28f5aa88d1f5", "scripts/deepcoder/train/deepcoder_14b_coding_32k.sh", None),
    ("verl", "verl_remax_run_qwen2.5-3b_seq_balance.sh", "volcengine/verl", "b178a3cd56f58b2d502255daba591e92833930a7", "examples/remax_trainer/run_qwen2.5-3b_seq_balance.sh", None),
    # forks with their own copy of verl that the doctor refuses by name (releases.toml [[unread_forks]])
    ("verl", "easyr1_config.yaml", "hiyouga/EasyR1", "b44b311b669bf1fd1aa2fc36f2251482ba33cb16", "examples/config.yaml", None),
    ("verl", "skywork-or1_7b_8k.sh", "SkyworkAI/Skywork-OR1", "64e96afa213ae89d0ad21932106d3b8aafe9ace2", "or1_scripts/train/7b_8k.sh", None),
    ("verl", "prime_run_prime_main.sh", "PRIME-RL/PRIME", "18ad596f08d487bb546d80d738d99ec697bd2e75", "training/examples/run_prime_main.sh", None),
    ("verl", "torl_1.5b.sh", "GAIR-NLP/ToRL", "cb78cf1c494c7595cf64385482918298fff5b7fb", "scripts/torl_1.5b.sh", None),
    ("trl", "open-r1_qwen2.5-1.5b_grpo_config_demo.yaml", "huggingface/open-r1", "1416fa0cf21595d2083b399a2a0bbddd7f6e9563", "recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml", None),
    ("trl", "open-r1_qwen2.5-1.5b_grpo_config_demo_code.yaml", "huggingface/open-r1", "1416fa0cf21595d2083b399a2a0bbddd7f6e9563", "recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo_code.yaml", None),
    ("trl", "open-r1_grpo.py", "huggingface/open-r1", "1416fa0cf21595d2083b399a2a0bbddd7f6e9563", "src/open_r1/grpo.py", None),
    ("trl", "trl_v0.14.0_docs_grpo_quickstart.py", "huggingface/trl", "v0.14.0", "docs/source/grpo_trainer.md", (29, 46)),
    ("trl", "trl_docs_grpo_slurm.sh", "huggingface/trl", "f2cd57710ae345ea6428ae95363267fcf38a3dc8", "docs/source/grpo_trainer.md", (338, 363)),
    ("trl", "trl_examples_grpo_vlm.py", "huggingface/trl", "f2cd57710ae345ea6428ae95363267fcf38a3dc8", "examples/scripts/grpo_vlm.py", None),
    ("trl", "trl_examples_rloo.py", "huggingface/trl", "f2cd57710ae345ea6428ae95363267fcf38a3dc8", "examples/scripts/rloo.py", None),
]


def main() -> None:
    mirrors = Path(sys.argv[1])
    for lib, name, repo, rev, path, lines in FILES:
        git = mirrors / repo.replace("/", "+") / "repo"
        commit = subprocess.run(["git", f"--git-dir={git}", "rev-list", "-n1", rev], check=True,
                                capture_output=True, text=True).stdout.strip()
        text = subprocess.run(["git", f"--git-dir={git}", "show", f"{commit}:{path}"], check=True,
                              capture_output=True, text=True).stdout
        if lines:
            text = "\n".join(text.split("\n")[lines[0] - 1:lines[1]]) + "\n"
        out = HERE / lib / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        side = out.with_name(name + ".expected.toml")
        head = (f'[source]\nrepo = "{repo}"\nrev = "{rev}"\ncommit = "{commit}"\npath = "{path}"\n'
                + (f"lines = [{lines[0]}, {lines[1]}]\n" if lines else ""))
        if side.exists():
            body = side.read_text().split("\n[expected]", 1)
            side.write_text(head + ("\n[expected]" + body[1] if len(body) == 2 else ""))
        else:
            side.write_text(head + "\n[expected]\n")
        print(lib, name, commit[:10])


if __name__ == "__main__":
    main()
