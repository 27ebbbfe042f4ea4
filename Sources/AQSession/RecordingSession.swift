import AQCore
import AQMedia
import AudioQueue
import CAudioTypes
import Synchronization

/// A recording's session as its queue's callback and its owner see it: one PCM file
/// (``RecordSession``), one file of encoded packets (``PacketRecordSession``) or takes
/// (``TakeSession``). ``handle(_:startTime:gapSilence:)`` on the queue thread; the rest from any
/// thread.
///
/// A session appends the buffers it is given one after another: its queue's
/// ``AudioInputQueue/gapPolicy`` must be `.silence`, so that every gap is already silence where
/// it was, and the callback hands it ``AudioInputQueue/gapSilenceInDeliveredBuffer`` with each
/// buffer, so it counts the lost frames its files hold
/// (``AudioInputQueue/init(format:driver:recordingInto:bufferCount:bufferBytes:)`` does both,
/// and attaches the session to the queue).
public protocol RecordingSession: AnyObject, Sendable {
    var isFinished: Atomic<Bool> { get }
    /// Frames of audio in the file so far.
    var framesWritten: Int64 { get }
    /// The first frame's device frame, the frames in the files, the frames lost in them (kept as
    /// silence: gaps the queue filled, frames the disk writer had no room for), and why the
    /// recording failed.
    var summary: (start: UInt64?, frames: Int64, lost: Int64, failure: String?) { get }
    /// Takes one filled buffer on the queue thread; returns whether the queue should have it back.
    /// - Parameter gapSilence: the buffer's frames that are silence for lost frames
    ///   (``AudioInputQueue/gapSilenceInDeliveredBuffer``), ranges from its first frame.
    func handle(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp, gapSilence: [Range<Int>]) -> Bool
    /// Finishes the file once the queue has stopped and delivered its last buffer.
    func finish(queue: AudioInputQueue) -> String?
    /// Told the queue that will record into it, before it starts (what a controller follows of
    /// it: its transport). Nothing by default.
    func attach(to queue: AudioInputQueue)
}

extension RecordingSession {
    public func attach(to queue: AudioInputQueue) {}
}

extension RecordSession: RecordingSession {
    public func finish(queue: AudioInputQueue) -> String? { close() }
}

extension TakeSession: RecordingSession {
    public func finish(queue: AudioInputQueue) -> String? { finish() }
    public func attach(to queue: AudioInputQueue) { controller.attach(to: queue) }
}


extension RecordingSession {
    /// Every frame lost so far, in the file's frames, each one in the file as silence:
    /// ``summary``'s, and for a queue that encodes (AAC, Apple Lossless) the device frames it
    /// filled with silence before encoding (``AudioInputQueue/insertedSilenceFrameCount``), which
    /// its packets cannot show. Any thread; valid after the queue's driver is closed.
    public func lostFrames(queue: AudioInputQueue) -> Int64 {
        guard queue.format.mFormatID != AudioFormatValues.linearPCM else { return summary.lost }
        let inserted = Double(queue.insertedSilenceFrameCount)
        let fileFramesPerDeviceFrame = queue.deviceSampleRate > 0 && queue.format.mSampleRate > 0
            ? queue.format.mSampleRate / queue.deviceSampleRate : 1
        return summary.lost + Int64((inserted * fileFramesPerDeviceFrame).rounded())
    }
}

extension AudioInputQueue {
    /// A recording queue on `driver` whose buffers go to `session`: gaps filled with silence
    /// where they were (``gapPolicy`` `.silence`, what every session expects), each buffer
    /// handed back to the queue while the session wants more, `bufferCount` buffers of
    /// `bufferBytes` bytes enqueued. Start it with ``start()``; after the last buffer,
    /// ``RecordingSession/finish(queue:)``.
    public convenience init(format: AudioStreamBasicDescription, driver: any AudioDriver, recordingInto session: any RecordingSession,
                            bufferCount: Int = 3, bufferBytes: Int) throws(AudioQueueError) {
        try self.init(format: format, driver: driver) { queue, buffer, startTime in
            if session.handle(buffer, startTime: startTime, gapSilence: queue.gapSilenceInDeliveredBuffer) { try? queue.enqueue(buffer) }
        }
        gapPolicy = .silence
        session.attach(to: self)
        for _ in 0 ..< bufferCount { try enqueue(allocateBuffer(byteCapacity: bufferBytes)) }
    }
}
