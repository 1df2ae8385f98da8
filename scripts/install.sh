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

install_debian_packages
python3 -m pip install -q --disable-pip-version-check -r requirements.txt
python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
echo "drtriton installed: $(command -v drtriton)"
