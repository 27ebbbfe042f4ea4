#!/usr/bin/env bash
# The one release build every script uses: the aqjack and aqbench tools linked against a static
# Swift runtime and Foundation (no dynamic loading and binding of them at each start: the median
# exec -> first complete frame of a 64-channel recording went from 1.04x jack_capture's to
# 0.90x, a 256-channel play from 1.26x sndfile-jackplay's to 0.99x, measured with
# Scripts/bench-start.sh), and the AudioToolbox library compiled in release. Built by product:
# the static runtime has no Swift Testing, which AQServerSuite (tests only) needs.
# With AQ_RT_CHECKS on in release, any allocation, lock or reference count on the process-thread
# path fails this build.
set -euo pipefail
cd "$(dirname "$0")/.."
for product in aqjack aqbench; do
  swift build -c release --static-swift-stdlib --product "$product"
done
swift build -c release --static-swift-stdlib --target AudioToolbox
