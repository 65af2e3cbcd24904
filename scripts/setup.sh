#!/usr/bin/env bash
# Installs everything attn needs from Debian packages and builds it (Release, tuned for this CPU).
# Idempotent and non-interactive. Usage: scripts/setup.sh [--portable] [--debug]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make pkg-config libopenblas-dev libdnnl-dev libsentencepiece-dev
          libgtest-dev zlib1g-dev nlohmann-json3-dev libyaml-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_type=Release; portable=OFF
for a in "$@"; do
  case "$a" in
    --portable) portable=ON ;;
    --debug) build_type=Debug ;;
    *) echo "setup: unknown option $a" >&2; exit 2 ;;
  esac
done
cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" -DATTN_PORTABLE="$portable" >/dev/null
cmake --build build -j"$(nproc)" 2>&1 | grep -E "error|warning|Error" || true
test -x build/attn || { echo "setup: build failed (run: cmake --build build)" >&2; exit 1; }
echo "setup: built build/attn ($build_type, portable=$portable)" >&2
