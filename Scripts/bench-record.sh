#!/usr/bin/env bash
# Recorder comparison, run by Scripts/bench.sh inside a private dummy server: aqjack record,
# jack_capture and jack-record (jack-tools; always third) each record CHANNELS generator channels
# to float WAV for SECONDS, one after the other on the same server. Prints CPU % and peak RSS of
# each process (GNU time), the time from exec to the first frame in which every channel has
# signal, the frames by which the channels started apart, frames lost and repeated, the xruns
# each counted (aqjack's --json summary; jack_capture's close hook; jack-record reports none),
# and the ratios aqjack/jack_capture and aqjack/jack-record. Above 1024 channels (jack_capture's and libsndfile's limit) aqjack runs
# alone: its files of 1024 channels are each checked bit for bit against the test signal.
set -uo pipefail
channels=$1
seconds=$2
work=$(mktemp -d)
generator=
trap '[ -n "$generator" ] && kill "$generator" 2>/dev/null; rm -rf "$work"' EXIT
rate=48000
. "$(dirname "$0")/bench-causes.sh"

# Long enough for the three recorders, their analyses and the floor client (at 1024 channels the
# analyses took so long that a generator of seconds * 2 + 40 had gone before the floor ran).
.build/release/aqbench generate "$channels" $((seconds * 5 + 400)) > "$work/gen.out" &
generator=$!
for _ in $(seq 1 200); do grep -q ready "$work/gen.out" 2>/dev/null && break; sleep 0.05; done

# The host's floor for lost frames (Scripts/floor-client.c): the least a JACK client does with
# this many ports (get each buffer, copy it to memory; no disk, no consumer thread), on the same
# server and generator for as long, after the recorders.
floor_line() {
  cc -O2 -o "$work/floor-client" Scripts/floor-client.c -ljack || { echo "    floor: could not build Scripts/floor-client.c"; return; }
  local result
  result=$("$work/floor-client" "$channels" "$seconds" bench-gen:out_)
  [ -n "$result" ] || { echo "    floor: the C client did not run (its error is above)"; return; }
  set -- $result
  printf '    floor (a C client that only copies its %s ports, %s s, same server and generator): %s frames skipped, %s repeated, %s xruns\n' "$2" "$seconds" "$6" "$8" "${10}"
}

if [ "$channels" -gt 1024 ]; then
  before=$(lines)
  AQJACK_STALLS="$work/stalls.txt" /usr/bin/time -f "%P %M" -o "$work/a.time" .build/release/aqjack record --json --name bench-rec -p 'bench-gen:out_*' \
    -d "$seconds" --no-meter "$work/aqjack.wav" > "$work/a.json" 2> "$work/a.err"
  status=$?
  recorded=$(lines)
  read -r cpu rss < "$work/a.time"
  start=$(json_field startFrameTime "$work/a.json")
  wrong=0; checked=""
  for part in $(grep -o '"files":\[[^]]*\]' "$work/a.json" | grep -o '/[^"]*'); do
    range=${part##*.ch}; range=${range%.wav}
    first=${range%-*}; last=${range#*-}
    set -- $(.build/release/aqbench verify "$part" $((last - first + 1)) "$start" $((first - 1)))
    wrong=$((wrong + $4)); checked="$checked ${part##*/}: $2 frames, $4 samples wrong in $6 frames;"
  done
  printf '  %s channels, %s s, float WAV (aqjack alone: over 1024 channels, split into files of 1024), exit %s:\n' "$channels" "$seconds" "$status"
  printf '    aqjack record: CPU %s, peak RSS %s KiB, lost %s, ring overrun %s, xruns %s, slow cycles (callbacks longer than their cycle) %s;%s samples wrong in all %s\n' \
    "$cpu" "$rss" "$(json_field lostFrames "$work/a.json")" "$(json_field overrunFrames "$work/a.json")" "$(json_field xruns "$work/a.json")" \
    "$(json_field slowCycles "$work/a.json")" "$checked" "$wrong"
  printf '    unfinished cycles the server reported (by client): %s; frames the server skipped %s\n' "$(late_between "$before" "$recorded" bench-rec)" "$(json_field serverSkippedFrames "$work/a.json")"
  first_part=$(grep -o '"files":\[[^]]*\]' "$work/a.json" | grep -o '/[^"]*' | head -1)
  [ -n "$first_part" ] && wrong_by_cause "$first_part" 1024 "$start" "$seconds"
  floor_line
  exit 0
fi

measure() {  # name, command...
  local name=$1; shift
  local exec_frame
  exec_frame=$(.build/release/aqbench frame)
  /usr/bin/time -f "%P %M" -o "$work/$name.time" "$@" > "$work/$name.log" 2>&1
  lines > "$work/$name.recorded"  # the log's length when the recorder exited
  local cpu rss
  read -r cpu rss < "$work/$name.time"
  local analysis
  analysis=$(.build/release/aqbench analyze "$work/$name.wav" "$channels" "$exec_frame" "$rate")
  echo "$name ${cpu%\%} $rss $analysis"
}


run_aqjack() {
  local before
  before=$(lines)
  a=$(AQJACK_STALLS="$work/stalls.txt" measure aqjack .build/release/aqjack record --json --name bench-rec -p 'bench-gen:out_*' -d "$seconds" --no-meter "$work/aqjack.wav")
  a_xruns=$(json_field xruns "$work/aqjack.log")
  a_late=$(late_between "$before" "$(cat "$work/aqjack.recorded")" bench-rec)
  a_skipped=$(json_field serverSkippedFrames "$work/aqjack.log")
  a_slow=$(json_field slowCycles "$work/aqjack.log")
  a_causes=$(wrong_by_cause "$work/aqjack.wav" "$channels" "$(json_field startFrameTime "$work/aqjack.log")" "$seconds")
}
run_jack_capture() {
  local before
  # jack_capture hands its xrun count to a close hook (FILE XRUNS IO-ERRORS), run after it exits.
  printf '#!/bin/sh\necho "$2" > "%s/jack_capture.xruns"\n' "$work" > "$work/hook.sh"
  chmod +x "$work/hook.sh"
  before=$(lines)
  j=$(measure jack_capture jack_capture --daemon -c "$channels" -p 'bench-gen:out_*' -d "$seconds" --hook-close "$work/hook.sh" -fn "$work/jack_capture.wav")
  for _ in $(seq 1 20); do [ -s "$work/jack_capture.xruns" ] && break; sleep 0.1; done
  j_xruns=$(cat "$work/jack_capture.xruns" 2>/dev/null)
  j_late=$(late_between "$before" "$(cat "$work/jack_capture.recorded")" jack_capture)
}
run_jack_record() {
  local before
  # jack-record connects its port i to the pattern with i in place of %d, after activating.
  before=$(lines)
  r=$(measure jack_record jack-record -n "$channels" -p 'bench-gen:out_%d' -t "$seconds" "$work/jack_record.wav")
  r_late=$(late_between "$before" "$(cat "$work/jack_record.recorded")" jack-record)
}
# Which recorder goes first (BENCH_RECORD_FIRST=aqjack|jack_capture; bench.sh alternates it by
# size): the one that goes first meets the generator's first minute. (In one run with aqjack
# always first the generator was unfinished 69/457/1,849 times in aqjack's runs against 8/6/21 in
# jack_capture's: counted then with each file's analysis, see late_between.)
first=${BENCH_RECORD_FIRST:-aqjack}
if [ "$first" = jack_capture ]; then run_jack_capture; run_aqjack; else run_aqjack; run_jack_capture; fi
r=
command -v jack-record >/dev/null && run_jack_record

read -r _ a_cpu a_rss _ a_frames _ a_partial _ a_lost _ a_start _ a_repeated <<<"$a"
read -r _ j_cpu j_rss _ j_frames _ j_partial _ j_lost _ j_start _ j_repeated <<<"$j"
read -r _ r_cpu r_rss _ r_frames _ r_partial _ r_lost _ r_start _ r_repeated <<<"${r:-}"
printf '  %s channels, %s s, float WAV (%s recorded first):\n' "$channels" "$seconds" "$first"
printf '    aqjack record: CPU %s %%, peak RSS %s KiB, exec->first complete frame %s s, channels apart %s frames, lost %s, repeated %s, xruns %s, frames %s\n' "$a_cpu" "$a_rss" "$a_start" "$a_partial" "$a_lost" "$a_repeated" "${a_xruns:-?}" "$a_frames"
printf '    jack_capture:  CPU %s %%, peak RSS %s KiB, exec->first complete frame %s s, channels apart %s frames, lost %s, repeated %s, xruns %s, frames %s\n' "$j_cpu" "$j_rss" "$j_start" "$j_partial" "$j_lost" "$j_repeated" "${j_xruns:-?}" "$j_frames"
if [ -n "${r:-}" ]; then
  printf '    jack-record:   CPU %s %%, peak RSS %s KiB, exec->first complete frame %s s, channels apart %s frames, lost %s, repeated %s, xruns (not reported by the tool), frames %s\n' "$r_cpu" "$r_rss" "$r_start" "$r_partial" "$r_lost" "$r_repeated" "$r_frames"
else
  echo "    jack-record: not installed (Debian jack-tools)"
fi
printf '    unfinished cycles the server reported (by client): aqjack run: %s; jack_capture run: %s; jack-record run: %s\n' "$a_late" "$j_late" "${r_late:--}"
printf '    aqjack: frames the server skipped %s, its own callbacks longer than their cycle (thread CPU time) %s\n' "${a_skipped:-?}" "${a_slow:-?}"
printf '%s\n' "$a_causes"
floor_line
ratios() {  # REFERENCE CPU RSS START: aqjack's against the reference's, one run
  awk -v name="$1" -v ac="$a_cpu" -v rc="$2" -v ar="$a_rss" -v rr="$3" -v as="$a_start" -v rs="$4" 'BEGIN {
    printf "    ratios aqjack/%s: CPU %.2f, RSS %.2f, start %.2f (one run; the start medians are under \"start\")\n", name, (rc > 0 ? ac / rc : 0), (rr > 0 ? ar / rr : 0), (rs > 0 ? as / rs : 0) }'
}
ratios jack_capture "$j_cpu" "$j_rss" "$j_start"
if [ -n "${r:-}" ]; then ratios jack-record "$r_cpu" "$r_rss" "$r_start"; fi
