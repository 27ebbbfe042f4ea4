#!/usr/bin/env bash
# The control socket under load, against the `aqjack host` process (issue 33's acceptance):
# a graph file (swh amp into swh fastLookaheadLimiter beside a dry path, mono) hosted with
# --control on the running server, fed by a test-signal client, while a script sends RATE
# commands a second for SECONDS (sets, gets, bypass toggles, list, latency; every second a node
# added and half a second later removed: graph swaps), each waiting for its reply.
#
#   Scripts/with-dummy-jack.sh -- bash Scripts/host-load.sh [SECONDS] [RATE]    (default 60 100)
#
# The host runs under Scripts/host-probe.c (LD_PRELOAD), which counts allocations, frees and
# mutex locks on its process thread and times each of its process callbacks against the period
# (a callback longer than the period is the host's own slow cycle). Prints one line each for the
# commands (sent, replies, errors, reply times), the process thread, and the server's xruns as
# the host counted them. AQ_PROBE_CONTROL=1 makes the probe allocate once a cycle itself (the
# control: the allocations must then equal the cycles). Needs the release build (Scripts/build-release.sh). Exit 0 when every
# command got an `ok` reply and the process thread allocated, freed and locked nothing; 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
rate=${2:-100}
work=$(mktemp -d)
generator= host=
trap '[ -n "$host" ] && kill -INT "$host" 2>/dev/null; [ -n "$generator" ] && kill "$generator" 2>/dev/null; rm -rf "$work"' EXIT
[ -x .build/release/aqjack ] && [ -x .build/release/aqbench ] || { echo "host-load.sh: build first: bash Scripts/build-release.sh" >&2; exit 1; }
cc -shared -fPIC -O2 -I Sources/CRTProbe/include -o "$work/host-probe.so" Scripts/host-probe.c -ljack -ldl || exit 1
amp=http://plugin.org.uk/swh-plugins/amp
limiter=http://plugin.org.uk/swh-plugins/fastLookaheadLimiter
cat > "$work/graph.json" <<EOF
{"schema": "aqjack.graph/1", "inputs": 1, "outputs": 1,
 "nodes": [{"id": "amp", "uri": "$amp", "controls": {"gain": 0}, "bypass": false},
           {"id": "lim", "uri": "$limiter", "controls": {}, "bypass": false}],
 "connections": [["in_1", "amp:input"], ["amp:output", "lim:in_1"], ["lim:out_1", "out_1"], ["in_1", "out_1"]]}
EOF
.build/release/aqbench generate 1 $((seconds + 30)) > "$work/gen.out" 2>&1 &
generator=$!
for _ in $(seq 1 100); do grep -q ready "$work/gen.out" 2>/dev/null && break; sleep 0.05; done
AQ_PROBE_CONTROL=${AQ_PROBE_CONTROL:-0} AQ_PROBE_REPORT="$work/probe.txt" LD_PRELOAD="$work/host-probe.so" \
  .build/release/aqjack host --name load-host --graph "$work/graph.json" --control 0 -i bench-gen:out_1 --json \
  > "$work/host.json" 2> "$work/host.err" &
host=$!
port=
for _ in $(seq 1 200); do
  port=$(grep -o 'control socket on 127.0.0.1:[0-9]*' "$work/host.err" 2>/dev/null | grep -o '[0-9]*$')
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "host-load.sh: the host did not open its control socket:" >&2; cat "$work/host.err" >&2; exit 1; }
sleep 2   # past the probe's warm-up (1 s of cycles)
python3 - "$port" "$seconds" "$rate" "$amp" <<'EOF' > "$work/load.txt"
import socket, sys, time
port, seconds, rate, amp = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
connection = socket.create_connection(("127.0.0.1", port))
lines = connection.makefile("r")
def command(k):
    if k % int(rate) == 0: return f"add {amp} tmp"
    if k % int(rate) == int(rate) // 2: return "remove tmp"
    return [f"set amp gain {k % 13 - 6}", "get amp gain", "bypass lim on", "list", "bypass lim off", "latency", "get lim attenuation"][k % 7]
sent = replies = errors = 0
times = []
first_error = ""
start = time.monotonic()
total = int(seconds * rate)
for k in range(total):
    due = start + k / rate
    now = time.monotonic()
    if due > now: time.sleep(due - now)
    line = command(k)
    began = time.monotonic()
    connection.sendall((line + "\n").encode())
    sent += 1
    reply = lines.readline()
    times.append(time.monotonic() - began)
    if reply: replies += 1
    if not reply.startswith("ok"):
        errors += 1
        first_error = first_error or f"{line!r} -> {reply.strip()!r}"
times.sort()
print(f"commands {sent} replies {replies} errors {errors} seconds {time.monotonic() - start:.1f} "
      f"reply_ms_median {1000 * times[len(times) // 2]:.2f} reply_ms_p99 {1000 * times[int(len(times) * 0.99)]:.2f} reply_ms_max {1000 * times[-1]:.2f}"
      + (f" first_error {first_error}" if first_error else ""))
EOF
kill -INT "$host"
wait "$host"
status=$?
host=
load=$(cat "$work/load.txt")
probe=$(cat "$work/probe.txt" 2>/dev/null)
xruns=$(grep -o '"xruns" *: *[0-9]*' "$work/host.json" | grep -o '[0-9]*$')
field() { echo "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }
echo "  control commands: $load"
awk -v c="$(field "$probe" cycles)" -v s="$(field "$probe" slow)" -v l="$(field "$probe" longest_ns)" -v m="$(field "$probe" mean_ns)" \
    -v p="$(field "$probe" period_ns)" -v a="$(field "$probe" allocations)" -v f="$(field "$probe" frees)" -v k="$(field "$probe" locks)" \
    'BEGIN { printf "  process thread: %d cycles, %d slower than the period (%.1f us), longest %.1f us, mean %.1f us; allocations %d, frees %d, mutex locks %d\n", c, s, p / 1e3, l / 1e3, m / 1e3, a, f, k }'
echo "  server xruns the host was told of over its run: ${xruns:-unknown}; host exit $status"
[ "$status" = 0 ] && [ "$(field "$load" errors)" = 0 ] && [ "$(field "$load" replies)" = "$(field "$load" commands)" ] \
  && [ "$(field "$probe" allocations)" = 0 ] && [ "$(field "$probe" frees)" = 0 ] && [ "$(field "$probe" locks)" = 0 ]
