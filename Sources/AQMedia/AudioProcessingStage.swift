/// A processing stage in a signal path: what processing taps and LV2 plugins are to a queue
/// (``AudioQueue``'s `QueueProcessingStage` is this protocol) and to `aqjack convert`.
///
/// A stage sees interleaved 32-bit float frames at the stream's rate, `channelCount` channels,
/// and processes them in place, one run at a time; it returns as many frames as it was given (a
/// stage that delays does so inside the run, and says by how much in ``latencyFrames``). Runs
/// come on one non-real-time thread at a time (a queue's thread, or the caller's when rendering
/// offline or converting), never on the JACK process thread: a stage may allocate and lock, but
/// whatever it takes delays the stream.
public protocol AudioProcessingStage: AnyObject {
    /// Processes `frameCount` interleaved frames in place.
    func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int)
    /// Forgets any state carried between runs (the stream was stopped or reset).
    func reset()
    /// Frames by which the stage's output lags its input (a look-ahead limiter's 240), known from
    /// the stage's creation; 0 for a stage that does not delay.
    var latencyFrames: Int { get }
}

extension AudioProcessingStage {
    public func reset() {}
    public var latencyFrames: Int { 0 }
}

/// The one stage chain: runs stages in order over a stream that has a first frame and an end
/// (a file being converted, a queue's run from a start or a gap to a stop), hiding their
/// latency: the first ``AudioProcessingStage/latencyFrames`` frames out of the chain (the
/// stages' own silence) are dropped, and as many frames of silence pushed through at the end
/// (``finish(runFrames:_:)``, or a queue's own tail) bring out the input's last frames. So the
/// output has as many frames as the input and its frame `n` is the input's frame `n`, processed.
/// `aqjack convert` and both queues' pipelines run it. One thread at a time.
public struct CompensatedStages {
    public let stages: [any AudioProcessingStage]
    public let channelCount: Int
    /// The chain's latency: the sum of its stages'.
    public let latencyFrames: Int
    private var framesToDrop: Int
    /// Whether frames went in since the latest (re)start of the run: only then is there a tail
    /// to bring out.
    public private(set) var hasPendingTail = false

    public init(_ stages: [any AudioProcessingStage] = [], channelCount: Int = 1) {
        self.stages = stages
        self.channelCount = channelCount
        latencyFrames = stages.reduce(0) { $0 + $1.latencyFrames }
        framesToDrop = latencyFrames
    }

    public var isEmpty: Bool { stages.isEmpty }

    /// Processes `frameCount` frames in place; returns where the frames to keep start (in
    /// frames from `frames`) and how many there are.
    public mutating func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int) -> (offset: Int, count: Int) {
        for stage in stages { stage.process(frames, frameCount: frameCount, channelCount: channelCount) }
        hasPendingTail = latencyFrames > 0
        let dropped = min(framesToDrop, frameCount)
        framesToDrop -= dropped
        return (dropped, frameCount - dropped)
    }

    /// The next frames start a new compensated run (after a tail brought out, a stop or a reset).
    public mutating func restartCompensation() {
        framesToDrop = latencyFrames
        hasPendingTail = false
    }

    /// Forgets the stages' state and starts a new run (the stream was stopped or reset).
    public mutating func reset() {
        for stage in stages { stage.reset() }
        restartCompensation()
    }

    /// Pushes ``latencyFrames`` frames of silence through the stages, in runs of at most
    /// `runFrames`, and hands `body` the frames that come out (the input's last ones).
    public mutating func finish(runFrames: Int = 4096, _ body: (UnsafePointer<Float>, Int) throws(AudioFileError) -> Void) throws(AudioFileError) {
        var left = latencyFrames
        guard left > 0 else { return }
        let run = max(1, min(runFrames, left))
        let silence = UnsafeMutablePointer<Float>.allocate(capacity: run * channelCount)
        defer { silence.deallocate() }
        while left > 0 {
            let frames = min(run, left)
            silence.initialize(repeating: 0, count: frames * channelCount)
            let (offset, count) = process(silence, frameCount: frames)
            if count > 0 { try body(silence + offset * channelCount, count) }
            left -= frames
        }
    }
}
