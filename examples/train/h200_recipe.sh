#!/usr/bin/env bash
# GPU side of the small-model experiment (issue 7): a tokenizer and a Qwen2 model built from
# scratch, SFT on the verified teacher pairs, held-out pass@1 and speed-up before RL, DRPO on
# levels 1-2 with rewards from the batch verifier on the GPU, the same evaluation after RL.
# Everything runs inside MINUTES of wall time (`drtriton train-recipe` budgets each stage).
#
# Usage: examples/train/h200_recipe.sh [OUTDIR] [MINUTES]          (from the repository root)
#   OUTDIR   summary.json, sft_metrics.jsonl, metrics.jsonl, metrics.svg, eval_before_rl.jsonl,
#            eval_after_rl.jsonl (per held-out program: verifier status and code) (default: out/train)
#   MINUTES  the whole run, start-up included (default: 6)
#   env DEVICE=cpu  a scaled-down run on a CPU (a 1-layer model, tiny batches) to check wiring
#   env DATA=DIR    the files of prepare_data.sh (default: examples/train/data, committed)
#   env WORK=DIR    keep the models and checkpoints there (default: a temporary dir, removed)
#   env PYTHON=...  the interpreter (default: python3); extra arguments go to train-recipe
#                   (they come last, so e.g. `--eval-per-level 24` overrides the sizing below)
# Needs drtriton installed (`pip install --no-build-isolation .`); no Gecode, no network.
#
# Expected stage times on one H200, MINUTES=6 (ESTIMATES: only the SFT and the first
# evaluation's figures were measured, in the 2026-11-30 run, with transformers' generate and the
# GPU shared with another verifier job; generation since runs through policy/decode.py, whose GPU
# speed is not measured yet: `python benchmarks/generation_throughput.py --device cuda --size
# recipe --prompts 24 --new 1024 --engines hf loop hf-static`):
#   start-up, imports, tear-down       ~20 s  (outside the recipe's clock: budget = MINUTES - 0.35)
#   tokenizer + model                  ~13 s
#   SFT (sft-share 0.25 of 5.65 min)   ~85 s  (measured: 329 steps of 32 in 86 s, loss 0.035;
#                                      third run, generic-shape pairs: 307 steps in 94 s, 0.014)
#   eval before RL, 12 per level       ~30-60 s: generation takes as many decode steps as the
#                                      longest completion (<= 2048), whatever the batch size
#                                      (measured: 108 s at 53 ms/step for 48 programs with HF
#                                      generate; the decode loop: 12 ms/step for 16 sequences on an
#                                      idle H200, but 183 tokens/s when 3 KernelBench processes and
#                                      a teacher run shared the GPU, which left RL no time: run the
#                                      recipe on a GPU of its own); verify ~6 s
#   RL (what is left, minus 1.2 x eval) ~1.5-2.5 min: ~40-70 s per step of 8 x 8 rollouts
#                                      (generation as above, verification ~16 s, update ~2 s),
#                                      so 2-3 DRPO steps
#   eval after RL                      as before RL
# Budgets under 10 minutes evaluate 12 programs per level and give SFT a quarter of the time (it
# reaches loss 0.035 in 86 s already); longer ones 24 per level and 35%.
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
    # ~26M parameters: 329 SFT steps of 32 sequences in 86 s on one H200 (2026-11-30 run).
    # Verifier: 12 harness processes share the GPU (timings contend a little; the speed-ups are
    # indicative, each candidate is still timed alone within its own process).
    # A short budget trades held-out size for RL steps (see the stage times above): verification
    # scales with the programs, and RL needs what the evaluations leave.
    short=$(awk -v m="$minutes" 'BEGIN { print (m < 10 ? 1 : 0) }')
    if [[ "$short" == 1 ]]; then eval_sizing=(--eval-per-level 12 --sft-share 0.25)
    else eval_sizing=(--eval-per-level 24 --sft-share 0.35); fi
    sizing=(--vocab-size 2048 --hidden-size 512 --layers 8 --heads 8 --kv-heads 4
            --intermediate-size 1536 --sft-batch 32 --sft-lr 6e-4 --prompts-per-step 8
            --group-size 8 --verify-workers 12 --verify-timeout 30 "${eval_sizing[@]}")
fi
work_args=()
[[ -n "${WORK:-}" ]] && work_args=(--work "$WORK")

$py -m drtriton train-recipe --pairs "$data/sft_pairs.jsonl" --programs "$data/rl_programs.jsonl" \
    --heldout "$data/heldout.jsonl" --out "$out" --minutes "$budget" --device "$device" \
    "${sizing[@]}" "${work_args[@]}" "$@"
echo "summary: $out/summary.json"
