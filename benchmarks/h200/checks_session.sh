#!/usr/bin/env bash
# Two short H200 checks in one call (run from the repository root; about 5 minutes):
#   1. benchmarks/drop_in.py --device cuda: ModelNew against Model for three models of our own at
#      three batch sizes, eval and train (issue 22's figure on the GPU);
#   2. drtriton verify-batch over PAIRS (default .devdata/noise/subset.jsonl: the lines of
#      benchmarks/results/h200-2026-12-01-b/noise_a_pairs.jsonl for L1_34, L1_35 and L1_41, 5
#      repeats each, in round-robin order; carry .devdata) with WORKERS processes, every long GPU-lock hold logged (DRTRITON_LOCK_LOG),
#      then each kernel's spread over its repeats (timing_noise.kernel_stats) and the lock log.
# Usage: bash benchmarks/h200/checks_session.sh OUTDIR BUDGET_S
set -uo pipefail
out=$1 budget=$2
start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - start) )); }
export PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-2}
mkdir -p "$out"
OUT=$out bash benchmarks/h200/install.sh >/dev/null || { echo "install failed" >&2; exit 1; }
core=$(cd / && python3 -c "import drtriton._core as c; print(c.__file__)") || exit 1
[[ -e python/drtriton/$(basename "$core") ]] || cp "$core" python/drtriton/
export PYTHONPATH=$PWD/python

echo "== drop_in.py at $(( $(date +%s) - start )) s"
timeout "${DROP_IN_S:-150}" python3 benchmarks/drop_in.py --device cuda --out "$out/drop_in.json" \
    2>/dev/null | tail -22
pairs=${PAIRS:-.devdata/noise/subset.jsonl}
if [[ -f "$pairs" ]]; then
    echo "== verify-batch $pairs at $(( $(date +%s) - start )) s"
    DRTRITON_LOCK_LOG=$out/lock_holds.jsonl timeout $(( $(left) - 20 )) python3 -m drtriton \
        verify-batch "$pairs" --out "$out/noise.jsonl" --workers "${WORKERS:-6}" --device cuda \
        --quiet 2>&1 | tail -3
    python3 - "$out/noise.jsonl" <<'PY'
import collections, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("timing_noise", "benchmarks/timing_noise.py")
noise = importlib.util.module_from_spec(spec)
spec.loader.exec_module(noise)
by_kernel = collections.defaultdict(list)
for line in open(sys.argv[1]):
    record = json.loads(line)
    by_kernel[str(record["id"]).rpartition("#")[0]].append(record)
for kernel, verdicts in by_kernel.items():
    k = noise.kernel_stats(kernel, verdicts)
    print(kernel, k["repeats"], "median_ms", k["median_ms"], "time max/min", k["time_ratio"],
          "graph max/min", k["graph_ratio"], "pass", k["pass"])
PY
    python3 benchmarks/lock_holds.py "$out/lock_holds.jsonl" 2>&1 | head -14
fi
echo "session: $(( $(date +%s) - start )) s"
