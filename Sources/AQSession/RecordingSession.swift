import AudioQueue
import CAudioTypes
import Synchronization

/// A recording's session as its queue's callback and its owner see it: one PCM file
/// (``RecordSession``), one file of encoded packets (``PacketRecordSession``) or takes
/// (``TakeSession``). ``handle(_:startTime:)`` on the queue thread; the rest from any thread.
public protocol RecordingSession: AnyObject, Sendable {
    var isFinished: Atomic<Bool> { get }
    /// Frames of audio in the file so far.
    var framesWritten: Int64 { get }
    var summary: (start: UInt64?, frames: Int64, lost: Int64, failure: String?) { get }
    /// Takes one filled buffer on the queue thread; returns whether the queue should have it back.
    func handle(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp) -> Bool
    /// Finishes the file once the queue has stopped and delivered its last buffer.
    func finish(queue: AudioInputQueue) -> String?
}

extension RecordSession: RecordingSession {
    public func finish(queue: AudioInputQueue) -> String? { close() }
}

extension TakeSession: RecordingSession {
    public func finish(queue: AudioInputQueue) -> String? { finish() }
}


extension RecordingSession {
    /// Every frame lost so far, in the file's frames: the session's (``summary``'s gaps it
    /// filled and frames the disk writer had no room for) and the device frames `queue` itself
    /// filled with silence before handing the buffers over (a compressed stream, or the gap
    /// policy `.silence`), which the session cannot see in them. Any thread.
    public func lostFrames(queue: AudioInputQueue) -> Int64 {
        let inserted = queue.insertedSilenceFrameCount
        guard inserted > 0, queue.deviceSampleRate > 0, queue.format.mSampleRate > 0 else { return summary.lost + Int64(inserted) }
        return summary.lost + Int64((Double(inserted) * queue.format.mSampleRate / queue.deviceSampleRate).rounded())
    }
}
