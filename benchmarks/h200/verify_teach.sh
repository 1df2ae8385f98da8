#!/usr/bin/env bash
# Issue 4 and 5 figures on a 2-GPU H200 host, in one timed call:
#   GPU 1: the GPU verifier tests (pytest-xdist), then verifier throughput with 1/2/4 workers;
#   GPU 0: teacher acceptance on PROGRAMS (paper preset), until BUDGET seconds are spent.
# Usage: bash benchmarks/h200/verify_teach.sh OUTDIR PROGRAMS.jsonl BUDGET_S
set -uo pipefail
out=$1 programs=$2 budget=$3
mkdir -p "$out"
export PYTHONUNBUFFERED=1
(
    export CUDA_VISIBLE_DEVICES=1
    timeout 240 python3 -m pytest -q -n 4 tests/verify/test_gpu.py -p no:cacheprovider 2>&1 | tail -25
    timeout $((budget - 260)) python3 benchmarks/verify_throughput.py --device cuda --workers 1 2 4 \
        --pairs 24 --json "$out/throughput.json" 2>&1 | tail -20
) >"$out/gpu1.log" 2>&1 &
CUDA_VISIBLE_DEVICES=0 timeout "$budget" python3 benchmarks/teacher_acceptance.py --programs "$programs" \
    --device cuda --workers 1 --timeout 240 --out "$out/teacher_paper.jsonl" >"$out/teacher.log" 2>&1
wait
python3 benchmarks/teacher_acceptance.py --programs "$programs" --device cuda --out "$out/teacher_paper.jsonl" \
    --report-only >>"$out/teacher.log" 2>&1
cat "$out/gpu1.log" "$out/teacher.log"
