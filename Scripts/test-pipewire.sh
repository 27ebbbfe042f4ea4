#!/usr/bin/env bash
# The PipeWire lane: aqjack on PipeWire's JACK (Debian pipewire, pipewire-jack), headless: a
# private pipewire with a null sink (no session bus, no hardware, no wireplumber), every client
# through pw-jack. Installs what it needs, builds release, checks, stops pipewire by PID.
#
#   Scripts/test-pipewire.sh
#
# What it checks (each prints PASS or FAIL; the exit status is the number of failures):
#   1. aqjack --ports --json lists the null sink's playback ports;
#   2. aqjack demo: the test signal played and recorded back bit-exact at the scheduled frame;
#   3. aqjack record of a 2-channel test-signal generator for 2 s: every sample bit-exact from
#      one start frame (aqbench verify);
#   4. aqjack play of a 1 s file into the null sink: exit 0, every frame played, no underrun.
# Known differences from jackd (docs/JACK.md, "PipeWire"): the quantum is the config's minimum (1024
# here; jack_bufsize is ignored), freewheel processes no frames (render offline instead: the
# offline driver), ports carry other aliases and physical names.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! command -v pipewire >/dev/null || ! command -v pw-jack >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends pipewire pipewire-bin pipewire-jack >/dev/null 2>&1 \
    || { echo "test-pipewire.sh: cannot install pipewire and pipewire-jack" >&2; exit 1; }
fi
Scripts/setup.sh --deps >/dev/null
Scripts/build-release.sh >/dev/null || { echo "test-pipewire.sh: the release build failed" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/aqjack-pipewire.XXXXXX")
export XDG_RUNTIME_DIR="$work/run"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# minimal.conf with its ALSA source and sink replaced by one null sink.
python3 Scripts/pipewire-null-sink.py /usr/share/pipewire/minimal.conf "$work/pipewire.conf" || exit 1
pipewire -c "$work/pipewire.conf" > "$work/pipewire.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do pw-jack jack_lsp > /dev/null 2>&1 && break; sleep 0.1; done
if ! pw-jack jack_lsp > /dev/null 2>&1; then
  echo "test-pipewire.sh: pipewire did not come up:"; tail -20 "$work/pipewire.log"; exit 1
fi
echo "test-pipewire.sh: pipewire (pid $pid) running headless with a null sink; ports: $(pw-jack jack_lsp | tr '\n' ' ')"

failures=0
check() {  # NAME CONDITION-STATUS DETAIL
  if [ "$2" -eq 0 ]; then echo "PASS $1 $3"; else echo "FAIL $1 $3"; failures=$((failures + 1)); fi
}
aq=.build/release/aqjack
bench=.build/release/aqbench

ports=$(timeout 30 pw-jack "$aq" --ports --json 2>&1)
echo "$ports" | grep -q '"input"'; check "ports" $? "(aqjack --ports --json lists $(echo "$ports" | grep -o 'aqjack-null-sink:playback_[A-Z]*' | sort -u | tr '\n' ' '))"

demo=$(timeout 60 pw-jack "$aq" demo "$work/demo.wav" 2>&1); status=$?
check "demo" $status "($(echo "$demo" | grep -o 'check: [^—]*' | head -1))"

timeout 40 pw-jack "$bench" generate 2 30 > "$work/gen.out" 2>&1 &
generator=$!
for _ in $(seq 1 100); do grep -q ready "$work/gen.out" && break; sleep 0.05; done
timeout 30 pw-jack "$aq" record --json --no-meter -p 'bench-gen:out_*' -d 2 "$work/rec.wav" > "$work/rec.json" 2> "$work/rec.err"; status=$?
kill "$generator" 2>/dev/null; wait "$generator" 2>/dev/null
start=$(grep -o '"startFrameTime":[0-9]*' "$work/rec.json" | cut -d: -f2)
if [ "$status" -eq 0 ] && [ -n "$start" ]; then
  set -- $(pw-jack "$bench" verify "$work/rec.wav" 2 "$start" 0)
  [ "${2:-0}" -eq 96000 ] && [ "${4:-1}" -eq 0 ]; check "record" $? "(2 s of 2 channels: $2 frames, $4 samples wrong, from frame $start)"
else
  check "record" 1 "(exit $status: $(cat "$work/rec.err"))"
fi

sox -V1 -n -r 48000 -c 2 -b 16 "$work/tone.wav" synth 1 sine 440 vol 0.5
play=$(timeout 30 pw-jack "$aq" play --json "$work/tone.wav" 2>&1); status=$?
played=$(echo "$play" | grep -o '"framesPlayed":[0-9]*' | cut -d: -f2)
underruns=$(echo "$play" | grep -o '"underrunFrames":[0-9]*' | cut -d: -f2)
[ "$status" -eq 0 ] && [ "${played:-0}" -eq 48000 ] && [ "${underruns:-1}" -eq 0 ]; check "play" $? "(exit $status, $played frames played, $underruns underrun frames)"

echo "test-pipewire.sh: $failures failure(s)"
exit "$failures"
