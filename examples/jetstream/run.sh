#!/usr/bin/env bash
# examples/jetstream/run.sh: the word count from a JetStream stream to another, killed and
# resumed, its output read back and checked. From the repository's root or anywhere:
#
#   examples/jetstream/run.sh
#
# It builds the runner and plugins (make build) and nats-server (scripts/natsserver.sh,
# cached), starts one JetStream server on a free port of 127.0.0.1, creates the input
# stream wordcount-in (in.0 .. in.3) and the output stream wordcount-out (allow_atomic;
# out.> and flowstate.markers.>), publishes examples/wordcount/input ten times over, one
# message per line, runs the word count (config.yaml beside this script) until its first
# checkpoint completes, kills the runner with kill -9, resumes it with --from latest until
# the bounded source has read everything, and prints the counts read back from the output
# stream with the verdict: exactly one message per word of the input, each word's running
# counts once. The server is stopped when the script ends. Everything it writes goes under
# /tmp/flowstate-examples/jetstream/ (FLOWSTATE_EXAMPLE_DIR to change).
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${FLOWSTATE_EXAMPLE_DIR:-/tmp/flowstate-examples/jetstream}"
config=examples/jetstream/config.yaml
input=examples/wordcount/input/flip-142.txt
repeat=10

say() { echo "== $*" >&2; }
die() { echo "run.sh: error: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
make --no-print-directory build >&2
./scripts/natsserver.sh build
export FLOWSTATE_NATS_STATE="$work/nats"
runner_pid=""
cleanup() {
	if [[ -n "$runner_pid" ]]; then kill -9 "$runner_pid" 2>/dev/null || true; fi
	./scripts/natsserver.sh stop 2>/dev/null || true
}
trap cleanup EXIT
url="$(./scripts/natsserver.sh start | tail -n 1)"
say "nats-server with JetStream at $url"

go build -o "$work/streams" ./examples/jetstream/streams
"$work/streams" create -server "$url"
"$work/streams" publish -server "$url" -repeat "$repeat" "$input"

# The checkpoints go where config.yaml says, unless the example's directory was moved.
dirs=(-D "nats.servers=$url" -D "execution.checkpointing.dir=$work/checkpoints")

say "run 1: the word count, killed with kill -9 after its first checkpoint"
bin/runner run --config "$config" "${dirs[@]}" >"$work/run1.log" 2>&1 &
runner_pid=$!
deadline=$((SECONDS + 60))
until grep -q "checkpoint complete" "$work/run1.log"; do
	if ! kill -0 "$runner_pid" 2>/dev/null; then
		cat "$work/run1.log" >&2
		die "the runner ended before its first checkpoint (log above: $work/run1.log)"
	fi
	((SECONDS < deadline)) || die "no checkpoint within 60 s (see $work/run1.log)"
	sleep 0.1
done
kill -9 "$runner_pid"
wait "$runner_pid" 2>/dev/null || true
runner_pid=""
say "killed the runner; its log: $work/run1.log"

say "run 2: resumed from the latest checkpoint, to the end of the input stream"
bin/runner run --config "$config" "${dirs[@]}" --from latest >"$work/run2.log" 2>&1 ||
	{ cat "$work/run2.log" >&2; die "the resumed run failed (log above: $work/run2.log)"; }
say "the resumed run ended; its log: $work/run2.log"

say "word counts read back from stream wordcount-out (subject out.>)"
"$work/streams" count -server "$url" -repeat "$repeat" "$input"
