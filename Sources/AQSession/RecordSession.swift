import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// A linear-PCM recording (`aqjack record` without takes): what it does with each buffer the
/// input queue hands back, on the queue thread: gives it to the files (through the disk writer
/// when they are ``DiskBackedFiles``), fills gaps with silence so the files stay aligned with the
/// device timeline, stops at the requested length. ``summary``'s lost frames count both the
/// timeline's gaps and the frames the disk writer had no room for.
public final class RecordSession: @unchecked Sendable {
    public let writer: any RecordingFiles
    public let targetFrames: Int64?
    /// Device (JACK) frames per file frame: 1 unless the file's rate differs from the server's.
    public let deviceFramesPerFileFrame: Double
    private let lock = NSLock()
    /// The device frame (fractional when resampling) of file frame 0.
    private var firstFrame = 0.0
    public private(set) var startFrame: UInt64?
    public private(set) var lostFrames: Int64 = 0
    /// Where each buffer goes in the file (file frames from the first recorded one).
    private var timeline = TimelineAligner()
    public private(set) var failure: String?
    /// Set once the requested length is written or a write failed: the main thread then stops.
    public let isFinished = Atomic<Bool>(false)

    public init(writer: any RecordingFiles, targetFrames: Int64?, deviceRate: Double) {
        self.writer = writer
        self.targetFrames = targetFrames
        deviceFramesPerFileFrame = deviceRate / writer.sampleRate
    }

    public var framesWritten: Int64 { lock.withLock { writer.packetCount } }
    public var summary: (start: UInt64?, frames: Int64, lost: Int64, failure: String?) {
        lock.withLock { (startFrame, writer.packetCount, lostFrames + writer.droppedFrames, failure) }
    }

    /// Takes one filled buffer. Returns whether the queue should have it back.
    public func handle(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil, !isFinished.load(ordering: .relaxed) else { return false }
        let bytesPerFrame = writer.layout.bytesPerFrame
        var frames = Int(buffer.pointee.mAudioDataByteSize) / bytesPerFrame
        guard frames > 0 else { return true }
        let frame = startTime.mSampleTime
        do throws(AudioFileError) {
            if startFrame == nil {
                startFrame = UInt64(frame.rounded())
                firstFrame = frame
                if writer.canCarryTimeReference {
                    // BWF counts in the file's rate.
                    try writer.markStart(frame: UInt64((frame / deviceFramesPerFileFrame).rounded()))
                }
            }
            // Every buffer goes where its timestamp says, so file frame i is always JACK frame
            // start + i: after a gap (ring overrun, xrun, no buffer) the missing frames become
            // silence; when JACK repeats a cycle's frame time (it does around xruns) the frames
            // already written stay and the repeated ones are dropped (TimelineAligner decides).
            let position = Int64(((frame - firstFrame) / deviceFramesPerFileFrame).rounded())
            let placement = timeline.place(position: position, count: Int64(frames))
            if placement.silence > 0 {
                let gap = targetFrames.map { min(placement.silence, $0 - writer.packetCount) } ?? placement.silence
                try writer.appendSilence(frames: Int(gap))
                lostFrames += gap
            }
            let skip = Int(placement.skip)
            frames -= skip
            if let targetFrames { frames = Int(max(0, min(Int64(frames), targetFrames - writer.packetCount))) }
            if frames > 0 {
                try writer.append(buffer.pointee.mAudioData + skip * bytesPerFrame, frames: frames)
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
