#!/usr/bin/env bash
# Prints aqjack's benchmark figures, each against a reference measured in the same run:
# ring vs memcpy, capture process cycle as a fraction of the period (2, 64, 256 channels at
# period 128), `aqjack --ports` vs `jack_lsp -c -l` on one private dummy server, and
# `aqjack record` vs jack_capture and jack-record at 64, 256 and 1024 channels and aqjack alone at 2040 (at
# period 128 and again at 1024) (Scripts/bench-record.sh; BENCH_RECORD_SECONDS, default 60), each
# size with the host's floor for lost frames (Scripts/floor-client.c: a C client that only copies
# as many ports, on the same server and generator), the start of record vs
# jack_capture and jack-record and of play vs sndfile-jackplay and jack-play (medians of 9 and 25, Scripts/bench-start.sh), and `aqjack play` vs sndfile-jackplay on a 16-channel file
# at period 64 (Scripts/bench-play.sh; BENCH_PLAY_SECONDS, default 30), LV2 plugins against
# lv2apply and jalv (Scripts/bench-plugins.sh), a graph of 8 plugins against 8 jalv processes and
# 8 lv2apply runs (Scripts/bench-graph.sh), the host's control socket under 100 commands a
# second for 60 s (Scripts/host-load.sh), `record --http` with 50 WebSocket clients against none
# (Scripts/bench-web.sh; BENCH_WEB_SECONDS, default 60), and `aqjack convert`
# vs `ffmpeg -c:a aac` (WAV → AAC) and vs `sox rate` (48 → 44.1 kHz) (Scripts/bench-convert.sh;
# BENCH_CONVERT_SECONDS, default 60), and offline rendering through an output queue
# (AudioQueueOfflineRender's engine, no server) of a 10-minute 16-bit AIFF vs `sox` decoding it.
# Reports only: never fails the test run.
#
# Everything it prints also goes to docs/BENCHMARKS.md (BENCH_OUTPUT), under a heading that says
# when, on which commit and machine, with which durations, and how the runs of each row spread:
# the file is this script's output, not written by hand.
set -uo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."
output=${BENCH_OUTPUT:-docs/BENCHMARKS.md}
log=$(mktemp)
# Reruns this script with its output copied to $log, then writes $output from it.
if [ -z "${AQJACK_BENCH_INNER:-}" ]; then
  started=$(date -u '+%Y-%m-%d %H:%M UTC')
  AQJACK_BENCH_INNER=1 bash "$self" "$@" 2>&1 | tee "$log"
  {
    echo "# Benchmarks"
    echo
    echo "Written by \`bash Scripts/bench.sh\` (do not edit: run it again). Started $started on commit"
    echo "\`$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\`, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')),"
    echo "$(free -g | awk '/Mem:/ { print $2 }') GiB, $(uname -sr), jackd $(jackd --version 2>/dev/null | grep -o 'version [0-9.]*' | head -1 | cut -d' ' -f2) (dummy backend)."
    echo "Durations: recordings ${BENCH_RECORD_SECONDS:-60} s, playback ${BENCH_PLAY_SECONDS:-30} s, conversions ${BENCH_CONVERT_SECONDS:-60} s."
    echo
    echo "Every figure is against a reference measured in the same run, on the same server. A start"
    echo "lists every run beside its median: a difference of medians inside those runs' spread is"
    echo "parity. What each row measures: docs/TESTING.md (the paragraph on Scripts/bench.sh)."
    echo
    echo '```'
    grep -v '^\s*$' "$log"
    echo '```'
  } > "$output"
  rm -f "$log"
  echo "bench.sh: wrote $output"
  exit 0
fi
rm -f "$log"
Scripts/setup.sh --deps >/dev/null
# The reference recorders and players, and GNU time, for the comparisons only.
if ! command -v jack_capture >/dev/null || ! command -v jack-record >/dev/null || ! command -v sndfile-jackplay >/dev/null || [ ! -x /usr/bin/time ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends jack-capture jack-tools sndfile-tools time >/dev/null 2>&1 || true
fi
Scripts/build-release.sh >/dev/null || exit 0
Scripts/with-dummy-jack.sh --period 128 -- .build/release/aqbench .build/release/aqjack || true
# How busy the host is: a 1-channel generator alone for 10 s, and the cycles jackd found it had
# not finished (a client that does almost nothing: every one is the host's, not aqjack's).
cat > "${TMPDIR:-/tmp}/aqjack-baseline.sh" <<'BASELINE'
log="${TMPDIR:-/tmp}/jackd-${JACK_DEFAULT_SERVER}.log"
before=$(wc -l < "$log")
.build/release/aqbench generate 1 10 > /dev/null 2>&1
echo "== host: a 1-channel generator alone for 10 s at period 128: $(tail -n +$((before + 1)) "$log" | grep -c 'was not finished') unfinished cycles (the host's, the baseline for every loss below)"
BASELINE
Scripts/with-dummy-jack.sh --period 128 -- bash "${TMPDIR:-/tmp}/aqjack-baseline.sh" || true
seconds=${BENCH_RECORD_SECONDS:-60}
echo "== recording ${seconds} s with aqjack record, jack_capture and jack-record (same server, one after the other; which of the first two goes first alternates, jack-record is third)"
first=jack_capture
for channels in 64 256 1024 2040; do
  # Each step starts once the previous step's freed memory is back with the hypervisor.
  Scripts/wait-memory-quiet.sh
  # 4096 ports: the generator's and a recorder's 2040 each fit (JACK2's maximum).
  BENCH_RECORD_FIRST=$first Scripts/with-dummy-jack.sh --period 128 --port-max 4096 -- Scripts/bench-record.sh "$channels" "$seconds" || true
  first=$([ $first = aqjack ] && echo jack_capture || echo aqjack)
done
# At period 128 this 2-core VM skips frames at 2040 channels whatever records (the generator
# alone is late thousands of times a minute), so 0 lost frames there cannot be shown. The same
# recording at period 1024 (21 ms cycles, so the host's wake-up delays fit in them) separates aqjack from
# the host: measured at 20 s, 0 lost, 0 ring overruns, 0 xruns, both files bit-exact, 0 frames
# skipped by the server. After the period-128 step it lost 4,096-34,816 frames in four runs,
# all skipped by the server while the hypervisor took back that step's 23 GB of freed page
# cache; the wait below (Scripts/wait-memory-quiet.sh) keeps that out of the measurement.
echo "== recording ${seconds} s of 2040 channels again at period 1024 (aqjack alone)"
Scripts/wait-memory-quiet.sh
Scripts/with-dummy-jack.sh --period 1024 --port-max 4096 -- Scripts/bench-record.sh 2040 "$seconds" || true
echo "== start: exec -> first frame with every channel, median of 9 (play: 25) (same server, the tools in turn)"
# Single starts of either tool spread by +-30 % on this host (play, 256 channels: 0.089-0.162 s
# in 15 runs), so the medians take 9 and 25 runs.
for channels in 64 256 1024; do
  Scripts/with-dummy-jack.sh --period 128 --port-max 4096 -- Scripts/bench-start.sh record "$channels" 9 || true
done
Scripts/with-dummy-jack.sh --period 128 --port-max 4096 -- Scripts/bench-start.sh play 256 25 || true
echo "== playing ${BENCH_PLAY_SECONDS:-30} s with aqjack play and sndfile-jackplay (same server, period 64)"
Scripts/with-dummy-jack.sh --period 64 -- Scripts/bench-play.sh "${BENCH_PLAY_SECONDS:-30}" || true
echo "== LV2 plugins: offline against lv2apply, the live host's callback, aqjack host against jalv"
Scripts/with-dummy-jack.sh --period 128 -- Scripts/bench-plugins.sh || true
echo "== a graph of 8 LV2 plugins: aqjack host --graph against 8 jalv, convert --graph against 8 lv2apply runs"
Scripts/with-dummy-jack.sh --period 128 -- bash Scripts/bench-graph.sh || true
echo "== the control socket under load: 100 commands a second for 60 s against aqjack host (Scripts/host-load.sh)"
Scripts/with-dummy-jack.sh --period 128 -- bash Scripts/host-load.sh 60 100 || true
echo "== record --http: CPU with 50 WebSocket clients on /live against none, 64 channels, 3 runs each (Scripts/bench-web.sh)"
Scripts/with-dummy-jack.sh --period 128 -- bash Scripts/bench-web.sh 64 "${BENCH_WEB_SECONDS:-60}" 50 3 || true
echo "== converting with aqjack convert, ffmpeg and sox (same files)"
Scripts/bench-convert.sh "${BENCH_CONVERT_SECONDS:-60}" || true
echo "== offline render: an output queue in offline mode (no server) vs sox decoding the same 600 s 16-bit stereo AIFF to float (both to /dev/null; median of 5 runs each, alternating)"
work=$(mktemp -d)
sox -V1 -n -r 48000 -c 2 -b 16 "$work/in.aiff" synth 600 sine 440 sine 660 vol 0.5
seconds() { local start end; start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N); echo $(( (end - start) / 1000 )); }
aq=(); sx=()
for _ in 1 2 3 4 5; do
  aq+=("$(seconds .build/release/aqbench offline-render "$work/in.aiff")")
  sx+=("$(seconds sox -V1 "$work/in.aiff" -e float -b 32 -t raw /dev/null)")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
a=$(median "${aq[@]}"); b=$(median "${sx[@]}")
echo "  aqbench offline-render $(awk -v a="$a" 'BEGIN { printf "%.3f", a / 1e6 }') s ($(awk -v a="$a" 'BEGIN { printf "%.0f", 600 / (a / 1e6) }')x real time), sox $(awk -v b="$b" 'BEGIN { printf "%.3f", b / 1e6 }') s: time ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
rm -rf "$work"
