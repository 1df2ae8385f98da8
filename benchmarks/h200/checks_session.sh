#!/usr/bin/env bash
# Two short H200 checks in one call (run from the repository root; about 5 minutes):
#   1. benchmarks/drop_in.py --device cuda --keep-slower: ModelNew against Model for three models
#      of our own at three batch sizes, eval and train (issue 22's figure on the GPU; their
#      kernels lose to eager there, so the least slow verified one is kept);
#   2. drtriton verify-batch over PAIRS (default .devdata/noise/subset.jsonl: the lines of
#      benchmarks/results/h200-2026-12-01-b/noise_a_pairs.jsonl for L1_34, L1_35 and L1_41, 5
#      repeats each, in round-robin order; carry .devdata) with WORKERS processes, every long GPU-lock hold logged (DRTRITON_LOCK_LOG),
#      then each kernel's spread over its repeats (timing_noise.kernel_stats) and the lock log.
# Usage: bash benchmarks/h200/checks_session.sh OUTDIR BUDGET_S
source "$(dirname "$0")/prelude.sh" "$@"

echo "== drop_in.py at $(( $(date +%s) - start )) s"
timeout "${DROP_IN_S:-150}" python3 benchmarks/drop_in.py --device cuda --keep-slower --out "$out/drop_in.json" \
    2>/dev/null | tail -22
pairs=${PAIRS:-.devdata/noise/subset.jsonl}
if [[ -f "$pairs" ]]; then
    echo "== verify-batch $pairs at $(( $(date +%s) - start )) s"
    DRTRITON_LOCK_LOG=$out/lock_holds.jsonl timeout $(( $(left) - 20 )) python3 -m drtriton \
        verify-batch "$pairs" --out "$out/noise.jsonl" --workers "${WORKERS:-6}" --device cuda \
        ${SLACK_US:+--launch-slack-us "$SLACK_US"} \
        --quiet 2>&1 | tail -3
    python3 benchmarks/noise_spread.py "$out/noise.jsonl"
    python3 benchmarks/lock_holds.py "$out/lock_holds.jsonl" 2>&1 | head -14
fi
echo "session: $(( $(date +%s) - start )) s"
