#!/usr/bin/env bash
# natsserver.sh builds and runs a real NATS server (nats-server, JetStream on) on 127.0.0.1
# for the JetStream tests, the benchmark and examples/jetstream. The Go tests start their
# own servers as processes (internal/natstest), from the binary this script builds.
#
# Usage:
#   scripts/natsserver.sh build   build nats-server once into the cache dir (skipped if present)
#   scripts/natsserver.sh start   start one JetStream node on a free port with a fresh temp
#                                 store dir; prints the client URL as the last line of
#                                 standard output
#   scripts/natsserver.sh stop    SIGKILL the recorded server and remove its store dir
#   scripts/natsserver.sh bin     print the path of the nats-server binary
#
# Environment:
#   FLOWSTATE_NATS_VERSION  nats-server module version (default below)
#   FLOWSTATE_NATS_DIR      where the binary is cached
#                           (default ${XDG_CACHE_HOME:-$HOME/.cache}/flowstate/nats-server-<version>)
#   FLOWSTATE_NATS_PORT     client port (default: a free port picked at start, printed in
#                           the URL; never a fixed one that a user's own server may hold)
#   FLOWSTATE_NATS_STATE    directory for the PID, log and store dir
#                           (default ${TMPDIR:-/tmp}/flowstate-nats)
#
# The server binds to loopback only, has no authentication (a test server), and its
# monitoring port is off. What it shares with scripts/s3server.sh is in scripts/serverlib.sh.
set -euo pipefail

VERSION="${FLOWSTATE_NATS_VERSION:-v2.15.3}"
BIN_DIR="${FLOWSTATE_NATS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/flowstate/nats-server-$VERSION}"
BIN="$BIN_DIR/nats-server"
PORT="${FLOWSTATE_NATS_PORT:-}"
STATE="${FLOWSTATE_NATS_STATE:-${TMPDIR:-/tmp}/flowstate-nats}"
PID_FILE="$STATE/nats-server.pid"
DATA_FILE="$STATE/nats-server.storedir"
LOG_FILE="$STATE/nats-server.log"

log() { echo "natsserver: $*" >&2; }
die() { log "error: $*"; exit 1; }

SERVER=nats-server
DATA_PREFIX="${TMPDIR:-/tmp}/flowstate-nats-data"
# shellcheck source=serverlib.sh
source "$(dirname "$0")/serverlib.sh"

# free_port prints a port nothing listens on, from 20000 to 49999.
free_port() {
	local port i
	for i in $(seq 1 200); do
		port=$((20000 + RANDOM % 30000))
		if ! listening "$port"; then
			echo "$port"
			return 0
		fi
	done
	die "found no free port for the NATS server; set FLOWSTATE_NATS_PORT"
}

cmd_build() {
	if [[ -x "$BIN" ]]; then
		log "nats-server $VERSION already built at $BIN"
		return 0
	fi
	command -v go >/dev/null || die "go is not on PATH"
	mkdir -p "$BIN_DIR"
	log "building github.com/nats-io/nats-server/v2@$VERSION from the Go module proxy (about 30 s on 2 cores with empty caches)"
	# go install into a private directory, then move the binary into place, so that a build
	# interrupted half-way never leaves a binary that looks built; the module is installed
	# outside any module (cd /) so that this repository's go.mod plays no part.
	local tmp
	tmp="$(mktemp -d "$BIN_DIR/build.XXXXXX")"
	(cd / && GOBIN="$tmp" GOFLAGS=-buildvcs=false go install "github.com/nats-io/nats-server/v2@$VERSION") ||
		{ rm -rf "$tmp"; die "go install of nats-server $VERSION failed"; }
	mv "$tmp/nats-server" "$BIN"
	rm -rf "$tmp"
	log "built $BIN"
}

# ready reports whether the server accepts clients: nats-server logs "Server is ready" once
# its client port listens (after JetStream has started, whose line comes before it).
ready() { grep -q "Server is ready" "$LOG_FILE" 2>/dev/null && listening "$PORT"; }

cmd_start() {
	[[ -x "$BIN" ]] || die "nats-server is not built at $BIN; run '$0 build' first"
	begin_start FLOWSTATE_NATS_PORT
	local url="nats://127.0.0.1:$PORT"
	local data="$DATA"
	log "starting nats-server with JetStream on $url (store $data, log $LOG_FILE)"
	setsid "$BIN" -a 127.0.0.1 -p "$PORT" -js -sd "$data" -n "flowstate-$PORT" \
		</dev/null >"$LOG_FILE" 2>&1 &
	local pid=$!
	await_start "$pid" 30 0.1 ready "nats-server at $url was not ready"
	grep -q "Starting JetStream" "$LOG_FILE" || {
		tail -n 20 "$LOG_FILE" >&2
		cmd_stop
		die "nats-server at $url started without JetStream (see $LOG_FILE)"
	}
	log "NATS ready at $url (pid $pid)"
	echo "$url"
}

dispatch "$@"
