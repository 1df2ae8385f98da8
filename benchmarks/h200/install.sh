#!/usr/bin/env bash
# Installs drtriton on the H200 image (Python 3.12, torch/triton preinstalled, no internet).
# The image has the build backend (scikit-build-core, nanobind, pathspec); wheels of other
# versions may travel in .whl/ (see README). A wheel built by an earlier session in
# .whl/drtriton-*.whl is installed as is when its C++ is unchanged: the wheel travels with
# core.sha256, a digest of the sources it was built from, and a different digest (or none)
# rebuilds it (as does REBUILD=1). A stale wheel would run the old teacher under new Python.
set -euo pipefail
backend=(.whl/scikit_build_core-*.whl .whl/nanobind-*.whl .whl/pathspec-*.whl)
if ls "${backend[@]}" >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "${backend[@]}"
    export PYTHONPATH=/tmp/site
fi
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-16}
start=$(date +%s)
digest=$(find core CMakeLists.txt -type f \( -name '*.cc' -o -name '*.h' -o -name '*.txt' \) \
    | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-64)
if [[ -z "${REBUILD:-}" ]] && ls .whl/drtriton-*cp312*.whl >/dev/null 2>&1 \
    && [[ "$(cat .whl/core.sha256 2>/dev/null)" == "$digest" ]]; then
    python3 -m pip install -q --no-deps --force-reinstall .whl/drtriton-*cp312*.whl
else
    python3 -m pip wheel -q --no-build-isolation --no-deps -w /tmp/wheel .
    python3 -m pip install -q --no-deps --force-reinstall /tmp/wheel/drtriton-*.whl
    if [[ -n "${OUT:-}" ]]; then
        cp /tmp/wheel/drtriton-*.whl "$OUT/" && echo "$digest" > "$OUT/core.sha256"
    fi
fi
echo "install: $(( $(date +%s) - start )) s"
