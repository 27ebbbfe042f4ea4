#!/usr/bin/env bash
# Runs a command against a private JACK server that this script starts and stops.
#
#   Scripts/with-dummy-jack.sh [--rate HZ] [--period FRAMES] [--port-max N] [--name NAME] -- COMMAND [ARGS...]
#
# The server uses the dummy backend (no sound card needed) under a unique name, real-time
# scheduling when permitted (falling back to normal scheduling otherwise). The command runs with
# JACK_DEFAULT_SERVER set to that name and JACK_NO_START_SERVER=1, so no client can start another
# server. The server is stopped by PID when the command ends, fails, or the script is
# interrupted, and the files it left in /dev/shm are removed. Exits with the command's status.
set -u

rate=48000
period=128
port_max=512
name="aqjack-$$-${RANDOM}"
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) rate="$2"; shift 2 ;;
    --period) period="$2"; shift 2 ;;
    --name) name="$2"; shift 2 ;;
    --port-max) port_max="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "with-dummy-jack.sh: unknown option '$1' (expected --rate, --period, --port-max, --name or --)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "with-dummy-jack.sh: no command given after --" >&2; exit 2; }
command -v jackd >/dev/null || { echo "with-dummy-jack.sh: jackd not found; run Scripts/setup.sh" >&2; exit 1; }

log="${TMPDIR:-/tmp}/jackd-${name}.log"
jackd_pid=""

stop_server() {
  if [ -n "$jackd_pid" ] && kill -0 "$jackd_pid" 2>/dev/null; then
    kill -TERM "$jackd_pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$jackd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$jackd_pid" 2>/dev/null
    wait "$jackd_pid" 2>/dev/null
  fi
  jackd_pid=""
  # What a killed server leaves behind: semaphores and sockets named after the server.
  rm -rf /dev/shm/jack_sem.*_"${name}"_* /dev/shm/jack_"${name}"_* /dev/shm/jack-*/"${name}" 2>/dev/null
}

# Polls until a client can connect (`jack_wait -c` prints "running"; its exit code says nothing).
wait_ready() {
  for _ in $(seq 1 100); do
    kill -0 "$jackd_pid" 2>/dev/null || return 1
    [ "$(jack_wait -s "$name" -c 2>/dev/null)" = "running" ] && return 0
    sleep 0.05
  done
  return 1
}

start_server() {
  # -p before -d is the port maximum (shared-memory size); after -d dummy it is the period.
  jackd "$@" -n "$name" -p "$port_max" -t 5000 -d dummy -r "$rate" -p "$period" >"$log" 2>&1 &
  jackd_pid=$!
  wait_ready
}

# A jackd that was killed leaves its entry in the machine-wide server registry; after 8 of them
# no server starts ("Too many servers already active"). With no jackd running at all, the
# registry and the files beside it are stale: remove them.
if ! pgrep -x jackd >/dev/null 2>&1 && ! pgrep -x jackdmp >/dev/null 2>&1; then
  rm -rf /dev/shm/jack-shm-registry /dev/shm/jack_db-* /dev/shm/jack-[0-9]* /dev/shm/jack_sem.* 2>/dev/null
fi

trap 'stop_server; exit 130' INT
trap 'stop_server; exit 143' TERM
trap 'stop_server' EXIT

realtime=yes
if ! start_server -R; then
  stop_server
  realtime=no
  if ! start_server -r; then
    echo "with-dummy-jack.sh: jackd did not start; its log ($log):" >&2
    cat "$log" >&2
    exit 1
  fi
fi
echo "with-dummy-jack.sh: jackd '$name' (pid $jackd_pid) running, dummy backend, ${rate} Hz, period ${period}, realtime=${realtime}" >&2

export JACK_DEFAULT_SERVER="$name"
export JACK_NO_START_SERVER=1
"$@"
status=$?
stop_server
exit $status
