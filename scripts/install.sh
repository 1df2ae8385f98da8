#!/usr/bin/env bash
# Installs what drtriton needs on a fresh Debian machine with Python 3.10+:
# the Debian packages of scripts/apt-packages.txt (when run as root), the pinned Python
# packages of requirements.txt, and drtriton itself (the C++ core is compiled here).
set -euo pipefail
cd "$(dirname "$0")/.."

install_debian_packages() {
  command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] || return 0
  local missing=()
  for pkg in $(grep -v '^#' scripts/apt-packages.txt); do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# pip is silent for the minutes the C++ core compiles, and `pip -v` floods the terminal: say
# what is happening, keep the compiler's output in a log, and show its end only on failure.
install_drtriton() {
  mkdir -p build
  local log=build/install.log start=$SECONDS
  echo "building the C++ core and installing drtriton (about 2 minutes; log: $log)..."
  if ! python3 -m pip install -v --disable-pip-version-check --no-build-isolation --no-deps . \
      >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "the build failed; the whole log is $log" >&2
    return 1
  fi
  echo "built and installed in $((SECONDS - start)) s"
}

install_debian_packages
echo "installing the pinned Python packages (requirements.txt)..."
python3 -m pip install -q --disable-pip-version-check -r requirements.txt
install_drtriton
echo "drtriton installed: $(command -v drtriton)"
