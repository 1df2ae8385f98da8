#!/usr/bin/env bash
# One H200 call of `benchmarks/contraction_speed.py` (issue 19), run from the repository root
# with `.devdata/kernelbench/level{1,2}.jsonl` carried (copies of the dev split; PROBLEMS names
# another folder, whose files may list the problems in the order wanted):
#
#   [REBUILD=1] bash benchmarks/h200/contraction_session.sh OUTDIR BUDGET_S LEVEL [IDS...]
#
# LEVEL 1 or 2; IDS: problem ids (all of the level's contraction problems when none).
# Writes OUTDIR/l<LEVEL>.json after every problem (an interrupted call keeps its rows) and
# prints the table; stops starting work BUDGET_S seconds after it began.  JOBS (default 4)
# verifying processes share the GPU: on 2026-12-02 six ran the 140 GB out of memory on the
# level-1 convolutions, four did not but for one problem (L1 76, 550 GFLOP, run alone then).
set -uo pipefail
outdir=$1 budget=$2 level=$3
shift 3
source benchmarks/h200/prelude.sh "$outdir" "$budget"
ids=()
[[ $# -gt 0 ]] && ids=(--ids "$@")
timeout $(( $(left) - 8 )) python benchmarks/contraction_speed.py --device cuda \
    --problems "${PROBLEMS:-.devdata/kernelbench}" --levels "$level" "${ids[@]}" \
    --jobs "${JOBS:-4}" \
    --out "$outdir/l$level.json" > "$outdir/l$level.log" 2>&1
echo "contraction_speed: rc $? with $(left) s of the budget left"
grep -E "^\| $level " "$outdir/l$level.log" | cut -c1-260
