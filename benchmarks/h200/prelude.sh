# Sourced by the H200 session scripts (run from the repository root), with OUTDIR BUDGET_S as
# their arguments: sets `out`, `budget`, `start` and `left` (seconds of the budget left), the
# environment several verifying processes on one GPU need, installs drtriton and puts this
# tree's Python over the installed extension (a carried wheel may hold older Python).
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
OUT=$out bash benchmarks/h200/install.sh >/dev/null || { echo "install failed" >&2; exit 1; }
# The installed extension, whatever PYTHONPATH the caller exported (this tree's python/ holds
# no extension built for the device's Python, and would hide the installed one).
core=$(cd / && env -u PYTHONPATH python3 -c "import drtriton._core as c; print(c.__file__)") \
    || exit 1
[[ -e python/drtriton/$(basename "$core") ]] || cp "$core" python/drtriton/
export PYTHONPATH=$PWD/python
