import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// What decides, buffer by buffer, when a take starts and ends: a level with a hold and a
/// pre-roll, a signal or control-surface command (``TriggerController``), JACK's transport
/// (``TransportController``). Called on the queue thread with the session's lock held.
public protocol TakeController: AnyObject {
    /// The frames of one delivered buffer, `frames` of them in `takes`' layout, the first at
    /// frame `first` of the device timeline counted in the takes' rate (the device frame when
    /// the takes are at the device's rate): begins, writes and ends takes in `takes`. Buffers
    /// come contiguous (the queue fills gaps), so a buffer's `first` is the last one's plus its
    /// frames, except after a pause.
    /// - Returns: whether the recording goes on (false: it is finished).
    func takeFrames(_ data: UnsafeRawPointer, frames: Int, at first: Double, into takes: TakeFiles) throws(AudioFileError) -> Bool
    /// Told the queue the takes come from, before it starts. Nothing by default.
    func attach(to queue: AudioInputQueue)
}

extension TakeController {
    public func attach(to queue: AudioInputQueue) {}
}

/// A recording in takes that start and stop by themselves (`--transport`, `--trigger`,
/// `--armed`, `--osc`): the input queue's buffers go to a ``TakeController``, which writes them
/// into ``TakeFiles`` (through the disk-writer thread when the takes have a stream). The queue's
/// ``AudioInputQueue/gapPolicy`` must be `.silence`, as for every ``RecordingSession``.
///
/// Threads: ``handle(_:startTime:gapSilence:)`` on the queue thread; ``finish()`` once the queue has
/// stopped; the rest from any thread.
public final class TakeSession: @unchecked Sendable {
    /// Set once the controller ended the recording or a write failed.
    public let isFinished = Atomic<Bool>(false)
    public let takes: TakeFiles
    public let controller: any TakeController
    /// Device (JACK) frames per frame of the takes: 1 unless they are resampled.
    public let deviceFramesPerFileFrame: Double
    private let lock = NSLock()
    private var failure: String?

    public init(takes: TakeFiles, controller: any TakeController, deviceFramesPerFileFrame: Double = 1) {
        self.takes = takes
        self.controller = controller
        self.deviceFramesPerFileFrame = deviceFramesPerFileFrame
    }

    /// Every file written, in order.
    public var paths: [String] { lock.withLock { takes.paths } }
    /// Takes begun so far.
    public var takeCount: Int { lock.withLock { takes.takeCount } }
    public var isRecording: Bool { lock.withLock { takes.isRecording } }
    public var framesWritten: Int64 { lock.withLock { takes.frames } }
    /// The first take's first device frame, the frames in every take, the frames of them lost
    /// (kept as silence: gaps the queue filled, frames the disk writer had no room for), and why
    /// the recording failed.
    public var summary: (start: UInt64?, frames: Int64, lost: Int64, failure: String?) {
        lock.withLock {
            (takes.firstFrame.map { UInt64(max(0, ($0 * deviceFramesPerFileFrame).rounded())) }, takes.frames, takes.lostFrames, failure)
        }
    }

    /// Takes one filled buffer. Returns whether the queue should have it back.
    public func handle(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp, gapSilence: [Range<Int>]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil, !isFinished.load(ordering: .relaxed) else { return false }
        let frames = Int(buffer.pointee.mAudioDataByteSize) / takes.layout.bytesPerFrame
        guard frames > 0 else { return true }
        do throws(AudioFileError) {
            let first = startTime.mSampleTime / deviceFramesPerFileFrame
            if !gapSilence.isEmpty { takes.noteGapSilence(gapSilence.map { first + Double($0.lowerBound) ..< first + Double($0.upperBound) }) }
            if try controller.takeFrames(UnsafeRawPointer(buffer.pointee.mAudioData), frames: frames, at: first, into: takes) {
                return true
            }
        } catch {
            failure = error.message
        }
        isFinished.store(true, ordering: .releasing)
        return false
    }

    /// Ends the take being written and waits until every file is written and closed.
    /// - Returns: why the recording failed, if it did.
    public func finish() -> String? {
        lock.lock()
        defer { lock.unlock() }
        do throws(AudioFileError) { try takes.close() } catch { failure = failure ?? error.message }
        return failure
    }
}
