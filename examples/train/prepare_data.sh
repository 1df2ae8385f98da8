#!/usr/bin/env bash
# CPU side of the H200 recipe (h200_recipe.sh): everything that needs Gecode (synthesis) or is
# slow to verify is done here, once, and shipped as small files in examples/train/data/.
#   sft_pairs.jsonl  verified level-1 teacher pairs for every catalog operator (`drtriton sft-data`)
#   rl_programs.jsonl  curriculum programs, levels 1-2 (RL prompts)
#   heldout.jsonl      held-out programs, levels 1-2, disjoint (by source) from both files above
# All with `--preset tiny`: small shapes, so that the GPU verifies rollouts fast.
# The teacher's answers are shape-generic (`--generic-shapes`: sizes read at run time, one text
# per operator chain and rank), so a small model learns a template per operator instead of the
# arithmetic of every program's sizes (with specialized answers a 26M model scored 0 held-out;
# GENERIC=0 gives the specialized answers). Every dim is >= 2 (DIM_MIN, default 2): the generic
# answers keep unit dims as broadcast structure (asserted sizes), which would make one operator's
# answers differ by where the program happens to have a 1.
# Usage: examples/train/prepare_data.sh [DATADIR] [PER_OP] [RL_N] [HELDOUT_PER_LEVEL]
# (run from the repository root with drtriton installed, or with PYTHON="env PYTHONPATH=python python")
set -euo pipefail
data=${1:-examples/train/data}
per_op=${2:-32}
rl_n=${3:-600}
heldout=${4:-64}
py=${PYTHON:-python3}
dim_min=${DIM_MIN:-2}
mkdir -p "$data"

# 1. Verified teacher pairs, level 1, every operator (appends: start from a clean file).
rm -f "$data/sft_pairs.jsonl"
$py -m drtriton sft-data --out "$data/sft_pairs.jsonl" --per-op "$per_op" --preset tiny \
    --seed 0 --workers "${WORKERS:-2}" --dim-min "$dim_min" \
    $([[ "${GENERIC:-1}" == 1 ]] && echo --generic-shapes) > "$data/sft_summary.json"

# 2. RL prompts and a held-out pool, levels 1-2, from other synthesis seeds.
$py -m drtriton synth --n "$rl_n" --levels 1-2 --preset tiny --seed 1 --dim-min "$dim_min" \
    --out "$data/rl_programs.jsonl" --force --no-progress
$py -m drtriton synth --n $((heldout * 4)) --levels 1-2 --preset tiny --seed 2 --dim-min "$dim_min" \
    --out "$data/heldout_pool.jsonl" --force --no-progress

# 3. Held-out = pool minus anything whose source is in the SFT or RL files, k per level.
$py - "$data" "$heldout" <<'EOF'
import json, sys
from pathlib import Path

data, k = Path(sys.argv[1]), int(sys.argv[2])
read = lambda p: [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
seen = {r["source"] for name in ("sft_pairs.jsonl", "rl_programs.jsonl") for r in read(data / name)}
kept, per_level = [], {}
for r in read(data / "heldout_pool.jsonl"):
    if r["source"] in seen or per_level.get(r["level"], 0) >= k:
        continue
    seen.add(r["source"])
    per_level[r["level"]] = per_level.get(r["level"], 0) + 1
    kept.append(r)
(data / "heldout.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
(data / "heldout_pool.jsonl").unlink()
print(json.dumps({"heldout_per_level": per_level}))
EOF
wc -lc "$data"/*.jsonl
