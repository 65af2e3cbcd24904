#!/usr/bin/env bash
# The long kill test: a small training run killed with SIGKILL at 20 random moments (start-up,
# steps, checkpoint saves, validations), resumed with --resume after each; the finished run's
# weights and Adam moments must equal an uninterrupted run's bit for bit. ctest runs the same test
# with 4 kills. Usage: scripts/kill_test.sh [KILLS] [SEED]   (build first: cmake --build build)
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${1:-20}
seed=${2:-$(date +%s)}
[ -x build/test_train ] || { echo "build/test_train is missing: build the project first" >&2; exit 1; }
echo "kill test: $kills kills, seed $seed"
ATTN_KILLS=$kills ATTN_KILL_SEED=$seed OMP_WAIT_POLICY=passive \
  build/test_train --gtest_filter='KillTest.*'
