import AQMedia
import AQSession
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// What the self-starting recordings share (`--transport`, `--trigger`, `--armed`, `--osc`):
/// their ``TakeFiles``, the lock the queue thread and the main thread share, the failure that
/// ends the recording, and the summary. Subclasses decide, buffer by buffer, in
/// ``takeFrames(_:frames:at:)``.
class TakeRecordSession: RecordingSession, @unchecked Sendable {
    let isFinished = Atomic<Bool>(false)
    let lock = NSLock()
    let takes: TakeFiles
    private var failure: String?

    init(takes: TakeFiles) { self.takes = takes }

    /// Every file written, in order.
    var paths: [String] { lock.withLock { takes.paths } }
    /// Takes begun so far.
    var takeCount: Int { lock.withLock { takes.takeCount } }
    var isRecording: Bool { lock.withLock { takes.isRecording } }
    var framesWritten: Int64 { lock.withLock { takes.frames } }
    var summary: (start: UInt64?, frames: Int64, lost: Int64, failure: String?) {
        lock.withLock { (takes.firstFrame, takes.frames, takes.lostFrames, failure) }
    }

    final func handle(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil, !isFinished.load(ordering: .relaxed) else { return false }
        let frames = Int(buffer.pointee.mAudioDataByteSize) / takes.layout.bytesPerFrame
        guard frames > 0 else { return true }
        do throws(AudioFileError) {
            return try takeFrames(UnsafeRawPointer(buffer.pointee.mAudioData), frames: frames, at: startTime.mSampleTime)
        } catch {
            failure = error.message
            isFinished.store(true, ordering: .releasing)
            return false
        }
    }

    /// The frames of one delivered buffer (`frames` in the files' layout, the first at device
    /// frame `first`), on the queue thread with ``lock`` held. Returns whether the queue should
    /// have the buffer back (false once the recording is finished).
    func takeFrames(_ data: UnsafeRawPointer, frames: Int, at first: Double) throws(AudioFileError) -> Bool {
        preconditionFailure("a TakeRecordSession subclass decides what to do with the frames")
    }

    final func finish(queue: AudioInputQueue) -> String? {
        lock.lock()
        defer { lock.unlock() }
        do throws(AudioFileError) { try takes.close() } catch { failure = failure ?? error.message }
        return failure
    }
}
