#!/usr/bin/env bash
# The whole training pipeline on a CPU in a few minutes, with a tiny model built from scratch:
# synthesize -> teacher pairs (verified) -> tokenizer + tiny Qwen2 -> SFT -> a few DRPO steps.
# The tiny model learns nothing useful in this time; every stage runs as it would at scale.
# Usage: examples/train/tiny_pipeline.sh [WORKDIR]   (needs `pip install --no-build-isolation .`)
set -euo pipefail
work=${1:-/tmp/drtriton-tiny}
mkdir -p "$work"
cd "$work"

# 1. Level-1 programs per operator, answered by the C++ teacher, kept when the verifier accepts.
drtriton sft-data --out pairs.jsonl --per-op 2 --ops relu,sigmoid,softmax,add --preset tiny

# 2. Curriculum programs for RL (levels 1-2).
drtriton synth --n 64 --levels 1-2 --preset tiny --out programs.jsonl

# 3. A byte-level BPE tokenizer trained on our prompts and answers, and a 2-layer Qwen2.
drtriton tiny-model pairs.jsonl programs.jsonl --out tiny --vocab-size 1024

# 4. SFT warm-up (prompt tokens masked), then curriculum DRPO with verified rewards.
drtriton sft --model tiny --data pairs.jsonl --out sft --max-steps 20 --lr 1e-3 --batch-size 2
drtriton rl --model sft --programs programs.jsonl --out rl --steps 3 --prompts-per-step 2 \
    --group-size 4 --max-new-tokens 64 --eval-every 3 --eval-size 2 --heldout-per-level 2 \
    --lr 1e-4

echo "metrics: $work/rl/metrics.jsonl, plot: $work/rl/metrics.svg"
