import sys, json
sys.path.insert(0, "benchmarks")
import variant_probe as vp
from memory_bound_speed import classify, load_problems
from drtriton.teach import emit
from drtriton.verify.measure import time_tasks
import pathlib
rec = load_problems(pathlib.Path(".devdata/kb_c3/level2.jsonl"), [int(sys.argv[1])], None)[0]
program = classify(rec["code"], training=True)["program"]
cand = emit(program)
strip = "\n".join(l for l in cand.split("\n") if not l.lstrip().startswith(("cs_", "tl.store(t3_colstats", "tl.store(t1_colstats")))
assert strip != cand
tasks = [vp.as_task(cand, program), vp.as_task(strip, program)]
dev = sys.argv[2] if len(sys.argv) > 2 else "cuda"
if dev == "cpu":
    print("ok", len(cand), len(strip)); sys.exit(0)
t = time_tasks(tasks, dev, runs=10, precision="bf16")
print(json.dumps({"with_stats_ms": t[0]["median"], "stats_lines_removed_ms": t[1]["median"]}))
