#!/usr/bin/env bash
# Waits until the hypervisor has finished taking back the memory this guest freed: until the
# virtio balloon's free-page-reporting queue (the `virtio*-reporting_vq` line of
# /proc/interrupts) has taken no interrupt for 5 s, at most 120 s. Prints how long it waited.
# Does nothing on a machine without that queue (a studio machine has none).
#
# Why the bench needs it (measured 2026-12-03 on this 2-core VM, docs/JACK.md, "The hypervisor taking back freed memory"): after
# the 2040-channel step at period 128 had verified and deleted its 23 GB of files, the next
# step's recording lost 4,096 / 30,720 / 34,816 / 6,144 frames in four runs, every one a
# frame the server skipped for every client while the queue took ~136 interrupts in the first
# 30 s; with this wait first (39 s) the same step was bit-exact with 0 frames lost or skipped.
set -uo pipefail
count() { awk '/reporting_vq/ { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n; exit }' /proc/interrupts; }
last=$(count)
[ -n "$last" ] || exit 0
quiet=0
waited=0
while [ "$quiet" -lt 5 ] && [ "$waited" -lt 120 ]; do
  sleep 1
  waited=$((waited + 1))
  now=$(count)
  if [ "$now" = "$last" ]; then quiet=$((quiet + 1)); else quiet=0; last=$now; fi
done
echo "(waited ${waited} s for the hypervisor's free-page reporting to go quiet: Scripts/wait-memory-quiet.sh)"
