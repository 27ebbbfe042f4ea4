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

/// Runs stages in order over a stream that has a first frame and an end (a file being
/// converted, a recording), hiding their latency: the first ``AudioProcessingStage/latencyFrames``
/// frames out of the chain (the stages' own silence) are dropped, and ``finish(_:)`` pushes as
/// many frames of silence through to bring out the input's last frames. So the output has as
/// many frames as the input and its frame `n` is the input's frame `n`, processed. One thread.
public struct CompensatedStages {
    public let stages: [any AudioProcessingStage]
    public let channelCount: Int
    /// The chain's latency: the sum of its stages'.
    public let latencyFrames: Int
    private var framesToDrop: Int

    public init(_ stages: [any AudioProcessingStage], channelCount: Int) {
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
        let dropped = min(framesToDrop, frameCount)
        framesToDrop -= dropped
        return (dropped, frameCount - dropped)
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
