#!/usr/bin/env bash
# The test command (README, .ci/run): installs what is missing, builds release (which also turns
# on the compiler's real-time checks of the process-thread code), then runs every test against a
# private JACK server (dummy backend, unique name) that is stopped by PID afterwards, on failure
# or on Ctrl-C. Exits with the tests' status.
set -euo pipefail
cd "$(dirname "$0")/.."

Scripts/setup.sh --deps
# Release build: AQ_RT_CHECKS is on, so any allocation, lock or reference count on the process
# thread path fails the build here.
swift build -c release
# Tests run one at a time: the freewheel and real-time tests need the server and the two cores
# to themselves.
exec Scripts/with-dummy-jack.sh --rate 48000 --period 128 -- swift test --no-parallel "$@"
