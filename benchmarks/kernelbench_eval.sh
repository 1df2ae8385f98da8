#!/usr/bin/env bash
# KernelBench levels 1-3 on the H200: install, `drtriton eval kernelbench`, summary, in one call.
#
#   bash benchmarks/kernelbench_eval.sh PROBLEMS OUTDIR BUDGET_S [extra `eval kernelbench` args]
#
# PROBLEMS: a KernelBench JSONL, or a folder of level*.jsonl (the GPU machine does not see
#   /work/shared: copy /work/shared/kernelbench/level{1,2,3}.jsonl into the repo tree first).
# OUTDIR: receives results.jsonl, summary.md, speedup.png (if matplotlib is there), plan.json,
#   logs.tgz (the two folders below in one file),
#   kernels/ (each ModelNew) and logs/ (one per problem). Use a folder under $OUT.
# BUDGET_S: wall-clock seconds for the whole script (install included); nothing is started
#   that cannot finish in it: problems stop starting at BUDGET - install - PROBLEM_TIMEOUT
#   (a large problem's own limit is longer: `--timeout-per-gb`; one cut off by the budget is
#   left unrecorded for a resumed run).
#   With FILL=1, problems keep starting until the end; those still running when the budget
#   ends are stopped and left unrecorded, so that a resumed run (PREVIOUS) starts them again.
#   On a machine lent in short calls this keeps every worker busy instead of idling through
#   the last PROBLEM_TIMEOUT seconds of each call (call 1 of 2026-11-30: 279 s of a 585 s
#   call could start problems).
#
# Resumable across calls: set PREVIOUS to a folder holding an earlier call's results.jsonl
# (copied back into the repo tree); its problems are not run again.
# Environment: PROBLEM_TIMEOUT (default 240 s per problem: optimize + final verification; at
#   120-150 s, 8 problems sharing 2 H200s timed out on level-2 conv models after their search had
#   verified fused epilogues, i.e. most likely in the hybrid check or the final verification;
#   on 2026-12-01, 8 per H200, 240 s gave 2.7-3.2 problems a minute with 2 timeouts in 47,
#   300 s 1.6-1.7),
#   WORKERS (default: one per GPU; more than one per GPU makes timings contend),
#   RERUN_OOM=1 (run again the resumed failures that ran out of GPU memory; use fewer WORKERS),
#   LEVELS (default 1,2,3), SKIP_INSTALL=1 (drtriton is importable already), DEVICE (default
#   cuda; cpu for a dry run of this script).
# Afterwards, on any machine with matplotlib: drtriton eval summarize OUTDIR
set -uo pipefail
problems=$1 outdir=$2 budget=$3
shift 3
start=$(date +%s)
problem_timeout=${PROBLEM_TIMEOUT:-240}
mkdir -p "$outdir"
export PYTHONUNBUFFERED=1

if [[ -z "${SKIP_INSTALL:-}" ]]; then
    bash benchmarks/h200/install.sh || { echo "install failed" >&2; exit 1; }
fi
# Run this tree's Python (a cached wheel may hold older Python code) over the installed
# extension: copy the installed _core next to the sources.
core=$(cd / && python3 -c "import drtriton._core as c; print(c.__file__)") || {
    echo "drtriton._core is not importable: install first" >&2; exit 1; }
[[ -e python/drtriton/$(basename "$core") ]] || cp "$core" python/drtriton/
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}

if [[ -d "$problems" ]]; then
    cat "$problems"/level*.jsonl >"$outdir/problems.jsonl"
    problems=$outdir/problems.jsonl
fi
if [[ -n "${PREVIOUS:-}" && -f "$PREVIOUS/results.jsonl" && ! -s "$outdir/results.jsonl" ]]; then
    cp "$PREVIOUS/results.jsonl" "$outdir/results.jsonl"
    echo "resuming: $(wc -l <"$outdir/results.jsonl") results from $PREVIOUS"
fi

# 10 s: SIGTERM grace of a killed problem; 30 s: summary and copying back.
left=$(( budget - ($(date +%s) - start) ))
starts=$(( left - problem_timeout - 40 ))
[[ -n "${FILL:-}" ]] && starts=$(( left - 60 ))
if (( starts <= 0 )); then
    echo "budget too small: ${left}s left after install, PROBLEM_TIMEOUT=${problem_timeout}s" >&2
    exit 1
fi
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader 2>/dev/null || true
echo "eval: ${starts}s to start problems, ${problem_timeout}s per problem"
timeout --signal=INT $(( left - 20 )) python3 -m drtriton eval kernelbench "$problems" \
    --out "$outdir" --device "${DEVICE:-cuda}" --levels "${LEVELS:-1,2,3}" --problem-timeout "$problem_timeout" \
    --time-budget "$starts" ${WORKERS:+--workers "$WORKERS"} ${RERUN_OOM:+--rerun-oom} \
    --no-progress "$@"
echo "eval exit: $?"
# Rebuilds the summary even after an interrupted run (results.jsonl holds whole lines only).
python3 -m drtriton eval summarize "$outdir"
# One file for the per-problem logs and kernels (the device tool returns a limited count).
tar czf "$outdir/logs.tgz" -C "$outdir" logs kernels 2>/dev/null || true
sed -n '/^## By level/,/^## Speedup/p' "$outdir/summary.md"
echo "total: $(( $(date +%s) - start )) s"
