# serverlib.sh: what scripts/s3server.sh and scripts/natsserver.sh share, sourced by both.
# A script sets SERVER (its server's name for messages), PID_FILE and DATA_FILE (where the
# running server's PID and data dir are recorded), DATA_PREFIX (the mktemp prefix of its
# data dirs, the only dirs stop removes) and BIN, defines log, cmd_build and cmd_start,
# and ends with: dispatch "$@".

# listening reports whether something accepts connections on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# running_pid prints the PID recorded in PID_FILE if that process is alive.
running_pid() {
	[[ -f "$PID_FILE" ]] || return 1
	local pid
	pid="$(cat "$PID_FILE")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# cmd_stop SIGKILLs the recorded server, waits for it to go, and removes its data dir.
cmd_stop() {
	if pid="$(running_pid)"; then
		kill -KILL "$pid" 2>/dev/null || true
		# Wait for the process to go away so the port is free for the next start.
		local deadline=$((SECONDS + 10))
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
		log "stopped $SERVER (pid $pid)"
	else
		log "no running server recorded in $PID_FILE"
	fi
	rm -f "$PID_FILE"
	if [[ -f "$DATA_FILE" ]]; then
		local data
		data="$(cat "$DATA_FILE")"
		case "$data" in
		"$DATA_PREFIX".*) rm -rf -- "$data" ;;
		esac
		rm -f "$DATA_FILE"
	fi
}

# dispatch runs the command $1 names.
dispatch() {
	case "${1:-}" in
	build) cmd_build ;;
	start) cmd_start ;;
	stop) cmd_stop ;;
	bin) echo "$BIN" ;;
	*)
		echo "usage: $0 {build|start|stop|bin}" >&2
		exit 2
		;;
	esac
}
