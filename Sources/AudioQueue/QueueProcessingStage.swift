import AQMedia

/// A processing stage in a queue's signal path: the insertion point where processing taps and
/// LV2 plugins go (issue 12); the stage protocol `aqjack convert` also runs.
///
/// In a queue, a stage sees the queue's own frames: interleaved 32-bit float at the queue
/// format's rate, `channelCount` channels, after a recording's resampling and before its
/// encoding or buffer filling; after a playback's decoding and before its resampling to the
/// device. Runs come on the queue thread (or, rendering offline, on the renderer's), never on
/// the process thread; a slow stage shows as ring overruns or underruns.
public typealias QueueProcessingStage = AudioProcessingStage

/// The stages of one queue, applied in order, with their latency hidden as
/// ``CompensatedStages`` hides it: the first ``latencyFrames`` frames out after a (re)start are
/// the stages' own silence and are dropped, and ``tailFrames`` frames of silence pushed through
/// at a stop or gap bring out the input's last frames. Queue thread only, under the queue's lock.
struct ProcessingChain {
    private(set) var stages: [any QueueProcessingStage] = []
    /// The sum of the stages' latencies, in frames.
    private(set) var latencyFrames = 0
    /// Output frames still to drop before the compensated run's first frame.
    private var framesToDrop = 0
    /// Whether frames went in since the latest (re)start: only then is there a tail to flush.
    private(set) var hasPendingTail = false

    var isEmpty: Bool { stages.isEmpty }

    /// Replaces the stages; a queue that is not stopped keeps its own.
    mutating func replace(with stages: [any QueueProcessingStage], queueIsStopped: Bool) throws(AudioQueueError) {
        guard queueIsStopped else {
            throw AudioQueueError(AudioQueueError.invalidRunStateCode, "processing stages are set on a stopped queue")
        }
        self.stages = stages
        latencyFrames = stages.reduce(0) { $0 + $1.latencyFrames }
        restartCompensation()
    }

    /// Processes in place; returns how many frames at the front are the stages' start-up
    /// silence, to be dropped.
    mutating func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int) -> Int {
        for stage in stages { stage.process(frames, frameCount: frameCount, channelCount: channelCount) }
        hasPendingTail = latencyFrames > 0
        let dropped = min(framesToDrop, frameCount)
        framesToDrop -= dropped
        return dropped
    }

    /// The next frames start a new compensated run (after a flushed tail, a stop or a reset).
    mutating func restartCompensation() {
        framesToDrop = latencyFrames
        hasPendingTail = false
    }

    mutating func reset() {
        for stage in stages { stage.reset() }
        restartCompensation()
    }
}
