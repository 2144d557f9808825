# serverlib.sh: what scripts/s3server.sh and scripts/natsserver.sh share, sourced by both.
# A script sets SERVER (its server's name for messages), STATE, PID_FILE, DATA_FILE and
# LOG_FILE (where the running server's PID, data dir and output are recorded), DATA_PREFIX
# (the mktemp prefix of its data dirs, the only dirs stop removes), BIN and PORT, defines
# log, die, free_port, cmd_build and cmd_start, and ends with: dispatch "$@".

# listening reports whether something accepts connections on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# running_pid prints the PID recorded in PID_FILE if that process is alive.
running_pid() {
	[[ -f "$PID_FILE" ]] || return 1
	local pid
	pid="$(cat "$PID_FILE")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# begin_start makes ready for a start: STATE exists, no server is recorded as running,
# PORT is free (picked by the script's free_port when empty; $1 names the variable a user
# sets it with), and DATA is a new data dir, recorded in DATA_FILE.
begin_start() {
	mkdir -p "$STATE"
	if pid="$(running_pid)"; then
		die "a server is already running (pid $pid from $PID_FILE); run '$0 stop' first"
	fi
	if [[ -z "$PORT" ]]; then
		PORT="$(free_port)"
	elif listening "$PORT"; then
		die "port 127.0.0.1:$PORT ($1) is already in use; set another, or unset it for a free one"
	fi
	DATA="$(mktemp -d "$DATA_PREFIX.XXXXXX")"
	echo "$DATA" >"$DATA_FILE"
}

# await_start PID SECS PAUSE PROBE WHAT records PID as the server's and waits, probing every
# PAUSE seconds, until the function PROBE succeeds; if the process exits first, or SECS
# pass (then it is stopped), it dies showing LOG_FILE's end, WHAT saying what did not come.
await_start() {
	local pid=$1 secs=$2 pause=$3 probe=$4 what=$5
	echo "$pid" >"$PID_FILE"
	local deadline=$((SECONDS + secs))
	until "$probe"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 20 "$LOG_FILE" >&2 || true
			die "$SERVER exited during start-up (see $LOG_FILE)"
		fi
		if ((SECONDS >= deadline)); then
			tail -n 20 "$LOG_FILE" >&2 || true
			cmd_stop
			die "$what within $secs s"
		fi
		sleep "$pause"
	done
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
