#!/usr/bin/env bash
# The web surface's cost, run by Scripts/bench.sh inside a private dummy server:
# `aqjack record --http 0` of CHANNELS generator channels for SECONDS, RUNS times without a
# browser and RUNS times with CLIENTS WebSocket clients reading /live the whole time
# (alternating, the same server and generator). Prints per run the process's CPU time (user +
# system, GNU time), the frames lost, those the server skipped and those silent in the file where
# the generator did not jump (aqjack's alone; Scripts/bench-causes.sh), the unfinished cycles the server reported by client, the
# xruns, whether every sample is the test signal bit for bit (aqbench verify, from the
# recording's first JACK frame) and the status messages each client received; where a sample is
# wrong, its cause (aqbench events); then the medians and the extra CPU with the clients as a ratio.
set -uo pipefail
channels=${1:-64}
seconds=${2:-60}
clients=${3:-50}
runs=${4:-3}
work=$(mktemp -d)
generator=
trap '[ -n "$generator" ] && kill "$generator" 2>/dev/null; rm -rf "$work"' EXIT
rate=48000
. "$(dirname "$0")/bench-causes.sh"

.build/release/aqbench generate "$channels" $(( (seconds + 15) * runs * 2 + 60 )) > "$work/gen.out" &
generator=$!
for _ in $(seq 1 200); do grep -q ready "$work/gen.out" 2>/dev/null && break; sleep 0.05; done

# CLIENTS WebSocket readers of 127.0.0.1:PORT/live for SECONDS (Python's standard library: the
# handshake, then bytes counted as messages by their opening); prints the messages each got.
readers() {
  /usr/bin/python3 - "$1" "$2" "$3" <<'EOF'
import base64, os, socket, sys, threading, time
port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
got = [0] * count
def read(index):
    s = socket.create_connection(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    s.settimeout(0.5)
    end = time.time() + seconds
    while time.time() < end:
        try:
            data = s.recv(1 << 16)
        except socket.timeout:
            continue
        if not data:
            break
        got[index] += data.count(b'{"schema"')
    s.close()
threads = [threading.Thread(target=read, args=(i,)) for i in range(count)]
for t in threads: t.start()
for t in threads: t.join()
print(" ".join(map(str, got)))
EOF
}

declare -a cpu_without cpu_with
for run in $(seq 1 "$runs"); do
  for mode in without with; do
    file="$work/rec-$mode-$run.wav"
    rm -f "$work/stalls.txt"
    before=$(lines)
    AQJACK_STALLS="$work/stalls.txt" /usr/bin/time -f '%U %S' -o "$work/time" .build/release/aqjack record --json --no-meter --http 0 -p 'bench-gen:out_*' \
      -d "$seconds" --name "bench-web" "$file" > "$work/summary.json" 2> "$work/err" &
    recorder=$!
    port=
    for _ in $(seq 1 300); do
      port=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/err" 2>/dev/null | head -1 | cut -d: -f3)
      [ -n "$port" ] && break
      sleep 0.02
    done
    got=""
    if [ "$mode" = with ] && [ -n "$port" ]; then got=$(readers "$port" "$clients" $((seconds - 2))); fi
    wait "$recorder"
    late=$(late_between "$before" "$(lines)" bench-web)
    set -- $(cat "$work/time")
    cpu=$(awk -v u="$1" -v s="$2" 'BEGIN { printf "%.2f", u + s }')
    lost=$(json_field lostFrames "$work/summary.json")
    skipped=$(json_field serverSkippedFrames "$work/summary.json")
    xruns=$(json_field xruns "$work/summary.json")
    start=$(json_field startFrameTime "$work/summary.json")
    own=$(own_silent "$file" "$channels" "$start")
    set -- $(.build/release/aqbench verify "$file" "$channels" "$start")
    if [ "$mode" = with ]; then
      cpu_with+=("$cpu")
      messages=$(echo "$got" | awk '{ min = $1; max = $1; for (i = 1; i <= NF; i++) { if ($i < min) min = $i; if ($i > max) max = $i } printf "%d clients, messages each %d ... %d", NF, min, max }')
    else
      cpu_without+=("$cpu")
      messages="no clients"
    fi
    printf '  run %d %-7s CPU %6.2f s, frames %s, wrong samples %s, lost frames %s (server skipped %s; aqjack alone %s), xruns %s, unfinished cycles %s; %s\n' \
      "$run" "$mode" "$cpu" "$2" "$4" "$lost" "$skipped" "$own" "$xruns" "$late" "$messages"
    [ "${4:-0}" != 0 ] && wrong_by_cause "$file" "$channels" "$start" "$seconds"
    rm -f "$file"
  done
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
without=$(median "${cpu_without[@]}")
with=$(median "${cpu_with[@]}")
printf '  record --http, %d channels, %d s: CPU median %s s [%s] without clients, %s s [%s] with %d WebSocket clients: ratio %s\n' \
  "$channels" "$seconds" "$without" "${cpu_without[*]}" "$with" "${cpu_with[*]}" "$clients" \
  "$(awk -v a="$with" -v b="$without" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
