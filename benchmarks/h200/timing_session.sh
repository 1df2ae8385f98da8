#!/usr/bin/env bash
# The GPU-timing figures in one H200 call (run from the repository root):
#   install, the CUDA events' resolution, the verifier's GPU tests (GPUTEST_K selects, "" skips),
#   then the parts of benchmarks/timing_noise.py named in NOISE_PARTS (default "b a"):
#   b (one-operator kernels against their operator, alone) and a (dev-split kernels, each
#   verified REPEATS times by WORKERS processes on the GPU).
# KernelBench problems come from .devdata/kernelbench (copy ../shared/kernelbench/level*.jsonl
# there and carry it: the GPU machine does not see ../shared).
# Usage: bash benchmarks/h200/timing_session.sh OUTDIR BUDGET_S
source "$(dirname "$0")/prelude.sh" "$@"

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
