#!/usr/bin/env bash
# The closing measurements of the open issues in one H200 call (run from the repository root):
# the steps named in STEPS (default "noise_b drop_in eval"), in order, each given what is left.
#   noise_b  benchmarks/timing_noise.py --parts b: one operator's work against that operator and
#            the A/A rows (the task launches the candidate's own kernel), issue 18's (b)
#   noise_a  benchmarks/timing_noise.py --parts a: twelve teacher kernels of 10 us - 10 ms, each
#            verified 5 times by 6 processes sharing the GPU (issue 18's (a)); NOISE_A_S caps
#            it (default 300 s)
#   probe    benchmarks/split_rows_probe.py: L1 40's split layer norm written out by hand at
#            several splits, beside the teacher's own kernels (each launch also timed alone)
#   placement benchmarks/placement_probe.py: a 4 us kernel's time against where its 1 MB
#            tensors lie and which process times it (the lead for the 1 MB A/A rows)
#   ipc      benchmarks/ipc_probe.py: whether a sandboxed worker's GPU output reaches the harness
#            by CUDA IPC (torch's or a plain cudaMalloc copy's) instead of the host and a file
#   memory   benchmarks/memory_bound_speed.py over level 1's memory-bound problems (issue 20's
#            table): MB_JOBS at once (default 2), MB_TRIALS correctness sets (default 2),
#            events only; MB_IDS picks problems; MB_PREVIOUS (an earlier call's
#            memory_bound.json) is resumed: only the problems it lacks are measured
#   variants benchmarks/variant_probe.py: every schedule variant of the teacher's kernel for the
#            level-1 problems VARIANT_IDS (default "34"), beside eager and torch.compile;
#            VARIANTS_S caps it (default 240 s)
#   gemm     benchmarks/gemm_variants.py: three Triton GEMM schedules (the teacher's tile,
#            persistent, persistent with TMA) against cuBLAS in bf16 at level 2's linear shapes
#   drop_in  benchmarks/drop_in.py --keep-slower: ModelNew against Model for three models at
#            three batch sizes, eval and train (issue 22's figure on the GPU); DROP_IN_MODELS
#            picks some (e.g. "attention"), DROP_IN_S caps it (default 200 s)
#   eval     benchmarks/kernelbench_eval.sh over .devdata/kernelbench (carry it: copy
#            ../shared/kernelbench/level*.jsonl there) with FILL=1 until the budget ends;
#            LEVELS (default 1), PRECISION (default fp32), WORKERS (default 6), PREVIOUS (a folder
#            with an earlier call's results.jsonl, resumed), PROBLEM_TIMEOUT (default 240)
# Everything lands in OUTDIR (the device tool brings back 8 files: name the steps to fit): the wheel the
# prelude built (carry it back in .whl/ to skip the build), noise_b.json, drop_in.json,
# memory_bound.json, gemm.json, noise_a.json, variants.json and eval/{results.jsonl,summary.md,logs.tgz}.
# Usage: STEPS="noise_b eval" bash benchmarks/h200/issues_session.sh OUTDIR BUDGET_S
source "$(dirname "$0")/prelude.sh" "$@"

for step in ${STEPS-noise_b drop_in eval}; do
    echo "== $step at $(( $(date +%s) - start )) s"
    case $step in
    noise_b)
        timeout $(( $(left) - 15 )) python3 benchmarks/timing_noise.py --device cuda --parts b \
            --out "$out/noise_b.json" 2>&1 | grep -v "^fairness" | tail -20 ;;
    noise_a)
        timeout "${NOISE_A_S:-300}" python3 benchmarks/timing_noise.py --device cuda --parts a \
            --kernelbench .devdata/kernelbench --workers 6 --repeats 5 \
            --out "$out/noise_a.json" 2>&1 | grep -v -i "warn\|verify:" | tail -20 ;;
    probe)
        timeout 150 python3 benchmarks/split_rows_probe.py --device cuda 2>&1 \
            | grep -v Warning | tail -30 ;;
    placement)
        timeout $(( $(left) - 15 )) python3 benchmarks/placement_probe.py --calls 300 \
            --processes 2 2>&1 | tail -40 ;;
    ipc)
        timeout 120 python3 benchmarks/ipc_probe.py --gb 1 4 2>&1 | tail -8 ;;
    memory)
        [[ -n "${MB_PREVIOUS:-}" ]] && cp "$MB_PREVIOUS" "$out/memory_bound.json"
        timeout $(( $(left) - 15 )) python3 benchmarks/memory_bound_speed.py --device cuda \
            --problems .devdata/kernelbench/level1.jsonl --jobs "${MB_JOBS:-2}" \
            --trials "${MB_TRIALS:-2}" --no-graph ${MB_IDS:+--ids $MB_IDS} ${MB_PREVIOUS:+--resume} \
            --out "$out/memory_bound.json" 2>&1 | grep -v Warning | tail -60 ;;
    variants)
        timeout "${VARIANTS_S:-240}" python3 benchmarks/variant_probe.py --device cuda \
            --ids ${VARIANT_IDS:-34} --out "$out/variants.json" 2>&1 | grep -v -i warn | tail -30 ;;
    gemm)
        timeout $(( $(left) - 15 )) python3 benchmarks/gemm_variants.py --device cuda \
            --out "$out/gemm.json" 2>&1 | tail -20 ;;
    drop_in)
        timeout "${DROP_IN_S:-200}" python3 benchmarks/drop_in.py --device cuda --keep-slower \
            ${DROP_IN_MODELS:+--models "$DROP_IN_MODELS"} --out "$out/drop_in.json" 2>/dev/null | tail -24 ;;
    eval)
        # The evaluation's own folder stays on the machine (kernels/ and logs/ hold a file per
        # problem); what comes back is copied out of it.
        FILL=1 SKIP_INSTALL=1 LEVELS=${LEVELS:-1} WORKERS=${WORKERS:-6} \
            bash benchmarks/kernelbench_eval.sh .devdata/kernelbench /tmp/eval $(( $(left) - 10 )) \
            --precision "${PRECISION:-fp32}" 2>&1 | tail -30
        mkdir -p "$out/eval"
        cp /tmp/eval/results.jsonl /tmp/eval/summary.md /tmp/eval/logs.tgz "$out/eval/" 2>/dev/null ;;
    *) echo "unknown step: $step" >&2 ;;
    esac
done
echo "session: $(( $(date +%s) - start )) s"
