/// What a recording queue makes of device frames it did not get (a JACK xrun, a ring overrun,
/// no buffer enqueued): decided in one place, the recording pipeline's ``TimelineAligner``.
///
/// - `timestamps`: Apple's behaviour for linear PCM. The buffer being filled ends at the gap;
///   the next buffer's `mSampleTime` is where its frames were captured, so the gap shows in
///   the timestamps. Repeated frames (JACK relabelling a cycle around an xrun) end it too.
/// - `silence`: the gap becomes silence in the buffers (any length), and frames delivered
///   twice are dropped, so consecutive buffers are contiguous on the device timeline; the
///   frames are counted in ``AudioInputQueue/insertedSilenceFrameCount`` (device frames lost)
///   and ``AudioInputQueue/underrunSilenceFrameCount`` (frames that found no buffer). What a
///   recorder writing continuous files wants: every session of `AQSession` expects it, and
///   `aqjack record` sets it. A pause is not a gap: nothing is put in for it, and the buffers
///   after it are stamped with their own device frames.
///
/// A compressed format (AAC, ALAC) always fills gaps of up to 10 s with silence: an encoded
/// stream has no timestamps per packet to show a gap.
public enum RecordingGapPolicy: Sendable {
    case timestamps
    case silence
}
