#!/usr/bin/env bash
# Fuzzes the compressed-audio parsers (FuzzParsers: AAC cookies, ADTS headers, ADTS/CAF/MPEG-4
# packet readers) with libFuzzer + AddressSanitizer for a bounded time.
#
#   Scripts/fuzz.sh [SECONDS]      default 60; exit 0 when nothing crashed, else libFuzzer's code
#
# The seed corpus (Scripts/fuzz-corpus, made on first run) holds a cookie, a config, ADTS
# headers and small ADTS, CAF and M4A files written by aqjack itself.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
# Without this the Swift backtracer hangs under ASan when a crash is found (NOTES.md §4).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=detect_leaks=0

# A debug build: measured here, the release build's coverage stays at 13 edges (the
# instrumentation does not reach the parser modules), the debug build's reaches ~480.
swift build --product FuzzParsers --sanitize fuzzer --sanitize address --build-path .build/fuzzer
binary=.build/fuzzer/debug/FuzzParsers

corpus=.build/fuzz-corpus
if [ ! -d "$corpus" ]; then
  # Made in a scratch folder and moved into place, so a failure leaves no empty corpus behind.
  swift build -c release --product aqjack
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  seeds="$work/seeds"
  mkdir -p "$seeds"
  sox -n -r 44100 -c 2 -b 16 "$work/tone.wav" synth 0.3 sine 440 sine 660
  for ext in aac caf m4a; do
    args=()
    [ "$ext" = caf ] && args=(--codec aac)
    .build/release/aqjack convert "$work/tone.wav" "$work/tone.$ext" "${args[@]}" >/dev/null
    { printf '\x03'; cat "$work/tone.$ext"; } > "$seeds/file-$ext"
  done
  .build/release/aqjack convert "$work/tone.wav" "$work/alac.m4a" --codec alac >/dev/null
  { printf '\x03'; cat "$work/alac.m4a"; } > "$seeds/file-alac-m4a"
  { printf '\x02'; head -c 2000 "$work/tone.aac"; } > "$seeds/adts-headers"
  # An ES_Descriptor as Core Audio writes it, and a bare AudioSpecificConfig.
  printf '\x00\x03\x80\x80\x80\x22\x00\x00\x00\x04\x80\x80\x80\x14\x40\x15\x00\x06\x00\x00\x01\xf4\x00\x00\x01\xf4\x00\x05\x80\x80\x80\x02\x12\x10\x06\x80\x80\x80\x01\x02' > "$seeds/cookie"
  printf '\x01\x12\x10' > "$seeds/config"
  mv "$seeds" "$corpus"
fi

findings=.build/fuzz-findings
mkdir -p "$findings"
echo "fuzz.sh: running FuzzParsers for ${seconds} s on $(ls "$corpus" | wc -l) seeds" >&2
"$binary" "$corpus" -max_total_time="$seconds" -artifact_prefix="$findings/" -print_final_stats=1 2>&1 | tail -n 25
