#!/usr/bin/env bash
# Installs what aqjack needs from Debian (idempotent; as root, or with sudo) and builds release.
#
#   Scripts/setup.sh            install missing packages, then Scripts/build-release.sh
#   Scripts/setup.sh --deps     install missing packages only
set -euo pipefail
cd "$(dirname "$0")/.."

# Build: the C libraries' headers. Run: jackd (server and example clients). Tests: sox, ffprobe,
# real LV2 plugins (swh-lv2, mda-lv2; x42-plugins for MIDI outputs, blop-lv2 for CV ports) and
# lv2ls (lilv-utils) to compare listings with, LADSPA's
# header (ladspa-sdk) and real LADSPA plugins (swh-plugins, cmt, tap-plugins), gcc for
# the tests' own LV2 plugin, python3 for reading the JACK suite's results (Scripts/jack-suite.sh).
# Web: civetweb (--http's server), and for its tests chromium with chromedriver (the page in a
# real browser), curl, and Prometheus' Python client (its text-format parser). MIDI: mido reads
# back the Standard MIDI Files of record -m. Loudness: libebur128 (record --loudness). Network
# bridges the recorder is tested across: jacktrip and zita-njbridge.
packages=(pkg-config libjack-jackd2-dev jackd2 libsndfile1-dev libsamplerate0-dev libsoxr-dev librubberband-dev libebur128-dev
          libavcodec-dev libavformat-dev libavutil-dev libswresample-dev sox ffmpeg
          liblilv-dev lv2-dev lilv-utils swh-lv2 mda-lv2 x42-plugins blop-lv2 ladspa-sdk swh-plugins cmt tap-plugins gcc python3
          libcivetweb-dev chromium chromium-driver curl python3-prometheus-client python3-mido
          jacktrip zita-njbridge)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # jackd2 asks whether to enable real-time priority for the audio group; answer no (we run as root or fall back).
  echo "jackd2 jackd/tweak_rt_limits boolean false" | $sudo debconf-set-selections 2>/dev/null || true
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
command -v swift >/dev/null || { echo "setup.sh: swift not found on PATH (Swift 6.1 or later is needed)" >&2; exit 1; }

[ "${1:-}" = "--deps" ] && exit 0
Scripts/build-release.sh
echo "setup.sh: built $(pwd)/.build/release/aqjack" >&2
