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

extension CompensatedStages {
    /// A queue's stages (``AudioInputQueue/setProcessingStages(_:)``,
    /// ``AudioOutputQueue/setProcessingStages(_:)``): set only while the queue is stopped.
    static func forQueue(_ stages: [any QueueProcessingStage], channelCount: Int, queueIsStopped: Bool) throws(AudioQueueError) -> CompensatedStages {
        guard queueIsStopped else {
            throw AudioQueueError(AudioQueueError.invalidRunStateCode, "processing stages are set on a stopped queue")
        }
        return CompensatedStages(stages, channelCount: channelCount)
    }
}
