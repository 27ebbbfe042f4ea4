#!/usr/bin/env bash
# Recorder comparison, run by Scripts/bench.sh inside a private dummy server: aqjack record and
# jack_capture each record CHANNELS generator channels to float WAV for SECONDS, side by side in
# one run. Prints CPU % and peak RSS of each process (GNU time), the time from exec to the first
# frame in which every channel has signal, frames lost, and the ratios aqjack/jack_capture.
set -uo pipefail
channels=$1
seconds=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rate=48000

.build/release/aqbench generate "$channels" $((seconds * 2 + 20)) > "$work/gen.out" &
generator=$!
for _ in $(seq 1 100); do grep -q ready "$work/gen.out" 2>/dev/null && break; sleep 0.05; done

measure() {  # name, command...
  local name=$1; shift
  local exec_frame
  exec_frame=$(.build/release/aqbench frame)
  /usr/bin/time -f "%P %M" -o "$work/$name.time" "$@" > "$work/$name.log" 2>&1
  local cpu rss
  read -r cpu rss < "$work/$name.time"
  local analysis
  analysis=$(.build/release/aqbench analyze "$work/$name.wav" "$channels" "$exec_frame" "$rate")
  echo "$name ${cpu%\%} $rss $analysis"
}

a=$(measure aqjack .build/release/aqjack record --name bench-rec -p 'bench-gen:out_*' -d "$seconds" --no-meter "$work/aqjack.wav")
j=$(measure jack_capture jack_capture --daemon -c "$channels" -p 'bench-gen:out_*' -d "$seconds" -fn "$work/jack_capture.wav")
kill "$generator" 2>/dev/null; wait "$generator" 2>/dev/null

read -r _ a_cpu a_rss _ a_frames _ a_partial _ a_lost _ a_start _ a_repeated <<<"$a"
read -r _ j_cpu j_rss _ j_frames _ j_partial _ j_lost _ j_start _ j_repeated <<<"$j"
printf '  %s channels, %s s, float WAV:\n' "$channels" "$seconds"
printf '    aqjack record: CPU %s %%, peak RSS %s KiB, exec->first complete frame %s s, channels apart %s frames, lost %s, repeated %s, frames %s\n' "$a_cpu" "$a_rss" "$a_start" "$a_partial" "$a_lost" "$a_repeated" "$a_frames"
printf '    jack_capture:  CPU %s %%, peak RSS %s KiB, exec->first complete frame %s s, channels apart %s frames, lost %s, repeated %s, frames %s\n' "$j_cpu" "$j_rss" "$j_start" "$j_partial" "$j_lost" "$j_repeated" "$j_frames"
awk -v ac="$a_cpu" -v jc="$j_cpu" -v ar="$a_rss" -v jr="$j_rss" -v as="$a_start" -v js="$j_start" 'BEGIN {
  printf "    ratios aqjack/jack_capture: CPU %.2f, RSS %.2f, start %.2f\n", (jc > 0 ? ac / jc : 0), (jr > 0 ? ar / jr : 0), (js > 0 ? as / js : 0) }'
