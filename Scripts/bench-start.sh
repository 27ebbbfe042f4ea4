#!/usr/bin/env bash
# Start-up comparison, run by Scripts/bench.sh inside a private dummy server (period 128):
#   record CHANNELS RUNS: exec -> first frame in which every channel has signal, for
#     `aqjack record`, jack_capture and jack-record (each recording 1 s of a CHANNELS-port
#     test-signal generator, in turn), and the frames by which the channels started apart;
#   play CHANNELS RUNS: exec -> first frame in which every channel of a CHANNELS-channel float
#     WAV (no zero sample) has reached a stand-in sound card (`aqbench sink`, physical ports),
#     for `aqjack play`, sndfile-jackplay and jack-play, in turn.
# Prints each run and the medians, and the ratios of the medians (aqjack / reference). A run
# with no complete frame prints "-"; a tool that never got one prints its last message.
set -uo pipefail
mode=$1; channels=$2; runs=$3
work=$(mktemp -d)
helper=
trap '[ -n "$helper" ] && kill "$helper" 2>/dev/null; rm -rf "$work"' EXIT
rate=48000
period=$((1 << 19))   # TestSignal.framePeriod: frame times are compared mod this

wait_ready() { for _ in $(seq 1 200); do grep -q ready "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# One recorder run: prints "SECONDS APART" (or "- -" when the file shows no complete frame).
record_run() {  # command...
  rm -f "$work/rec.wav"
  local exec_frame; exec_frame=$(.build/release/aqbench frame)
  "$@" > "$work/rec.log" 2>&1
  local analysis; analysis=$(.build/release/aqbench analyze "$work/rec.wav" "$channels" "$exec_frame" "$rate" 2>/dev/null)
  set -- $analysis ""
  [ "${8:-}" != "" ] && [ "${8}" != -1.000 ] && echo "${8} $4" || echo "- -"
}

# One player run: starts a fresh sink, plays, prints "SECONDS APART".
play_run() {  # command...
  .build/release/aqbench sink "$channels" 20 > "$work/sink.out" 2>&1 &
  local sink=$!
  wait_ready "$work/sink.out" || { kill "$sink"; echo "- -"; return; }
  local exec_frame; exec_frame=$(.build/release/aqbench frame)
  # aqjack notes each phase of its start against this (StartTrace); other players ignore it.
  AQJACK_START_TRACE=$(date +%s%N) "$@" > "$work/play.log" 2>&1 &
  local player=$!
  wait "$sink"
  wait "$player"
  grep '^aqjack: start:' "$work/play.log" >> "$work/phases" 2>/dev/null
  set -- $(grep -E '^(complete|incomplete)' "$work/sink.out") "" ""
  [ "$1" = complete ] && awk -v f="$2" -v e="$exec_frame" -v p="$period" -v r="$rate" -v a="$4" 'BEGIN { d = f - e; if (d < 0) d += p; printf "%.3f %d\n", d / r, a }' || echo "- -"
}

ours=(); theirs=(); third=(); ours_apart=0; theirs_apart=0; third_apart=0
third_name=; third_message=
case "$mode" in
  record)
    .build/release/aqbench generate "$channels" $((runs * 8 + 30)) > "$work/gen.out" &
    helper=$!
    wait_ready "$work/gen.out" || { echo "  (the generator did not start)"; exit 0; }
    reference=jack_capture
    for _ in $(seq 1 "$runs"); do
      read -r s a < <(record_run .build/release/aqjack record --name bench-rec -p 'bench-gen:out_*' -d 1 --no-meter "$work/rec.wav")
      ours+=("$s"); [ "$a" != - ] && [ "$a" -gt "$ours_apart" ] && ours_apart=$a
      read -r s a < <(record_run jack_capture --daemon -c "$channels" -p 'bench-gen:out_*' -d 1 -fn "$work/rec.wav")
      theirs+=("$s"); [ "$a" != - ] && [ "$a" -gt "$theirs_apart" ] && theirs_apart=$a
      if command -v jack-record >/dev/null; then
        third_name=jack-record
        read -r s a < <(record_run jack-record -n "$channels" -p 'bench-gen:out_%d' -t 1 "$work/rec.wav")
        third+=("$s"); [ "$a" != - ] && [ "$a" -gt "$third_apart" ] && third_apart=$a
        [ "$s" = - ] && third_message=$(tail -n 1 "$work/rec.log")
      fi
    done ;;
  play)
    sox -V1 -n -r "$rate" -c "$channels" -e floating-point -b 32 "$work/in.wav" synth 2 sine 440 gain -12 dcshift 0.5 \
      || { echo "  (sox could not make the test file)"; exit 0; }
    reference=sndfile-jackplay
    for _ in $(seq 1 "$runs"); do
      read -r s a < <(play_run .build/release/aqjack play --name bench-play -p 'bench-sink:playback_*' "$work/in.wav")
      ours+=("$s"); [ "$a" != - ] && [ "$a" -gt "$ours_apart" ] && ours_apart=$a
      read -r s a < <(play_run sndfile-jackplay --autoconnect='bench-sink:playback_%d' "$work/in.wav")
      theirs+=("$s"); [ "$a" != - ] && [ "$a" -gt "$theirs_apart" ] && theirs_apart=$a
      # A player that got no complete frame in its first run is not run again (each run that
      # fails waits out the sink's 20 s).
      if command -v jack-play >/dev/null && { [ "${#third[@]}" -eq 0 ] || [ "${third[0]}" != - ]; }; then
        # jack-play connects its port i to JACK_PLAY_CONNECT_TO with i in place of %d.
        third_name=jack-play
        read -r s a < <(JACK_PLAY_CONNECT_TO='bench-sink:playback_%d' play_run jack-play "$work/in.wav")
        third+=("$s"); [ "$a" != - ] && [ "$a" -gt "$third_apart" ] && third_apart=$a
        [ "$s" = - ] && third_message=$(grep -v '^jack-play: /' "$work/play.log" | tail -n 1)
      fi
    done ;;
  *) echo "bench-start.sh: expected record or play, got '$mode'" >&2; exit 2 ;;
esac
a=$(median "${ours[@]}"); b=$(median "${theirs[@]}")
printf '  %s, %s channels, exec -> first complete frame, %s runs each (s):\n' "$mode" "$channels" "$runs"
printf '    aqjack %-9s %s  median %s, channels apart at most %s frames\n' "$mode:" "${ours[*]}" "$a" "$ours_apart"
printf '    %-16s %s  median %s, channels apart at most %s frames\n' "$reference:" "${theirs[*]}" "$b" "$theirs_apart"
awk -v a="$a" -v b="$b" -v r="$reference" 'BEGIN { printf "    ratio of medians aqjack/%s: %.2f\n", r, (b > 0 ? a / b : 0) }'
if [ -n "$third_name" ]; then
  done_runs=(); for v in "${third[@]}"; do [ "$v" != - ] && done_runs+=("$v"); done
  if [ "${#done_runs[@]}" -gt 0 ]; then
    c=$(median "${done_runs[@]}")
    printf '    %-16s %s  median %s (of %s complete), channels apart at most %s frames\n' "$third_name:" "${third[*]}" "$c" "${#done_runs[@]}" "$third_apart"
    awk -v a="$a" -v c="$c" -v r="$third_name" 'BEGIN { printf "    ratio of medians aqjack/%s: %.2f\n", r, (c > 0 ? a / c : 0) }'
  else
    printf '    %-16s no complete frame in %s runs (its last message: %s)\n' "$third_name:" "${#third[@]}" "${third_message:-none}"
  fi
fi
# Where aqjack play's start went (AQJACK_START_TRACE): the median time since exec at which each
# phase ended, ms: main (runtime up), files (opened, read-ahead begun), client (JACK client
# open), queue (ports registered, ring made, activated), connected, filled (first buffers),
# started (start frame armed). The first complete frame comes after that.
if [ -s "$work/phases" ]; then
  printf '    aqjack play phases, median ms since exec:'
  awk '{ for (i = 3; i < NF; i += 2) { v[$i] = v[$i] " " $(i + 1); if (!($i in seen)) { seen[$i] = 1; order[++n] = $i } } }
    END { for (k = 1; k <= n; k++) { cmd = "echo" v[order[k]] " | tr \" \" \"\\n\" | sort -n"; m = 0; c = 0
            while ((cmd | getline x) > 0) { c++; a[c] = x } close(cmd)
            printf " %s %.1f", order[k], (c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2) }
          printf "\n" }' "$work/phases"
fi
