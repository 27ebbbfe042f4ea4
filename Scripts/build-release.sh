#!/usr/bin/env bash
# The one release build every script uses: the aqjack and aqbench tools linked against a static
# Swift runtime and Foundation (no dynamic loading and binding of them at each start: the median
# exec -> first complete frame of a 64-channel recording went from 1.04x jack_capture's to
# 0.90x, a 256-channel play from 1.26x sndfile-jackplay's to 0.99x, measured with
# Scripts/bench-start.sh), and the AudioToolbox and AQGraph libraries compiled in release. Built by product:
# the static runtime has no Swift Testing, which AQServerSuite (tests only) needs.
# With AQ_RT_CHECKS on in release, any allocation, lock or reference count on the process-thread
# path fails this build.
#
# Linked by lld with packed relative relocations (DT_RELR, glibc >= 2.36), still position
# independent. The default link (gold) left 75,000 relative relocations (a 1.8 MB .rela.dyn)
# that the dynamic loader reads and applies at every start: measured with `perf record -e
# page-faults`, half of an `aqjack --help`'s page faults were in _dl_relocate_object, and its
# peak RSS was 15.0 MB. Packed, the table is 33 KB and the peak RSS 12.0 MB; a 16-channel
# `aqjack play` went from 76.5 to 73.7 MB peak RSS (GNU time, same server, one sitting).
# The same flags on every build here, so that the three share one compiled tree.
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(-c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
for product in aqjack aqbench; do
  swift build "${flags[@]}" --product "$product"
done
swift build "${flags[@]}" --target AudioToolbox
swift build "${flags[@]}" --target AQGraph
