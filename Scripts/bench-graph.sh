#!/usr/bin/env bash
# A graph of 8 plugins (swh-lv2, mono, in a chain: highpass_iir, dcRemove, triplePara, sc1,
# valve, dysonCompress, multivoiceChorus, hardLimiter), run by Scripts/bench.sh inside a private
# dummy server (period 128):
#   live: `aqjack host --graph FILE` against 8 `jalv` processes hosting the same plugins wired in
#     the same chain, fed by a test-signal client, 5 s a run, 3 runs each alternating: the process
#     callbacks' cost per cycle (every process under Scripts/host-probe.c: the host's one callback
#     against the sum of the 8 jalv callbacks) and the processes' CPU (all threads, schedstat);
#   offline: `aqjack convert --graph FILE` against a shell pipeline of 8 `lv2apply` runs (each
#     reading the one before's output file) over the same 60 s mono float file, median of 3.
# Reports only: never fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pids=()
trap 'for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null; done; rm -rf "$work"' EXIT
base=http://plugin.org.uk/swh-plugins
plugins=(highpass_iir dcRemove triplePara sc1 valve dysonCompress multivoiceChorus hardLimiter)
seconds=60
cc -shared -fPIC -O2 -I Sources/CRTProbe/include -o "$work/host-probe.so" Scripts/host-probe.c -ljack -ldl || exit 0
command -v jalv >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends jalv >/dev/null 2>&1
# The graph file: in_1 -> 1 -> 2 -> ... -> 8 -> out_1, each plugin at its defaults.
{
  printf '{"schema": "aqjack.graph/1", "inputs": 1, "outputs": 1, "nodes": ['
  for i in "${!plugins[@]}"; do printf '%s{"id": "%d", "uri": "%s/%s", "controls": {}, "bypass": false}' "$([ "$i" = 0 ] || echo ,)" $((i + 1)) "$base" "${plugins[$i]}"; done
  printf '], "connections": ['
  printf '["in_1", "1:%s"]' "$(.build/release/aqjack plugins "$base/${plugins[0]}" --json | python3 -c 'import json,sys; print([p["symbol"] for p in json.load(sys.stdin)["plugins"][0]["ports"] if p["kind"] == "audio" and p["direction"] == "input"][0])')"
  for i in "${!plugins[@]}"; do
    out=$(.build/release/aqjack plugins "$base/${plugins[$i]}" --json | python3 -c 'import json,sys; print([p["symbol"] for p in json.load(sys.stdin)["plugins"][0]["ports"] if p["kind"] == "audio" and p["direction"] == "output"][0])')
    if [ $((i + 1)) -lt ${#plugins[@]} ]; then
      next=$(.build/release/aqjack plugins "$base/${plugins[$((i + 1))]}" --json | python3 -c 'import json,sys; print([p["symbol"] for p in json.load(sys.stdin)["plugins"][0]["ports"] if p["kind"] == "audio" and p["direction"] == "input"][0])')
      printf ', ["%d:%s", "%d:%s"]' $((i + 1)) "$out" $((i + 2)) "$next"
    else
      printf ', ["%d:%s", "out_1"]' $((i + 1)) "$out"
    fi
  done
  printf ']}\n'
} > "$work/graph.json"

cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%d", t }'; }
field() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1"; }
# A client's audio ports in one direction, in JACK's order.
audio_ports() { jack_lsp -p -t "$1:" 2>/dev/null | awk -v d="$2" '/^[^ \t]/ { port = $0 } /properties:/ { dir = ($0 ~ d) } /audio/ { if (dir) print port }'; }
wait_port() { for _ in $(seq 1 200); do jack_lsp 2>/dev/null | grep -q "^$1" && return 0; sleep 0.05; done; return 1; }
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }

.build/release/aqbench generate 1 120 > "$work/gen.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do grep -q ready "$work/gen.out" 2>/dev/null && break; sleep 0.05; done
# Prints "CPU_NS CALLBACK_NS ALLOCATIONS" for 5 s of aqjack host.
run_aqjack() {
  rm -f "$work/aq.probe"
  AQ_PROBE_REPORT="$work/aq.probe" LD_PRELOAD="$work/host-probe.so" \
    .build/release/aqjack host --name bench-graph --graph "$work/graph.json" -i bench-gen:out_1 > /dev/null 2>&1 &
  local pid=$!
  wait_port bench-graph:out_1
  sleep 1.5   # past the probe's warm-up
  local before; before=$(cpu_ns $pid)
  sleep 5
  local after; after=$(cpu_ns $pid)
  kill -INT $pid; wait $pid 2>/dev/null
  echo "$((after - before)) $(field "$work/aq.probe" mean_ns) $(field "$work/aq.probe" allocations)"
}
# The same for 8 jalv processes in a chain: CPU and callback cost summed over the 8.
run_jalv() {
  local jalvs=() previous=bench-gen:out_1
  for i in "${!plugins[@]}"; do
    rm -f "$work/j$i.probe"
    sleep 30 | AQ_PROBE_REPORT="$work/j$i.probe" LD_PRELOAD="$work/host-probe.so" jalv -x -n "bench-j$i" "$base/${plugins[$i]}" > /dev/null 2>&1 &
    jalvs+=($!)
  done
  for i in "${!plugins[@]}"; do
    wait_port "bench-j$i:"
    sleep 0.2
    jack_connect "$previous" "$(audio_ports "bench-j$i" input | head -1)"
    previous=$(audio_ports "bench-j$i" output | head -1)
  done
  sleep 1.5
  local before=0 after=0 pid
  # The jalv processes themselves (each is the right side of a `sleep | jalv` pipeline).
  local procs; procs=$(for i in "${!plugins[@]}"; do pgrep -f "jalv -x -n bench-j$i " | head -1; done)
  for pid in $procs; do before=$((before + $(cpu_ns "$pid"))); done
  sleep 5
  for pid in $procs; do after=$((after + $(cpu_ns "$pid"))); done
  for pid in $procs; do kill -INT "$pid" 2>/dev/null; done
  for pid in "${jalvs[@]}"; do wait "$pid" 2>/dev/null; done
  local callback=0 allocations=0
  for i in "${!plugins[@]}"; do
    callback=$((callback + $(field "$work/j$i.probe" mean_ns 2>/dev/null || echo 0)))
    allocations=$((allocations + $(field "$work/j$i.probe" allocations 2>/dev/null || echo 0)))
  done
  echo "$((after - before)) $callback $allocations"
}
aq_cpu=() aq_cb=() aq_alloc=() j_cpu=() j_cb=() j_alloc=()
for _ in 1 2 3; do
  read -r c b a < <(run_aqjack); aq_cpu+=("$c"); aq_cb+=("$b"); aq_alloc+=("$a")
  read -r c b a < <(run_jalv); j_cpu+=("$c"); j_cb+=("$b"); j_alloc+=("$a")
done
us() { awk -v t="$1" -v d="$2" 'BEGIN { printf "%.1f", t / d / 1e3 }'; }
cycles=$((5 * 48000 / 128))
list() { local d=$1; shift; for t in "$@"; do printf '%s ' "$(us "$t" "$d")"; done; }
echo "  live, 8 plugins in a chain, 5 s a run, 3 runs each alternating (medians; runs in brackets):"
echo "    process callback per cycle: aqjack host $(us "$(median3 "${aq_cb[@]}")" 1) us [$(list 1 "${aq_cb[@]}")], 8 jalv summed $(us "$(median3 "${j_cb[@]}")" 1) us [$(list 1 "${j_cb[@]}")]: ratio $(awk -v a="$(median3 "${aq_cb[@]}")" -v b="$(median3 "${j_cb[@]}")" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
echo "    process CPU per cycle (all threads): aqjack host $(us "$(median3 "${aq_cpu[@]}")" $cycles) us [$(list $cycles "${aq_cpu[@]}")], 8 jalv summed $(us "$(median3 "${j_cpu[@]}")" $cycles) us [$(list $cycles "${j_cpu[@]}")]: ratio $(awk -v a="$(median3 "${aq_cpu[@]}")" -v b="$(median3 "${j_cpu[@]}")" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
echo "    allocations on the process threads after warm-up: aqjack host ${aq_alloc[*]}; 8 jalv summed ${j_alloc[*]}"

sox -V1 -n -r 48000 -c 1 -e floating-point -b 32 "$work/mono.wav" synth $seconds sine 440 gain -12
micros() { local start end; start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N); echo $(( (end - start) / 1000 )); }
lv2apply_chain() {
  local input=$work/mono.wav
  for i in "${!plugins[@]}"; do
    lv2apply -i "$input" -o "$work/step$i.wav" "$base/${plugins[$i]}" || return 1
    input=$work/step$i.wav
  done
}
ours=() theirs=()
for _ in 1 2 3; do
  rm -f "$work/out.wav" "$work"/step*.wav
  ours+=("$(micros .build/release/aqjack convert "$work/mono.wav" "$work/out.wav" --graph "$work/graph.json")")
  theirs+=("$(micros lv2apply_chain)")
done
a=$(median3 "${ours[@]}"); b=$(median3 "${theirs[@]}")
secs() { for t in "$@"; do awk -v t="$t" 'BEGIN { printf "%.3f ", t / 1e6 }'; done; }
awk -v a="$a" -v b="$b" -v s=$seconds -v ra="$(secs "${ours[@]}")" -v rb="$(secs "${theirs[@]}")" 'BEGIN {
  printf "  offline, the same 8 plugins over a %d s mono float file, median of 3: aqjack convert --graph %.3f s (%.0fx real time) [%s], 8 lv2apply runs in turn %.3f s (%.0fx) [%s]: time ratio %.2f\n", s, a / 1e6, s / (a / 1e6), ra, b / 1e6, s / (b / 1e6), rb, a / b }'
