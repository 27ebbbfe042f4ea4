import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// A linear-PCM recording (`aqjack record` without takes): what it does with each buffer the
/// input queue hands back, on the queue thread: gives it to the files (through the disk writer
/// when they are ``DiskBackedFiles``), stops at the requested length.
///
/// The queue's ``AudioInputQueue/gapPolicy`` must be `.silence`: the queue then fills every gap
/// (an xrun, a ring overrun, an underrun) with silence where it was, so file frame i is device
/// frame start + i (resampled: in the file's rate), and the session appends buffer after buffer.
/// ``summary``'s lost frames are that silence in the file and the frames the disk writer had no
/// room for.
public final class RecordSession: @unchecked Sendable {
    public let writer: any RecordingFiles
    public let targetFrames: Int64?
    /// Device (JACK) frames per file frame: 1 unless the file's rate differs from the server's.
    public let deviceFramesPerFileFrame: Double
    private let lock = NSLock()
    public private(set) var startFrame: UInt64?
    /// Frames of the file that are silence the queue put in for lost frames.
    private var gapFrames: Int64 = 0
    public private(set) var failure: String?
    /// Set once the requested length is written or a write failed: the main thread then stops.
    public let isFinished = Atomic<Bool>(false)
    /// The wall clock of device frames (the first frame's is the file's OriginationDate/-Time).
    /// Set before the queue starts.
    public var clock: FrameClock?

    public init(writer: any RecordingFiles, targetFrames: Int64?, deviceRate: Double) {
        self.writer = writer
        self.targetFrames = targetFrames
        deviceFramesPerFileFrame = deviceRate / writer.sampleRate
    }

    public var framesWritten: Int64 { lock.withLock { writer.packetCount } }
    public var summary: (start: UInt64?, frames: Int64, lost: Int64, failure: String?) {
        lock.withLock { (startFrame, writer.packetCount, gapFrames + writer.droppedFrames, failure) }
    }

    /// Takes one filled buffer. Returns whether the queue should have it back.
    public func handle(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp, gapSilence: [Range<Int>]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil, !isFinished.load(ordering: .relaxed) else { return false }
        var frames = Int(buffer.pointee.mAudioDataByteSize) / writer.layout.bytesPerFrame
        guard frames > 0 else { return true }
        do throws(AudioFileError) {
            if startFrame == nil {
                startFrame = UInt64(max(0, startTime.mSampleTime.rounded()))
                // BWF counts in the file's rate.
                try writer.markStart(frame: UInt64(max(0, (startTime.mSampleTime / deviceFramesPerFileFrame).rounded())),
                                     originated: clock?.date(ofFrame: startTime.mSampleTime))
            }
            if let targetFrames { frames = Int(max(0, min(Int64(frames), targetFrames - writer.packetCount))) }
            if frames > 0 {
                try writer.append(buffer.pointee.mAudioData, frames: frames)
                gapFrames += Int64(gapSilence.reduce(0) { $0 + $1.clamped(to: 0 ..< frames).count })
            }
        } catch {
            failure = error.message
            isFinished.store(true, ordering: .releasing)
            return false
        }
        if let targetFrames, writer.packetCount >= targetFrames {
            isFinished.store(true, ordering: .releasing)
            return false
        }
        return true
    }

    public func close() -> String? {
        lock.lock()
        defer { lock.unlock() }
        do throws(AudioFileError) { try writer.close() } catch { failure = failure ?? error.message }
        return failure
    }
}
