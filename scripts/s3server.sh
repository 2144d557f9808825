#!/usr/bin/env bash
# s3server.sh builds and runs a real S3-compatible server (SeaweedFS) on 127.0.0.1
# for the S3 checkpoint-storage tests. See ../shared/reference/s3-testing.md.
#
# Usage:
#   scripts/s3server.sh build   build weed once into the cache dir (skipped if present)
#   scripts/s3server.sh start   start on a fresh temp data dir; prints the endpoint URL
#                               as the last line of standard output
#   scripts/s3server.sh stop    SIGKILL the recorded server and remove its data dir
#   scripts/s3server.sh bin     print the path of the weed binary
#
# Environment:
#   FLOWSTATE_WEED_VERSION  SeaweedFS module version (default below)
#   FLOWSTATE_WEED_DIR      where the binary is cached
#                           (default ${XDG_CACHE_HOME:-$HOME/.cache}/flowstate/weed-<version>)
#   FLOWSTATE_S3_PORT       S3 port (default: a free port picked at start, printed in the
#                           endpoint URL; never a fixed one that a user's own server may hold)
#   FLOWSTATE_S3_STATE      directory for the PID, log and data dir (default ${TMPDIR:-/tmp}/flowstate-s3)
#
# Credentials are fixed test values: testkey / testsecret12345. The server binds to
# loopback only, has telemetry, the admin UI, WebDAV, Iceberg and Lance ports off, and does
# not create buckets on upload (as AWS: a missing bucket is an error). Every bucket is a
# collection with volumes of its own, and by default weed mini allows free disk / volume
# size of them: with 12 GB free, writes into the tenth bucket failed with HTTP 500 ("failed
# to find writable volumes"). The tests make a bucket per run, so the volume count and
# size are set (volumes are sparse files: they take the disk their data takes).
set -euo pipefail

VERSION="${FLOWSTATE_WEED_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
BIN_DIR="${FLOWSTATE_WEED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/flowstate/weed-$VERSION}"
BIN="$BIN_DIR/weed"
PORT="${FLOWSTATE_S3_PORT:-}"
STATE="${FLOWSTATE_S3_STATE:-${TMPDIR:-/tmp}/flowstate-s3}"
PID_FILE="$STATE/weed.pid"
DATA_FILE="$STATE/weed.datadir"
LOG_FILE="$STATE/weed.log"
ACCESS_KEY=testkey
SECRET_KEY=testsecret12345
ENDPOINT=""

log() { echo "s3server: $*" >&2; }
die() { log "error: $*"; exit 1; }

SERVER=weed
DATA_PREFIX="${TMPDIR:-/tmp}/flowstate-s3-data"
# shellcheck source=serverlib.sh
source "$(dirname "$0")/serverlib.sh"

# free_port prints a port nothing listens on, nor on the port weed derives from it for
# gRPC (port + 10000), from 20000 to 49999.
free_port() {
	local port i
	for i in $(seq 1 200); do
		port=$((20000 + RANDOM % 30000))
		if ! listening "$port" && ! listening $((port + 10000)); then
			echo "$port"
			return 0
		fi
	done
	die "found no free port for the S3 server; set FLOWSTATE_S3_PORT"
}

cmd_build() {
	if [[ -x "$BIN" ]]; then
		log "weed $VERSION already built at $BIN"
		return 0
	fi
	command -v go >/dev/null || die "go is not on PATH"
	log "downloading github.com/seaweedfs/seaweedfs@$VERSION from the Go module proxy"
	# Download exactly this module (never a bare 'go mod download' inside it: 3.5 GB).
	local dir
	dir="$(cd / && go mod download -json "github.com/seaweedfs/seaweedfs@$VERSION" |
		sed -n 's/^[[:space:]]*"Dir":[[:space:]]*"\(.*\)",*$/\1/p')"
	[[ -n "$dir" && -d "$dir/weed" ]] || die "module download did not yield a weed/ directory (got '$dir')"
	mkdir -p "$BIN_DIR"
	log "building weed in $dir/weed (about 5-6 minutes on 2 cores with empty caches)"
	local tmp="$BIN.tmp.$$"
	(cd "$dir/weed" && GOFLAGS=-buildvcs=false go build -ldflags "-s -w" -o "$tmp" .) ||
		{ rm -f "$tmp"; die "go build of weed failed"; }
	mv "$tmp" "$BIN"
	log "built $BIN"
}

# s3_ready reports whether an authenticated S3 ListBuckets call succeeds.
s3_ready() {
	# curl's --aws-sigv4 signs the request like an S3 client would; a 200 on GET /
	# means the S3 gateway, filer and IAM are all up.
	local code
	code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
		--aws-sigv4 "aws:amz:us-east-1:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
		"$ENDPOINT/" 2>/dev/null)" || return 1
	[[ "$code" == 200 ]]
}

cmd_start() {
	[[ -x "$BIN" ]] || die "weed is not built at $BIN; run '$0 build' first"
	command -v curl >/dev/null || die "curl is not on PATH (needed to probe the S3 endpoint)"
	begin_start FLOWSTATE_S3_PORT
	ENDPOINT="http://127.0.0.1:$PORT"
	local data="$DATA"
	log "starting weed mini on $ENDPOINT (data $data, log $LOG_FILE)"
	AWS_ACCESS_KEY_ID="$ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$SECRET_KEY" \
		setsid "$BIN" mini -dir="$data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
		-master.telemetry=false -admin.ui=false -webdav=false \
		-s3.port="$PORT" -s3.port.iceberg=0 -s3.port.lance=0 -s3.autoCreateBucket=false \
		-volume.max=300 -master.volumeSizeLimitMB=64 \
		</dev/null >"$LOG_FILE" 2>&1 &
	local pid=$!
	await_start "$pid" 60 0.5 s3_ready "S3 endpoint $ENDPOINT did not answer a signed ListBuckets"
	log "S3 ready at $ENDPOINT (pid $pid)"
	echo "$ENDPOINT"
}

dispatch "$@"
