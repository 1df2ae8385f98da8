"""Training: tiny models for tests (tiny.py), SFT warm-up (sft.py), the DRPO/GRPO losses
(drpo.py) and curriculum RL (rl.py). Commands: `drtriton tiny-model`, `drtriton sft`,
`drtriton rl` (cli.py). Heavy dependencies (transformers, accelerate, peft) load lazily.
"""
