#!/usr/bin/env bash
# One 2-GPU H200 call for the figures of issues 5, 6 and 7 (run from the repository root):
#   GPU 0: drtriton eval kernelbench on KB_PROBLEMS (EVAL_WORKERS processes share it);
#   GPU 1: the small-model training recipe (examples/train/h200_recipe.sh), and beside it the
#          teacher's acceptance on paper-preset programs (TEACH_PROGRAMS).
# Everything lands in OUTDIR as at most 7 files (the device tool brings back 8).
# Usage: bash benchmarks/h200/session.sh OUTDIR BUDGET_S
set -uo pipefail
out=$1 budget=$2
start=$(date +%s)
export PYTHONUNBUFFERED=1
mkdir -p "$out/kb" "$out/train" /tmp/session
OUT= REBUILD=1 bash benchmarks/h200/install.sh || { echo "install failed" >&2; exit 1; }
left=$(( budget - ($(date +%s) - start) ))

CUDA_VISIBLE_DEVICES=1 timeout $(( left - 20 )) bash examples/train/h200_recipe.sh /tmp/session/train \
    "$(awk -v s="$left" 'BEGIN { printf "%.1f", (s - 30) / 60 }')" >"$out/train/recipe.log" 2>&1 &
train=$!
CUDA_VISIBLE_DEVICES=1 timeout $(( left - 40 )) python3 benchmarks/teacher_acceptance.py \
    --programs "${TEACH_PROGRAMS:-.devdata/paper_capped.jsonl}" --device cuda --workers 1 --timeout 200 \
    --out "$out/teacher_paper.jsonl" >/tmp/session/teacher.log 2>&1 &
teach=$!
CUDA_VISIBLE_DEVICES=0 SKIP_INSTALL=1 PROBLEM_TIMEOUT=${PROBLEM_TIMEOUT:-120} WORKERS=${EVAL_WORKERS:-4} \
    bash benchmarks/kernelbench_eval.sh "${KB_PROBLEMS:-kb/interleaved.jsonl}" /tmp/session/kb \
    $(( left - 15 )) --k 1 >/tmp/session/kb.log 2>&1
wait $teach $train
cp /tmp/session/kb/results.jsonl /tmp/session/kb/summary.md "$out/kb/" 2>/dev/null
cp /tmp/session/kb/speedup.png "$out/kb/" 2>/dev/null
python3 benchmarks/teacher_acceptance.py --programs "${TEACH_PROGRAMS:-.devdata/paper_capped.jsonl}" \
    --device cuda --out "$out/teacher_paper.jsonl" --report-only >>/tmp/session/teacher.log 2>&1
cp /tmp/session/teacher.log "$out/"
tar czf "$out/train/train_and_logs.tgz" -C /tmp/session train kb.log kb/logs kb/kernels 2>/dev/null
tail -5 /tmp/session/kb.log; sed -n '/^## By level/,/^## Speedup/p' "$out/kb/summary.md" 2>/dev/null
tail -12 "$out/teacher.log"; tail -15 "$out/train/recipe.log"
echo "session: $(( $(date +%s) - start )) s"
