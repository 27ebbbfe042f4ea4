#!/usr/bin/env bash
# Prints aqjack's benchmark figures, each against a reference measured in the same run:
# ring vs memcpy, capture process cycle as a fraction of the period (2, 64, 256 channels at
# period 128), and `aqjack --ports` vs `jack_lsp -c -l` on one private dummy server.
# Reports only: never fails the test run.
set -uo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh --deps >/dev/null
swift build -c release --product aqjack >/dev/null && swift build -c release --product aqbench >/dev/null || exit 0
Scripts/with-dummy-jack.sh --period 128 -- .build/release/aqbench .build/release/aqjack || true
