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

