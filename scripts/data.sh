#!/usr/bin/env bash
# Unpacks the shipped English->German corpus into data/mt-ende/ (once).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -s data/mt-ende/train.en ]; then
  mkdir -p data/mt-ende
  tar -xJf data/mt-ende.tar.xz -C data/mt-ende
  echo "data: unpacked data/mt-ende ($(wc -l < data/mt-ende/train.en) training pairs)" >&2
fi
