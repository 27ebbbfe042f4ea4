#!/usr/bin/env bash
# Fuzzes the parsers (FuzzParsers: AAC cookies, ADTS headers, ADTS/CAF/MPEG-4 packet readers,
# every file the CLI opens through libsndfile and our header checks, and growing prefixes of
# files) with libFuzzer + AddressSanitizer for a bounded time.
#
#   Scripts/fuzz.sh [SECONDS] [MIN_EDGES]   defaults 60 and 400
#
# Exits 0 when nothing crashed and the Swift code's coverage reached MIN_EDGES; 1 when coverage
# stayed below (the instrumentation is missing or the corpus is stuck); libFuzzer's code when it
# found a crash (the input is in .build/fuzz-findings).
#
# The seed corpus (.build/fuzz-corpus, made on first run) holds a cookie, a config, ADTS
# headers, small ADTS, CAF and M4A files written by aqjack itself, and WAVE, AIFF, CAF and FLAC
# files written by sox, each behind the selector byte of the parser it is for.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
min_edges="${2:-400}"
# Without this the Swift backtracer hangs under ASan when a crash is found (NOTES.md §4).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=detect_leaks=0

# A debug build with explicit coverage flags: with this toolchain `--sanitize fuzzer` alone
# leaves the Swift modules uninstrumented (measured: 16 edges, corpus stuck at 7 in 600 s);
# -sanitize-coverage on every Swift module gives libFuzzer their edges and comparisons.
swift build --product FuzzParsers --sanitize fuzzer --sanitize address --build-path .build/fuzzer \
  -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp
binary=.build/fuzzer/debug/FuzzParsers

corpus=.build/fuzz-corpus-2
if [ ! -d "$corpus" ]; then
  # Made in a scratch folder and moved into place, so a failure leaves no empty corpus behind.
  Scripts/build-release.sh
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
  # Files the CLI opens through libsndfile: whole (selector 4) and as growing prefixes (5).
  for kind in wav:16 aiff:24 caf:16 flac:16 w64:32; do
    ext=${kind%%:*}; bits=${kind##*:}
    sox -n -r 8000 -c 2 -b "$bits" "$work/small.$ext" synth 0.05 sine 440 2>/dev/null
    { printf '\x04'; cat "$work/small.$ext"; } > "$seeds/sndfile-$ext"
    { printf '\x05'; cat "$work/small.$ext"; } > "$seeds/partial-$ext"
  done
  { printf '\x05'; cat "$work/tone.m4a"; } > "$seeds/partial-m4a"
  { printf '\x04'; cat "$work/tone.caf"; } > "$seeds/frames-caf-aac"
  mv "$seeds" "$corpus"
fi

findings=.build/fuzz-findings
mkdir -p "$findings"
echo "fuzz.sh: running FuzzParsers for ${seconds} s on $(ls "$corpus" | wc -l) seeds" >&2
log=.build/fuzz-last.log
set +e
"$binary" "$corpus" -max_total_time="$seconds" -artifact_prefix="$findings/" -print_final_stats=1 -rss_limit_mb=4096 >"$log" 2>&1
status=$?
set -e
tail -n 25 "$log"
[ "$status" -eq 0 ] || { echo "fuzz.sh: libFuzzer exited $status: a finding is in $findings" >&2; exit "$status"; }
# The last status line's coverage ("#N DONE cov: E ft: F corp: ..."), and the run's figures.
edges=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | awk '{print $2}')
execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}')
corpus_size=$(grep -o 'corp: [0-9]*' "$log" | tail -n 1 | awk '{print $2}')
echo "fuzz.sh: ${seconds} s, ${execs:-?} executions, ${edges:-0} edges, corpus ${corpus_size:-?} inputs, no crash" >&2
if [ "${edges:-0}" -lt "$min_edges" ]; then
  echo "fuzz.sh: coverage ${edges:-0} edges is under the floor of $min_edges: the Swift code is not instrumented or the corpus is stuck" >&2
  exit 1
fi
