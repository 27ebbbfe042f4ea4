/// Keeps a stream on the device timeline: told where each run of frames belongs, it says how
/// many frames of silence must come before the run (frames the device lost: a ring overrun, an
/// xrun, no buffer enqueued) and how many of the run's first frames are already in the stream
/// (JACK repeats a cycle's frame time around an xrun: those are dropped, the first delivery
/// stands). The one place that decides gap filling: the recording pipeline's, for every codec
/// (``RecordingGapPolicy``).
///
/// Positions are in whatever frames the stream counts (device frames, or file frames when
/// resampling), as Int64. Not thread-safe: use from the thread that owns the stream.
public struct TimelineAligner: Sendable {
    /// Where a run goes: `silence` frames first, then the run without its first `skip` frames.
    /// A `rebase` run starts the timeline afresh at its position (a gap too long to fill, or the
    /// end of a pause): nothing is filled or dropped.
    public struct Placement: Equatable, Sendable {
        public var silence: Int64 = 0
        public var skip: Int64 = 0
        public var rebase = false

        public init(silence: Int64 = 0, skip: Int64 = 0, rebase: Bool = false) {
            self.silence = silence
            self.skip = skip
            self.rebase = rebase
        }
    }

    /// Gaps and overlaps longer than this are not filled or dropped but rebase the timeline.
    public let longestFilledGap: Int64
    /// The position after the furthest frame placed so far; nil before the first run.
    public private(set) var next: Int64?

    /// - Parameter longestFilledGap: frames; `Int64.max` fills any gap.
    public init(longestFilledGap: Int64 = .max) {
        self.longestFilledGap = longestFilledGap
    }

    /// Places a run of `count` frames that belongs at `position`.
    /// - Parameter rebasing: start afresh here whatever the gap (a queue resuming from a pause).
    public mutating func place(position: Int64, count: Int64, rebasing: Bool = false) -> Placement {
        var placement = Placement()
        if let expected = next, expected != position {
            let gap = position - expected
            if rebasing || gap.magnitude > UInt64(longestFilledGap) {
                placement.rebase = true
            } else if gap > 0 {
                placement.silence = gap
            } else {
                placement.skip = min(-gap, count)
            }
        }
        let end = position + count
        next = placement.rebase ? end : max(next ?? end, end)
        return placement
    }

    /// Forgets the timeline: the next run starts it.
    public mutating func reset() { next = nil }
}
