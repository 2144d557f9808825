#!/usr/bin/env bash
# with-nats.sh CMD...: run CMD with FLOWSTATE_NATS_SERVER set to the path of a real
# nats-server binary, built once (cached) by scripts/natsserver.sh build. It starts no
# server: the JetStream tests start their own as processes (internal/natstest), so they
# can kill, freeze and restart them. If FLOWSTATE_NATS_SERVER is already set, CMD just runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ -n "${FLOWSTATE_NATS_SERVER:-}" ]]; then
	exec "$@"
fi
"$here/natsserver.sh" build
FLOWSTATE_NATS_SERVER="$("$here/natsserver.sh" bin)"
export FLOWSTATE_NATS_SERVER
echo "with-nats: nats-server at $FLOWSTATE_NATS_SERVER" >&2
exec "$@"
