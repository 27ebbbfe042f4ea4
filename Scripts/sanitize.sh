#!/usr/bin/env bash
# Runs the tests under sanitizers, each in its own build folder:
#   - ThreadSanitizer: the tests that use no JACK client (rings, test signal, verifier), since
#     libjack's threads abort any TSan process;
#   - AddressSanitizer: every test, against a private JACK server.
# CRTProbe (the malloc counter) is compiled out under both, so its suite is skipped there.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh --deps

export SWIFT_BACKTRACE=enable=no   # the backtracer hangs under ASan when a report is made

echo "== ThreadSanitizer: AQCoreTests and the pure verifier tests" >&2
swift test --scratch-path .build/tsan --sanitize=thread --no-parallel \
  --filter 'AQCoreTests|TestSignalTests|TestSignalVerifierTests'

# The 1024-channel recording test runs the release aqjack and generator (a sanitized build is
# far too slow for 1024 channels in real time): build them first.
Scripts/build-release.sh
echo "== AddressSanitizer: all tests, private JACK server" >&2
ASAN_OPTIONS=detect_leaks=0 Scripts/with-dummy-jack.sh -- \
  swift test --scratch-path .build/asan --sanitize=address --no-parallel
