"""Training: SFT warm-up and curriculum RL with DRPO (DRTriton section 4, appendix C).

    sft_data.py  `drtriton sft-data`: verified pairs, level 1 per operator and chains per level
    pair_coverage.py  per level, how many pairs of a pairs file hold each catalog operator
    sft.py       `drtriton sft`: prompt-masked fine-tuning on accelerate, LoRA through peft
    drpo.py      the DRPO loss (and GRPO), pure tensor functions; departures from the papers
    update.py    one policy update in micro-batches (exact gradients of the group loss)
    rl.py        `drtriton rl`: rollouts, verifier rewards, updates, curriculum, metrics
    tiny.py      `drtriton tiny-model`: a BPE tokenizer and a 2-layer Qwen2 for tests and demos
    evaluate.py  held-out pass@1, speed-ups and fast_1, overall and per level
    recipe.py    `drtriton train-recipe`: scratch model -> SFT -> eval -> DRPO -> eval, time-boxed
    budget.py    wall-clock budgets (`--max-minutes`) shared by SFT and RL
Heavy dependencies (transformers, accelerate, peft, tokenizers) load lazily.
"""
