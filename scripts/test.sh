#!/usr/bin/env bash
# Installs everything, then runs every test: the C++ unit tests through CTest (a sanitized
# Debug build), lint, and the Python tests through pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build/test "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DDRTRITON_SANITIZE=ON \
  -DDRTRITON_BUILD_PYTHON=OFF -DDRTRITON_BUILD_TESTS=ON >/dev/null
cmake --build build/test -j "$(nproc)"
ctest --test-dir build/test --output-on-failure -j "$(nproc)"

python3 -m ruff check python tests benchmarks examples
python3 -m ruff format --check python tests benchmarks examples
# One test process per core (pytest-xdist); the slowest tests are listed, for the next trim.
python3 -m pytest -q -n auto --durations=15 tests
