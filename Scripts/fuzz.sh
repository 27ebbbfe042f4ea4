#!/usr/bin/env bash
# Fuzzes the parsers (FuzzParsers: AAC cookies, ADTS headers, ADTS/CAF/MPEG-4 packet readers,
# every file the CLI opens through libsndfile and our header checks, growing prefixes of files,
# OSC datagrams, and Apple's entry points for untrusted bytes: AudioFileStreamParseBytes in
# chunks with seeks, AudioFileOpenWithCallbacks with short reads, ExtAudioFileOpenURL) with
# libFuzzer + AddressSanitizer for a bounded time, after replaying every input that ever
# crashed or hung a parser (Tests/FuzzCorpus/regressions.tar.xz).
#
#   Scripts/fuzz.sh [SECONDS] [MIN_EDGES]   defaults 60 and 400
#
# Exits 0 when nothing crashed and the Swift code's coverage reached MIN_EDGES; 1 when coverage
# stayed below (the instrumentation is missing or the corpus is stuck); libFuzzer's code when it
# found a crash (the input is in .build/fuzz-findings).
#
# The seed corpus (.build/fuzz-corpus-4, made on first run) holds a cookie, a config, ADTS
# headers, OSC messages, a MIDI file, small ADTS, CAF and M4A files written by aqjack itself, WAVE, AIFF, CAF
# and FLAC files written by sox, and WAVE, RF64, CAF, ADTS, MP3, M4A and fragmented MP4 for the
# stream targets, each behind the selector byte of the target it is for (FuzzSelector in
# Sources/FuzzParsers/FuzzParsers.swift: 0 cookie, 1 config, 2 ADTS headers, 3 packet files,
# 4 frames, 5 OSC, 6 partial files, 7 AudioFileStream, 8 callbacks, 9 ExtAudioFile, 10 a
# Standard MIDI File). Box and
# chunk names come from Scripts/fuzz.dict.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
min_edges="${2:-400}"
# Without this the Swift backtracer hangs under ASan when a crash is found.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=detect_leaks=0

# A debug build with explicit coverage flags: with this toolchain `--sanitize fuzzer` alone
# leaves the Swift modules uninstrumented (measured: 16 edges, corpus stuck at 7 in 600 s);
# -sanitize-coverage on every Swift module gives libFuzzer their edges and comparisons.
swift build --product FuzzParsers --sanitize fuzzer --sanitize address --build-path .build/fuzzer \
  -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp
binary=.build/fuzzer/debug/FuzzParsers

corpus=.build/fuzz-corpus-4
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
    { printf '\x06'; cat "$work/small.$ext"; } > "$seeds/partial-$ext"
  done
  { printf '\x06'; cat "$work/tone.m4a"; } > "$seeds/partial-m4a"
  { printf '\x04'; cat "$work/tone.caf"; } > "$seeds/frames-caf-aac"
  # OSC messages as aqjack record --osc takes them (address, type tags, arguments).
  # A format 1 MIDI file: a tempo track, then notes with running status and a SysEx.
  printf '\x0aMThd\0\0\0\6\0\1\0\2\x01\xe0MTrk\0\0\0\x0b\0\xff\x51\3\7\xa1\x20\0\xff\x2f\0MTrk\0\0\0\x12\0\x90\x3c\x64\x83\x60\x3c\0\x10\xf0\3\x7e\x7f\xf7\0\xff\x2f\0' > "$seeds/midi-file"
  printf '\x05/aqjack/status\0\0\0,\0\0\0' > "$seeds/osc-status"
  printf '\x05/aqjack/start\0\0\0,s\0\0s3cret\0\0' > "$seeds/osc-token"
  printf '\x05/a\0\0,ifsb\0\0\0\0\0\0\1\x3f\x80\0\0x\0\0\0\0\0\0\2ab\0\0' > "$seeds/osc-mixed"
  # The stream targets: every container Audio File Stream Services reads, behind a schedule
  # byte (chunk sizes and seeks), a read limit, or nothing (ExtAudioFile).
  sox -n -r 8000 -c 2 -b 16 "$work/stream.wav" synth 0.1 sine 440 2>/dev/null
  sox "$work/stream.wav" "$work/stream.caf"
  ffmpeg -loglevel error -y -i "$work/stream.wav" -rf64 always "$work/stream-rf64.wav"
  ffmpeg -loglevel error -y -i "$work/stream.wav" -c:a libmp3lame -b:a 32k "$work/stream.mp3"
  ffmpeg -loglevel error -y -i "$work/stream.wav" -c:a aac -movflags frag_keyframe+empty_moov+default_base_moof \
    -frag_duration 50000 "$work/stream-frag.mp4"
  for source in stream.wav stream.caf stream-rf64.wav stream.mp3 stream-frag.mp4 tone.aac tone.caf tone.m4a alac.m4a; do
    for schedule in 1 4 200; do
      { printf "\\x07\\x$(printf %02x $schedule)"; cat "$work/$source"; } > "$seeds/stream-$schedule-$source"
    done
    { printf '\x08\x0c'; cat "$work/$source"; } > "$seeds/callbacks-$source"
    { printf '\x09'; cat "$work/$source"; } > "$seeds/ext-$source"
  done
  mv "$seeds" "$corpus"
fi

findings=.build/fuzz-findings
mkdir -p "$findings"
# Every input that ever crashed or hung a parser, replayed first (libFuzzer runs every input of
# every corpus folder before it mutates; a crash there fails the run). New findings go into
# $findings; once fixed, add them to the archive.
regressions=.build/fuzz-regressions
rm -rf "$regressions"
mkdir -p "$regressions"
tar -C "$regressions" -xJf Tests/FuzzCorpus/regressions.tar.xz
echo "fuzz.sh: running FuzzParsers for ${seconds} s on $(ls "$corpus" | wc -l) seeds and $(ls "$regressions" | wc -l) regression inputs" >&2
log=.build/fuzz-last.log
set +e
"$binary" "$corpus" "$regressions" -dict=Scripts/fuzz.dict -max_total_time="$seconds" -artifact_prefix="$findings/" -print_final_stats=1 \
  -rss_limit_mb=4096 -timeout=10 >"$log" 2>&1
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
