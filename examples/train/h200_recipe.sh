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
#   env PAIRS=FILE  the SFT pairs (default: DATA/sft_pairs.jsonl, level 1); e.g.
#                   DATA/sft_pairs_l1-3.jsonl.xz, the 20,161 level 1-3 pairs (README); the
#                   tokenizer is trained on them, held-out programs among them are dropped
#   env PROGRAMS=FILE, HELDOUT=FILE  the RL programs and held-out programs (default:
#                   DATA/rl_programs.jsonl and DATA/heldout.jsonl, levels 1-2);
#                   DATA/rl_programs_l1-5.jsonl and DATA/heldout_l1-5.jsonl hold levels 1-5
#                   (prepare_l1-5.sh; 64 held-out per level: pass --eval-per-level 64)
#   env L2_PAIRS=1  add DATA/sft_pairs_l2.jsonl (prepare_l2_pairs.sh's level-2 chains) to SFT
#                   (default 0: level-1 pairs alone, as the paper). Needs a longer budget: in
#                   8.6 minutes with a 0.25 SFT share the 2,558 pairs left the model at loss
#                   0.028 and 0 of 24 held-out programs correct (H200, 2026-11-30)
#   env PYTHON=...  the interpreter (default: python3); extra arguments go to train-recipe
#                   (they come last, so e.g. `--eval-per-level 24` overrides the sizing below;
#                   `--init-model WORK/rl` continues an earlier run: README "Longer than one
#                   sitting")
# Needs drtriton installed (`pip install --no-build-isolation .`); no Gecode, no network.
#
# Stage times on one H200 (measured 2026-11-30, sixth session, MINUTES 7.0, --sft-share 0.35;
# the decode loop replays each step from a CUDA graph since then):
#   start-up, imports, tear-down       ~20 s  (outside the recipe's clock: budget = MINUTES - 0.35)
#   tokenizer + model                  ~13 s
#   SFT                                 596 steps of 32 in 140 s (211k tokens/s, loss 0.005);
#                                      814 steps in 201 s with --sft-share 0.4
#   eval, 12 per level                 generation 6 s (2.9 ms per decode step for 24 sequences;
#                                      57 ms before the CUDA graph), verification 27-35 s
#   RL step (8 programs x 8 rollouts)  generation 8-18 s, verification 65-72 s when 70-88% of
#                                      the rollouts are correct (56-59 per minute on 16 cores;
#                                      206 per minute when all fail early), update 2-4 s
#   eval after RL                      as before RL
# Seventh session (2 x H200, recipe pinned to 16 cores, 8.25 min, --sft-share 0.4): SFT 780-803
# steps in 191-199 s (loss 0.004), held-out level 1 4/12 before and after 2 DRPO steps.
# Budgets under 10 minutes evaluate 12 programs per level, give SFT 40% of the time and warm
# RL's learning rate up over 4 optimizer steps (a run has room for 2-3 RL steps of 2 updates);
# longer ones evaluate 24 per level, give SFT 35% and warm up over 10.
set -euo pipefail
out=${1:-out/train}
minutes=${2:-6}
shift $(( $# < 2 ? $# : 2 ))
data=${DATA:-examples/train/data}
device=${DEVICE:-cuda}
py=${PYTHON:-python3}
mkdir -p "$out"
pairs=${PAIRS:-$data/sft_pairs.jsonl}
programs=${PROGRAMS:-$data/rl_programs.jsonl}
heldout=${HELDOUT:-$data/heldout.jsonl}
for f in "$pairs" "$programs" "$heldout"; do
    [[ -s "$f" ]] || { echo "missing $f: run examples/train/prepare_data.sh" >&2; exit 2; }
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
    if [[ "$short" == 1 ]]; then eval_sizing=(--eval-per-level 12 --sft-share 0.4 --rl-warmup 4)
    else eval_sizing=(--eval-per-level 24 --sft-share 0.35 --rl-warmup 10); fi
    sizing=(--vocab-size 2048 --hidden-size 512 --layers 8 --heads 8 --kv-heads 4
            --intermediate-size 1536 --sft-batch 32 --sft-lr 6e-4 --prompts-per-step 8
            --group-size 8 --verify-workers 12 --verify-timeout 30 "${eval_sizing[@]}")
fi
work_args=()
[[ -n "${WORK:-}" ]] && work_args=(--work "$WORK")
[[ "${L2_PAIRS:-0}" != 0 && -s "$data/sft_pairs_l2.jsonl" ]] && \
    work_args+=(--extra-pairs "$data/sft_pairs_l2.jsonl")

$py -m drtriton train-recipe --pairs "$pairs" --programs "$programs" \
    --heldout "$heldout" --out "$out" --minutes "$budget" --device "$device" \
    "${sizing[@]}" "${work_args[@]}" "$@"
echo "summary: $out/summary.json"
