#!/usr/bin/env bash
# Plugin figures, run by Scripts/bench.sh inside a private dummy server (period 128):
#   offline: `aqjack convert --lv2` against lilv's own `lv2apply` on the same 60 s file (swh amp
#     on mono, the look-ahead limiter on stereo), median of 3, as times and multiples of real time;
#   live: the host's callback cost per cycle (aqbench host-cycle: PluginHostProcessor over the
#     plugin, 20,000 cycles of 128 frames, best of 5; amp with its gain changed every cycle), and
#     the CPU time per cycle of `aqjack host` against `jalv` (Debian jalv, console mode) hosting
#     the same plugin for 10 s, fed by a test-signal client.
set -uo pipefail
work=$(mktemp -d)
helper=
trap '[ -n "$helper" ] && kill "$helper" 2>/dev/null; rm -rf "$work"' EXIT
amp=http://plugin.org.uk/swh-plugins/amp
limiter=http://plugin.org.uk/swh-plugins/fastLookaheadLimiter
seconds=60
sox -V1 -n -r 48000 -c 1 -e floating-point -b 32 "$work/mono.wav" synth $seconds sine 440 gain -12
sox -V1 -n -r 48000 -c 2 -e floating-point -b 32 "$work/stereo.wav" synth $seconds sine 440 sine 660 gain -12
micros() { local start end; start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N); echo $(( (end - start) / 1000 )); }
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
offline() {  # LABEL FILE URI SYMBOL VALUE
  local ours=() theirs=()
  for _ in 1 2 3; do
    rm -f "$work/out.wav" "$work/ref.wav"
    ours+=("$(micros .build/release/aqjack convert "$2" "$work/out.wav" --lv2 "$3" --set "$4=$5")")
    theirs+=("$(micros lv2apply -i "$2" -o "$work/ref.wav" -c "$4" "$5" "$3")")
  done
  local a b; a=$(median3 "${ours[@]}"); b=$(median3 "${theirs[@]}")
  awk -v l="$1" -v a="$a" -v b="$b" -v s=$seconds 'BEGIN { printf "  %s, %d s: aqjack convert --lv2 %.3f s (%.0fx real time), lv2apply %.3f s (%.0fx): time ratio %.2f\n", l, s, a / 1e6, s / (a / 1e6), b / 1e6, s / (b / 1e6), a / b }'
}
echo "  offline, one plugin over a ${seconds} s float file, median of 3:"
offline "swh amp gain=6, mono" "$work/mono.wav" $amp gain 6
offline "swh fastLookaheadLimiter limit=-6, stereo" "$work/stereo.wav" $limiter limit -6
echo "  live host callback, 128 frames a cycle (aqbench host-cycle, best of 5 x 20,000 cycles):"
for spec in "$amp gain" "$limiter"; do
  set -- $spec
  ns=$(.build/release/aqbench host-cycle "$1" 128 ${2:-} 2>/dev/null)
  awk -v u="$1" -v n="$ns" -v c="${2:-}" 'BEGIN { printf "    %s%s: %.0f ns per cycle = %.3f %% of the 2666.7 us period\n", u, (c == "" ? "" : " (" c " changed every cycle)"), n, n / 26667 }'
done
if ! command -v jalv >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends jalv >/dev/null 2>&1 || true
fi
# CPU time of every thread of a process, in nanoseconds (schedstat: ns resolution, unlike stat's ticks).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%d", t }'; }
live() {  # command...: prints the process's CPU ns over 5 s, fed by bench-gen
  # stdin held open (jalv's console ends at end of input), empty: no control changes.
  sleep 20 | "$@" > "$work/live.log" 2>&1 &
  local pid=$!
  sleep 2
  for port in $(jack_lsp 2>/dev/null | grep -E "^bench-host:(input|in_1)$"); do jack_connect bench-gen:out_1 "$port" 2>/dev/null; done
  local before; before=$(cpu_ns $pid)
  sleep 5
  local after; after=$(cpu_ns $pid)
  kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null
  echo $((after - before))
}
.build/release/aqbench generate 1 60 > "$work/gen.out" &
helper=$!
sleep 1
echo "  live host, swh amp, 5 s a run, 3 runs each alternating (process CPU, all threads; most of it is JACK's wake-up of the thread, which depends on the graph, not the client):"
ours=(); theirs=()
for _ in 1 2 3; do
  ours+=("$(live .build/release/aqjack host --name bench-host $amp)")
  command -v jalv >/dev/null && theirs+=("$(live jalv -n bench-host $amp)")
done
per_cycle() { awk -v t="$1" 'BEGIN { printf "%.2f", t / 1e3 / (5 * 48000 / 128) }'; }
a=$(median3 "${ours[@]}")
echo "    aqjack host: $(per_cycle "$a") us per cycle (runs: $(for t in "${ours[@]}"; do printf '%s ' "$(per_cycle "$t")"; done))"
if [ ${#theirs[@]} -eq 3 ]; then
  b=$(median3 "${theirs[@]}")
  echo "    jalv:        $(per_cycle "$b") us per cycle (runs: $(for t in "${theirs[@]}"; do printf '%s ' "$(per_cycle "$t")"; done))"
  awk -v a="$a" -v b="$b" 'BEGIN { printf "    CPU ratio of medians aqjack host / jalv: %.2f\n", (b > 0 ? a / b : 0) }'
else
  echo "    jalv: not installed"
fi
# Start: exec -> the plugin's output port on the graph, median of 5. The port is watched by
# `aqbench port-wait`, a client opened before the exec that polls every 0.5 ms (jack_lsp polls
# opened a client each, about 50 ms: coarser than the difference measured).
start_ms() {  # command...
  .build/release/aqbench port-wait bench-host:output 20 > "$work/wait.out" 2>&1 &
  local waiter=$!
  for _ in $(seq 1 200); do grep -q ready "$work/wait.out" 2>/dev/null && break; sleep 0.01; done
  local t0 t1; t0=$(date +%s%N)
  sleep 20 | "$@" > "$work/start.log" 2>&1 &
  local pid=$!
  wait $waiter
  t1=$(tail -n 1 "$work/wait.out")
  kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null
  [ "$t1" = timeout ] && echo 0 || echo $(( (t1 - t0) / 1000 ))
}
ours=(); theirs=()
for _ in 1 2 3 4 5; do
  ours+=("$(start_ms .build/release/aqjack host --name bench-host $amp)")
  command -v jalv >/dev/null && theirs+=("$(start_ms jalv -n bench-host $amp)")
done
median5() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
if [ ${#theirs[@]} -eq 5 ]; then
  awk -v a="$(median5 "${ours[@]}")" -v b="$(median5 "${theirs[@]}")" 'BEGIN { printf "  start, exec -> output port on the graph, median of 5: aqjack host %.1f ms, jalv %.1f ms: ratio %.2f\n", a / 1e3, b / 1e3, a / b }'
fi
