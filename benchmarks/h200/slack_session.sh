#!/usr/bin/env bash
# The launch slack's effect on timing noise, A/B in one H200 call (run from the repository root):
#   1. drtriton verify-batch over the lines of PAIRS (default .devdata/noise/subset.jsonl, carry
#      .devdata) whose id matches KERNELS (default the two (a) kernels under 0.1 ms), once per
#      slack in SLACKS (default "0 500" us: the flush alone, then the default), WORKERS (6)
#      processes; each kernel's spread over its repeats (benchmarks/noise_spread.py);
#   2. timing_noise.py part b (one-operator kernels against their operator) at the default slack;
#   3. benchmarks/drop_in.py --device cuda --keep-slower (issue 22's check on the GPU).
# Usage: bash benchmarks/h200/slack_session.sh OUTDIR BUDGET_S
source "$(dirname "$0")/prelude.sh" "$@"

grep -E "\"id\": \"(${KERNELS:-L1_41|L1_35})" "${PAIRS:-.devdata/noise/subset.jsonl}" >"$out/pairs.jsonl"
echo "$(wc -l <"$out/pairs.jsonl") pairs"
for slack in ${SLACKS:-0 500}; do
    echo "== slack $slack us at $(( $(date +%s) - start )) s"
    timeout "${BATCH_S:-100}" python3 -m drtriton verify-batch "$out/pairs.jsonl" \
        --out "$out/noise_slack$slack.jsonl" --workers "${WORKERS:-6}" --device cuda \
        --launch-slack-us "$slack" --quiet 2>&1 | tail -1
    python3 benchmarks/noise_spread.py "$out/noise_slack$slack.jsonl"
done
echo "== timing_noise part b at $(( $(date +%s) - start )) s"
timeout "${B_S:-150}" python3 benchmarks/timing_noise.py --device cuda --parts b \
    --out "$out/noise_b.json" 2>&1 | tail -12
echo "== drop_in.py at $(( $(date +%s) - start )) s"
timeout $(( $(left) - 10 )) python3 benchmarks/drop_in.py --device cuda --keep-slower \
    --out "$out/drop_in.json" 2>/dev/null | tail -22
echo "session: $(( $(date +%s) - start )) s"
