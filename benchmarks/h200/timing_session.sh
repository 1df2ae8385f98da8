#!/usr/bin/env bash
# The GPU-timing figures in one H200 call (run from the repository root):
#   install, the CUDA events' resolution, the verifier's GPU tests (GPUTEST_K selects, "" skips),
#   then the parts of benchmarks/timing_noise.py named in NOISE_PARTS (default "b a"):
#   b (one-operator kernels against their operator, alone) and a (dev-split kernels, each
#   verified REPEATS times by WORKERS processes on the GPU).
# KernelBench problems come from .devdata/kernelbench (copy ../shared/kernelbench/level*.jsonl
# there and carry it: the GPU machine does not see ../shared).
# Usage: bash benchmarks/h200/timing_session.sh OUTDIR BUDGET_S
set -uo pipefail
out=$1 budget=$2
start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - start) )); }
export PYTHONUNBUFFERED=1
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True  # several processes share the GPU
# Inductor compiles with a pool as large as the machine in every process that builds a
# torch.compile baseline; several such processes at once oversubscribe the CPU.
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-2}
mkdir -p "$out"
OUT=$out bash benchmarks/h200/install.sh || { echo "install failed" >&2; exit 1; }
# This tree's Python over the installed extension (a carried wheel may hold older Python).
core=$(cd / && python3 -c "import drtriton._core as c; print(c.__file__)") || exit 1
[[ -e python/drtriton/$(basename "$core") ]] || cp "$core" python/drtriton/
export PYTHONPATH=$PWD/python

python3 benchmarks/event_resolution.py
k=${GPUTEST_K-honest or eager_is_timed or time_task or timed_ or side_stream or autotune or patch_timer or cached or survives}
if [[ -n "$k" ]]; then
    DRTRITON_TEST_DEVICE=cuda timeout "${GPUTEST_S:-200}" python3 -m pytest -q -p no:cacheprovider \
        tests/verify/test_gpu.py -k "$k" 2>&1 | tail -15
fi
for part in ${NOISE_PARTS-b a}; do
    echo "== timing_noise part $part at $(( $(date +%s) - start )) s"
    timeout $(( $(left) - 15 )) python3 benchmarks/timing_noise.py --device cuda --parts "$part" \
        --kernelbench .devdata/kernelbench --workers "${WORKERS:-6}" --repeats "${REPEATS:-5}" \
        --work /tmp/noise_work --out "$out/noise_$part.json" 2>&1 | tail -30
    cp /tmp/noise_work/*.jsonl "$out/" 2>/dev/null
done
echo "session: $(( $(date +%s) - start )) s"
