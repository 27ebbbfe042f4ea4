# Sourced by Scripts/bench-record.sh and Scripts/bench-web.sh (not run on its own): who caused the
# wrong frames of an aqjack recording made inside Scripts/with-dummy-jack.sh against
# `aqbench generate`. The caller sets `work` (its temporary folder, holding gen.out, the
# generator's output, and stalls.txt, the recorder's AQJACK_STALLS file) and `rate` (Hz).

# A field of a JSON summary: json_field NAME FILE.
json_field() { grep -o "\"$1\" *: *[^,}]*" "$2" | head -1 | cut -d: -f2 | tr -d '" '; }

# Whose cycles the server found unfinished (jackd's "client = NAME was not finished" lines in
# with-dummy-jack.sh's log) between two of the log's lines: the recorder's own, or the
# generator's. Count from the recorder's exec to its exit, not while its file is read back for an
# analysis: reading a file from disk disturbs the generator still running (a 20 s 256-channel
# recording: 0 unfinished cycles while aqjack recorded, 120 of the generator's while its file
# was analysed).
log="${TMPDIR:-/tmp}/jackd-${JACK_DEFAULT_SERVER:-}.log"
late_between() {  # FROM-LINE TO-LINE RECORDER-CLIENT: "recorder N, generator N, other N"
  tail -n +"$(( $1 + 1 ))" "$log" 2>/dev/null | head -n "$(( $2 - $1 ))" | grep -o 'client = [^ ]* was not finished' | awk -v r="$3" '
    { if (index($3, r) == 1) own++; else if ($3 ~ /^bench-gen/) gen++; else other++ }
    END { printf "recorder %d, generator %d, other %d", own, gen, other }'
}
lines() { wc -l < "$log" 2>/dev/null || echo 0; }

# The server's period in frames (jack_bufsize prints "buffer size = N ..."; 128 when it cannot say).
period() { local n; n=$(jack_bufsize 2>/dev/null | grep -o '[0-9][0-9]*' | head -1); echo "${n:-128}"; }

# The frames of an aqjack recording silent where the generator's cycles did not jump (aqbench
# events): lost by aqjack alone, not skipped by the server. (Its summary's lost frames less the
# server's skipped frames does not say this: the skips it counts include those outside the
# file, before its first frame and after its last.)
own_silent() {  # FILE CHANNELS START_FRAME
  .build/release/aqbench events "$1" "$2" "$3" "$work/gen.out" "$work/stalls.txt" "$(period)" | head -1 | awk '{ print $7 }'
}

# The wrong frames of an aqjack recording by cause (aqbench events): silent frames (aqjack had
# no cycle for them) where the generator's cycles jumped too (the server's skip) or not (aqjack's
# own loss), and frames holding the signal of an older cycle (the generator had not written
# this one) or a newer one.
# The recorder's stalled callbacks (AQJACK_STALLS) mark the places where its thread began late
# or ran long; a wrong run near neither a skip nor a stall would be aqjack's alone.
wrong_by_cause() {  # FILE CHANNELS START_FRAME SECONDS
  local line gaps runs start=$3 seconds=$4
  { read -r line; read -r gaps; read -r runs; } < <(.build/release/aqbench events "$1" "$2" "$3" "$work/gen.out" "$work/stalls.txt" "$(period)")
  set -- $line
  printf '    aqjack wrong frames by cause: silent %s (in %s runs): %s where the generator skipped the same frames (the server), %s aqjack alone (%s of them more than 4 cycles from any skip); signal of an older cycle %s in %s runs; of a newer cycle %s in %s runs; other %s; wrong runs near neither a skip nor a stalled callback of aqjack: %s (%s frames)\n' \
    "$3" "$2" "$5" "$7" "$9" "${12}" "${11}" "${15}" "${14}" "${18}" "${20}" "${21}"
  [ -n "$gaps" ] && printf '    aqjack-only gaps (frame time+frames): %s\n' "$gaps"
  [ -n "$runs" ] && printf '    every wrong run (frame time+frames:s silent, g other, else the offset of the signal found): %s\n' "$runs"
  printf '    the generator'"'"'s jumps while aqjack recorded (frame time:frames skipped): %s\n' \
    "$(awk -v from="$start" -v to="$(( start + seconds * rate ))" '$1 == "jump" && $2 >= from && $2 <= to { printf "%s:%s ", $2, $3 }' "$work/gen.out")"
  # Stall lines: FRAME_TIME SINCE_PREVIOUS_US DURATION_US CPU_US MINOR_FAULTS.
  local period_us
  period_us=$(awk -v p="$(period)" -v r="$rate" 'BEGIN { printf "%d", p * 1e6 / r }')
  printf '    aqjack'"'"'s stalled callbacks: %s\n' "$(awk -v period="$period_us" '{ n++; if ($2 > 1.5 * period) late++; if ($4 > period / 2) long++; if ($4 > max) max = $4; faults += $5 }
    END { printf "%d (began over 1.5 periods after the one before: %d; used over half a period of CPU: %d; most CPU %d us; minor page faults in them %d)", n, late, long, max, faults }' "$work/stalls.txt" 2>/dev/null)"
}
