/// A processing stage in a queue's signal path: the insertion point where processing taps and
/// LV2 plugins go (issue 12).
///
/// A stage sees the queue's own frames: interleaved 32-bit float at the queue format's rate,
/// `channelCount` channels, after a recording's resampling and before its encoding or buffer
/// filling; after a playback's decoding and before its resampling to the device. It processes
/// them in place, one run at a time, and must return as many frames as it was given (a stage
/// that delays does so inside the run). Runs come on the queue thread (or, rendering offline,
/// on the renderer's), never on the process thread: a stage may allocate and lock, but
/// whatever it takes delays the queue, and a slow stage shows as ring overruns or underruns.
public protocol QueueProcessingStage: AnyObject {
    /// Processes `frameCount` interleaved frames in place.
    func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int)
    /// Forgets any state carried between runs (the queue was stopped or reset).
    func reset()
}

extension QueueProcessingStage {
    public func reset() {}
}

/// The stages of one queue, applied in order. Queue thread only.
struct ProcessingChain {
    private(set) var stages: [any QueueProcessingStage] = []

    var isEmpty: Bool { stages.isEmpty }

    /// Replaces the stages; a queue that is not stopped keeps its own.
    mutating func replace(with stages: [any QueueProcessingStage], queueIsStopped: Bool) throws(AudioQueueError) {
        guard queueIsStopped else {
            throw AudioQueueError(AudioQueueError.invalidRunStateCode, "processing stages are set on a stopped queue")
        }
        self.stages = stages
    }

    func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int) {
        for stage in stages { stage.process(frames, frameCount: frameCount, channelCount: channelCount) }
    }

    func reset() { for stage in stages { stage.reset() } }
}
