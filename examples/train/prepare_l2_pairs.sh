#!/usr/bin/env bash
# Level-2 teacher pairs for SFT: two-operator chains, verified, shape-generic (as the level-1
# pairs of prepare_data.sh). An augmentation that departs from the paper, whose SFT data is
# level 1 only: a model trained from scratch on level 1 alone composes nothing (held-out level-2
# pass@1 0/12 in every 2026-11-30 run; half its answers launched a kernel of another name), so
# level-2 RL rollouts were all wrong and gave DRPO no signal. `L2_PAIRS=1 h200_recipe.sh` adds
# these pairs to SFT; they need a longer run than one 10-minute device call (see its header).
# Programs come from their own synthesis seed; any whose source is also in the held-out, RL or
# level-1 SFT files is dropped. ~11 minutes for 640 programs on 2 cores.
# Usage: examples/train/prepare_l2_pairs.sh [DATADIR] [N]   (repository root, drtriton installed)
set -euo pipefail
data=${1:-examples/train/data}
n=${2:-640}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$py -m drtriton synth --n "$n" --levels 2 --preset tiny --seed 3 --dim-min "${DIM_MIN:-2}" \
    --out "$tmp/programs.jsonl" --force --no-progress
$py -m drtriton teach "$tmp/programs.jsonl" --out "$tmp/pairs.jsonl" --generic-shapes --verify \
    --workers "${WORKERS:-2}" --no-progress
$py - "$data" "$tmp/pairs.jsonl" <<'PY'
import json, sys
from pathlib import Path

data, pairs = Path(sys.argv[1]), Path(sys.argv[2])
read = lambda p: [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
seen = {r["source"] for name in ("heldout.jsonl", "rl_programs.jsonl", "sft_pairs.jsonl")
        for r in read(data / name)}
kept = []
for r in read(pairs):
    if r.get("correct") and r["source"] not in seen:
        seen.add(r["source"])
        kept.append(r)
out = data / "sft_pairs_l2.jsonl"
out.write_text("".join(json.dumps(r) + "\n" for r in kept))
print(json.dumps({"level2_pairs": len(kept), "teacher_answers": len(read(pairs))}))
PY
