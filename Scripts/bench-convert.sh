#!/usr/bin/env bash
# aqjack convert against the reference tools, on the same files in the same run:
#  1. WAV → AAC 128 kbit/s: `aqjack convert` vs `ffmpeg -c:a aac` on a 60 s stereo 16-bit
#     44.1 kHz multi-sine (MultiSine: an A-major triad with harmonics): wall-time ratio (median
#     of 5, alternating), and the
#     SNR of each decoded by ffmpeg against the input (best of lags 0/1024/2048: M4A edit lists
#     trim the priming).
#  2. 48 kHz → 44.1 kHz float, 60 s stereo: `aqjack convert -r 44100` with libsoxr (the
#     default) at best and medium quality and with libsamplerate best, vs `sox ... rate` (sox's
#     default, high quality) and `rate -v`: wall-time ratio (median of 3), and the SNR of each
#     against the signal computed at 44.1 kHz. Files go in and out through libsndfile
#     (`aqbench float-wav` / `wav-f32`), not sox, whose internal 32-bit integers alone cost a
#     float signal 138 dB.
# Reports only: never fails.  Usage: Scripts/bench-convert.sh [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
aqjack=.build/release/aqjack
aqbench=.build/release/aqbench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wall() { /usr/bin/time -f %e -o "$work/time" "$@" >/dev/null 2>&1; cat "$work/time"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

"$aqbench" multisine "$seconds" 44100 2 > "$work/in.f32"
sox -V1 -D -t f32 -r 44100 -c 2 "$work/in.f32" -b 16 -e signed-integer "$work/in.wav"   # -D: no dither, so the run repeats exactly
sox -V1 "$work/in.wav" -t f32 "$work/in16.f32"   # the reference: the input as it is in the WAV
# Median of 5, alternating: single runs of either spread from 1.20 to 1.50 s here (one run each
# once gave 1.13, the medians of 7 0.95).
as=(); fs=()
for _ in 1 2 3 4 5; do
  as+=("$(wall "$aqjack" convert "$work/in.wav" "$work/aqjack.m4a" --bitrate 128000 --force)")
  fs+=("$(wall ffmpeg -v error -y -i "$work/in.wav" -c:a aac -b:a 128k "$work/ffmpeg.m4a")")
done
median5() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
a=$(median5 "${as[@]}"); f=$(median5 "${fs[@]}")
ffmpeg -v error -y -i "$work/aqjack.m4a" -f f32le "$work/aqjack.f32"
ffmpeg -v error -y -i "$work/ffmpeg.m4a" -f f32le "$work/ffmpeg.f32"
echo "  WAV → AAC 128 kbit/s, ${seconds} s stereo 44.1 kHz, median of 5: aqjack convert ${a} s, ffmpeg -c:a aac ${f} s, time ratio $(ratio "$a" "$f")"
echo "    SNR decoded vs input: aqjack $("$aqbench" snr "$work/in16.f32" "$work/aqjack.f32" 2 0,1024,2048 0), ffmpeg $("$aqbench" snr "$work/in16.f32" "$work/ffmpeg.f32" 2 0,1024,2048 0)"

"$aqbench" multisine "$seconds" 48000 2 > "$work/in48.f32"
"$aqbench" multisine "$seconds" 44100 2 > "$work/ideal44.f32"
"$aqbench" float-wav "$work/in48.f32" 48000 2 "$work/in48.wav"
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
timed3() { local a b c; a=$(wall "$@"); b=$(wall "$@"); c=$(wall "$@"); median3 "$a" "$b" "$c"; }
snr44() { "$aqbench" wav-f32 "$1" "$work/out.f32"; "$aqbench" snr "$work/ideal44.f32" "$work/out.f32" 2 -2,-1,0,1,2 1000; }
s=$(timed3 sox -V1 "$work/in48.wav" -e float -b 32 "$work/sox44.wav" rate 44100)
echo "  sox rate (default, high quality): ${s} s, SNR $(snr44 "$work/sox44.wav")"
v=$(timed3 sox -V1 "$work/in48.wav" -e float -b 32 "$work/sox44v.wav" rate -v 44100)
echo "  sox rate -v (very high quality): ${v} s, SNR $(snr44 "$work/sox44v.wav")"
for engine in soxr libsamplerate; do
  for quality in best medium; do
    [ "$engine" = libsamplerate ] && [ "$quality" = medium ] && continue
    a=$(timed3 "$aqjack" convert "$work/in48.wav" "$work/aq44.wav" -r 44100 --src-quality "$quality" --resampler "$engine" --force)
    echo "  48 kHz → 44.1 kHz float, ${seconds} s stereo: aqjack convert --resampler $engine --src-quality $quality ${a} s, SNR $(snr44 "$work/aq44.wav"); time ratio to sox rate $(ratio "$a" "$s"), to sox rate -v $(ratio "$a" "$v")"
  done
done
