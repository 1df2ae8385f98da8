#!/usr/bin/env bash
# RL prompts and held-out programs for levels 1-5 (issue 23: the curriculum goes to level 5,
# and pass@1 is measured on 64 held-out programs per level). Synthesis only (no verification),
# tiny preset, dims >= 2 as prepare_data.sh; one synthesis seed per level (41-45), 400
# programs each. Every program whose source is in any SFT file of DATADIR (the level-1 pairs,
# the level-2 chains, the level 1-3 pairs) is dropped; then HELDOUT per level go to
# heldout_l1-5.jsonl and up to RL_N per level to rl_programs_l1-5.jsonl, disjoint by source.
# ~1 minute on 2 cores.
# Usage: examples/train/prepare_l1-5.sh [DATADIR] [RL_N] [HELDOUT]   (repository root)
set -euo pipefail
data=${1:-examples/train/data}
rl_n=${2:-300}
heldout=${3:-64}
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for level in 1 2 3 4 5; do
    $py -m drtriton synth --n 400 --levels "$level" --preset tiny --seed $((40 + level)) \
        --dim-min "${DIM_MIN:-2}" --out "$tmp/level$level.jsonl" --force --no-progress
done
$py - "$data" "$tmp" "$rl_n" "$heldout" <<'PY'
import json, sys
from pathlib import Path

from drtriton.jsonl import read_jsonl

data, tmp, rl_n, k = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
trained = {
    r["source"]
    for name in ("sft_pairs.jsonl", "sft_pairs_l2.jsonl", "sft_pairs_l1-3.jsonl.xz")
    if (data / name).exists()
    for r in read_jsonl(data / name)
}
rl, held, seen = [], [], set(trained)
for level in range(1, 6):
    fresh = []
    for r in read_jsonl(tmp / f"level{level}.jsonl"):
        if r["source"] not in seen:
            seen.add(r["source"])
            fresh.append(r)
    held += fresh[:k]
    rl += fresh[k : k + rl_n]
for name, rows in (("heldout_l1-5.jsonl", held), ("rl_programs_l1-5.jsonl", rl)):
    path = data / name
    partial = path.with_suffix(".partial")
    partial.write_text("".join(json.dumps(r) + "\n" for r in rows))
    partial.replace(path)
count = lambda rows: {lv: sum(r["level"] == lv for r in rows) for lv in range(1, 6)}
print(json.dumps({"heldout_per_level": count(held), "rl_per_level": count(rl)}))
PY
