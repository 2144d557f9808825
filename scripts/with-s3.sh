#!/usr/bin/env bash
# with-s3.sh CMD...: run CMD with a real S3-compatible server (SeaweedFS, built once by
# scripts/s3server.sh) on 127.0.0.1, on FLOWSTATE_S3_PORT or else a free port, with
# FLOWSTATE_S3_ENDPOINT and FLOWSTATE_S3_PORT exported for CMD; the server is stopped when
# CMD ends. If FLOWSTATE_S3_ENDPOINT is already set, CMD just runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ -n "${FLOWSTATE_S3_ENDPOINT:-}" ]]; then
	exec "$@"
fi
"$here/s3server.sh" build
FLOWSTATE_S3_STATE="$(mktemp -d "${TMPDIR:-/tmp}/flowstate-s3.XXXXXX")"
export FLOWSTATE_S3_STATE
trap '"$here/s3server.sh" stop || true; rm -rf "$FLOWSTATE_S3_STATE"' EXIT
FLOWSTATE_S3_ENDPOINT="$("$here/s3server.sh" start | tail -n 1)"
FLOWSTATE_S3_PORT="${FLOWSTATE_S3_ENDPOINT##*:}" # a free one unless it was set
export FLOWSTATE_S3_ENDPOINT FLOWSTATE_S3_PORT
echo "with-s3: S3 server at $FLOWSTATE_S3_ENDPOINT" >&2
"$@"
