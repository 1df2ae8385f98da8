#!/usr/bin/env bash
# GPU side of the small-model experiment (issue 7): a tokenizer and a Qwen2 model built from
# scratch, SFT on the verified teacher pairs, held-out pass@1 and speed-up before RL, DRPO on
# levels 1-2 with rewards from the batch verifier on the GPU, the same evaluation after RL.
# Everything runs inside MINUTES of wall time (`drtriton train-recipe` budgets each stage).
#
# Usage: examples/train/h200_recipe.sh [OUTDIR] [MINUTES]          (from the repository root)
#   OUTDIR   summary.json, sft_metrics.jsonl, metrics.jsonl, metrics.svg  (default: out/train)
#   MINUTES  the whole run, start-up included (default: 6)
#   env DEVICE=cpu  a scaled-down run on a CPU (a 1-layer model, tiny batches) to check wiring
#   env DATA=DIR    the files of prepare_data.sh (default: examples/train/data, committed)
#   env WORK=DIR    keep the models and checkpoints there (default: a temporary dir, removed)
#   env PYTHON=...  the interpreter (default: python3); extra arguments go to train-recipe
# Needs drtriton installed (`pip install --no-build-isolation .`); no Gecode, no network.
set -euo pipefail
out=${1:-out/train}
minutes=${2:-6}
shift $(( $# < 2 ? $# : 2 ))
data=${DATA:-examples/train/data}
device=${DEVICE:-cuda}
py=${PYTHON:-python3}
mkdir -p "$out"
for f in sft_pairs.jsonl rl_programs.jsonl heldout.jsonl; do
    [[ -s "$data/$f" ]] || { echo "missing $data/$f: run examples/train/prepare_data.sh" >&2; exit 2; }
done
export TOKENIZERS_PARALLELISM=false

# ~20 s of the budget go to interpreter start-up, imports and tear-down, outside the recipe's clock.
budget=$(awk -v m="$minutes" 'BEGIN { b = m - 0.35; print (b > 0.2 ? b : 0.2) }')

if [[ "$device" == cpu ]]; then
    # The wiring only: a model that learns nothing in this time. One BLAS thread per process
    # (several threads on a loaded 2-core machine are ~40x slower than one).
    export OMP_NUM_THREADS=1
    sizing=(--vocab-size 1024 --hidden-size 64 --layers 1 --heads 2 --kv-heads 1
            --intermediate-size 128 --sft-batch 4 --prompts-per-step 2 --group-size 2
            --eval-per-level 2 --verify-workers 2 --max-new-tokens 64 --sft-share 0.3)
else
    # ~25M parameters, so that ~2 minutes of SFT are hundreds of steps of 32 sequences on one
    # H200 (an estimate until the first GPU run).
    # Verifier: 12 harness processes share the GPU (timings contend a little; the speed-ups are
    # indicative, each candidate is still timed alone within its own process).
    sizing=(--vocab-size 2048 --hidden-size 512 --layers 8 --heads 8 --kv-heads 4
            --intermediate-size 1536 --sft-batch 32 --sft-lr 6e-4 --prompts-per-step 8
            --group-size 8 --eval-per-level 24 --verify-workers 12 --verify-timeout 30
            --sft-share 0.35)
fi
work_args=()
[[ -n "${WORK:-}" ]] && work_args=(--work "$WORK")

$py -m drtriton train-recipe --pairs "$data/sft_pairs.jsonl" --programs "$data/rl_programs.jsonl" \
    --heldout "$data/heldout.jsonl" --out "$out" --minutes "$budget" --device "$device" \
    "${sizing[@]}" "${work_args[@]}" "$@"
echo "summary: $out/summary.json"
