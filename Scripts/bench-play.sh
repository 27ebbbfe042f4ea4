#!/usr/bin/env bash
# Player comparison, run by Scripts/bench.sh inside a private dummy server at period 64:
# aqjack play and sndfile-jackplay play the same 16-channel float WAV of SECONDS seconds into the
# physical playback ports, one after the other. Prints CPU % and peak RSS of each (GNU time),
# aqjack's underrun count (sndfile-jackplay reports none), and the ratios aqjack/sndfile-jackplay.
set -uo pipefail
seconds=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sox -n -r 48000 -c 16 -e floating-point -b 32 "$work/in.wav" synth "$seconds" sine 440 gain -6 2>/dev/null \
  || { echo "  (sox could not make the 16-channel test file)"; exit 0; }

/usr/bin/time -f "%P %M" -o "$work/a.time" .build/release/aqjack play --json --name bench-play "$work/in.wav" > "$work/a.json" 2>/dev/null
/usr/bin/time -f "%P %M" -o "$work/s.time" sndfile-jackplay "$work/in.wav" > "$work/s.log" 2>&1 < /dev/null
read -r a_cpu a_rss < "$work/a.time"
read -r s_cpu s_rss < "$work/s.time"
underruns=$(grep -o '"underrunFrames":[0-9]*' "$work/a.json" | cut -d: -f2)
printf '  16 channels, %s s, float WAV, period 64:\n' "$seconds"
printf '    aqjack play:      CPU %s, peak RSS %s KiB, underrun frames %s\n' "$a_cpu" "$a_rss" "${underruns:-?}"
printf '    sndfile-jackplay: CPU %s, peak RSS %s KiB, underruns (not reported by the tool)\n' "$s_cpu" "$s_rss"
awk -v ac="${a_cpu%\%}" -v sc="${s_cpu%\%}" -v ar="$a_rss" -v sr="$s_rss" 'BEGIN {
  printf "    ratios aqjack/sndfile-jackplay: CPU %.2f, RSS %.2f\n", (sc > 0 ? ac / sc : 0), (sr > 0 ? ar / sr : 0) }'
