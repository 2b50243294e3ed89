#!/usr/bin/env bash
# Regenerates everything in results/reliability/, one part after another (each writes its file):
#   fuzz.md         bash scripts/fuzz.sh                  every fuzz target under ASan+UBSan
#   tsan.md         bash scripts/tsan.sh                  live and threaded tests under TSan
#   server-load.md  bash scripts/server-load.sh           serve under wrk, 256 connections
#   abuse.md        bash scripts/abuse.sh                 serve against abusive clients
# Run it on an otherwise idle machine. Exits 1 if any part failed (after running the others).
# Usage: bash scripts/reliability.sh [--fuzz-max-time S]   (default 600 s per fuzz target)
set -uo pipefail
cd "$(dirname "$0")/.."
fuzz_max_time=600
while [ $# -gt 0 ]; do
  case "$1" in
    --fuzz-max-time) fuzz_max_time="$2"; shift 2 ;;
    *) echo "usage: $0 [--fuzz-max-time S]" >&2; exit 2 ;;
  esac
done
cmake --preset default >/dev/null && cmake --build --preset default || exit 1
failed=()
run() { echo "reliability: $*" >&2; "$@" || failed+=("$*"); }
run bash scripts/fuzz.sh --max-time "$fuzz_max_time" --parallel "$(nproc)"
run bash scripts/tsan.sh
run bash scripts/server-load.sh
run bash scripts/abuse.sh
if [ ${#failed[@]} -gt 0 ]; then
  printf 'reliability: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "reliability: results/reliability/ regenerated" >&2
