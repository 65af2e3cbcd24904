#!/usr/bin/env bash
# Installs everything attn needs from Debian packages and builds it (Release, tuned for this CPU).
# Idempotent and non-interactive. Usage: scripts/setup.sh [--portable] [--debug] [--fuzz] [--bench] [--reference] [--sanitize]
# --fuzz also builds the libFuzzer targets with clang, ASan and UBSan in build-asan/ (the suite's
# fuzz.smoke runs them for a minute; the README's test command asks for it). --sanitize builds all
# of build-asan/ and runs the unit suite there (scripts/sanitize.sh).
# --bench also installs what bench/compare.py runs beside attn: Debian's python3-torch and
# python3-numpy (python3-sentencepiece: bench/torch_translation_twin.py), and CTranslate2 from PyPI
# in a venv (ATTN_CT2_VENV, default /work/venv-ct2).
# --reference makes the venv of the toolkits attn's import tests compare with (ATTN_REF_VENV,
# default /work/venv-ref): scripts/reference-requirements.txt (transformers, ctranslate2,
# sacrebleu, pinned) from PyPI over Debian's python3-torch (tests/models/hf_marian_test.py).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make pkg-config libopenblas-dev libdnnl-dev libsentencepiece-dev
          libgtest-dev zlib1g-dev nlohmann-json3-dev libyaml-dev libcli11-dev
          libcpp-httplib-dev  # attn serve's HTTP server
          libopenmpi-dev openmpi-bin  # attn train under mpirun (docs/distributed.md)
          pybind11-dev python3-dev python3-numpy python3-pytest  # the Python module (python/) and its tests
          chromium fonts-dejavu-core python3)  # chromium: the attend and serve pages' browser tests
bench=0; sanitize=0; fuzz=0; reference=0
for a in "$@"; do
  [ "$a" = --bench ] && bench=1
  [ "$a" = --sanitize ] && sanitize=1
  [ "$a" = --fuzz ] && fuzz=1
  [ "$a" = --reference ] && reference=1
done
[ $fuzz = 1 ] || [ $sanitize = 1 ] && packages+=(clang libclang-rt-14-dev libomp-14-dev)
[ $bench = 1 ] || [ $reference = 1 ] && packages+=(python3-torch python3-numpy python3-sentencepiece python3-venv python3-pip)
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
    --bench|--sanitize|--fuzz|--reference) ;;
    *) echo "setup: unknown option $a" >&2; exit 2 ;;
  esac
done
cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" -DATTN_PORTABLE="$portable" >/dev/null
cmake --build build -j"$(nproc)" 2>&1 | grep -E "error|warning|Error" || true
test -x build/attn || { echo "setup: build failed (run: cmake --build build)" >&2; exit 1; }
echo "setup: built build/attn ($build_type, portable=$portable)" >&2
if [ $fuzz = 1 ]; then  # the libFuzzer targets that the suite's fuzz.smoke runs
  scripts/fuzz.sh --build-only 2>&1 | grep -E "error|Error" || true
  test -x build-asan/fuzz/fuzz_ids || { echo "setup: the fuzzers did not build (run: scripts/fuzz.sh --build-only)" >&2; exit 1; }
  echo "setup: built the fuzzers in build-asan/" >&2
fi
if [ $bench = 1 ]; then
  venv="${ATTN_CT2_VENV:-/work/venv-ct2}"
  if ! "$venv/bin/python" -c "import ctranslate2" 2>/dev/null; then
    /usr/bin/python3 -m venv --system-site-packages "$venv"
    "$venv/bin/pip" install -q ctranslate2 sacrebleu
  fi
  echo "setup: bench ready (python3-torch; CTranslate2 $("$venv/bin/python" -c 'import ctranslate2; print(ctranslate2.__version__)') in $venv)" >&2
fi
if [ $reference = 1 ]; then
  venv="${ATTN_REF_VENV:-/work/venv-ref}"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
  # pip installs only what is missing or at another version
  "$venv/bin/pip" install -q --disable-pip-version-check -r scripts/reference-requirements.txt
  echo "setup: reference venv ready in $venv (transformers $("$venv/bin/python" -c 'import transformers; print(transformers.__version__)' 2>/dev/null))" >&2
fi
if [ $sanitize = 1 ]; then
  scripts/sanitize.sh
fi
