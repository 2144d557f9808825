#!/usr/bin/env bash
# test-busy.sh [RUNS]: run `make test` RUNS times in a row (default 3) while two CPU-bound
# processes run alongside, as on a busy build machine. Stops at the first failure. The
# hogs are plain shell loops, so nothing needs installing; they are killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
hogs=()
cleanup() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for _ in 1 2; do
	(while :; do :; done) &
	hogs+=("$!")
done
echo "test-busy: two CPU hogs running (pids ${hogs[*]}); load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for i in $(seq 1 "$runs"); do
	start=$SECONDS
	echo "test-busy: run $i of $runs" >&2
	if ! make --no-print-directory test; then
		echo "test-busy: run $i of $runs FAILED after $((SECONDS - start)) s" >&2
		exit 1
	fi
	echo "test-busy: run $i of $runs passed in $((SECONDS - start)) s; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
echo "test-busy: $runs runs passed" >&2
