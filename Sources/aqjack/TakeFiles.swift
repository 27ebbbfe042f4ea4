import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// The takes of a recording that starts and stops by itself (`--transport`, `--trigger`,
/// `--armed`): each take its own file — the path itself for a single take, else `NAME-001.ext`,
/// `NAME-002.ext` ... — finalized as soon as the take ends (and handed to `--on-file`). Within a
/// take, frames go where their device frame says: a gap (lost frames) becomes silence, counted.
/// Queue thread only.
final class TakeFiles {
    let layout: LinearPCMLayout
    private let path: String
    private let numbered: Bool
    /// Opens the files of a take at a path.
    private let make: (String) throws(AudioFileError) -> any RecordingFiles
    /// Called with the paths and length of each take as it is finalized.
    private let finalized: ([String], Int64) -> Void
    /// The single take's file, opened up front so a refusal (an existing file) comes first.
    private var waiting: (any RecordingFiles)?
    /// The take being written: its files, where it is on the device timeline, its first frame.
    private var current: (files: any RecordingFiles, timeline: TimelineAligner, start: Double)?
    private(set) var takeCount = 0
    private var closedPaths: [String] = []
    private var closedFrames: Int64 = 0
    /// The device frame of the first take's first frame.
    private(set) var firstFrame: UInt64?
    /// Frames written as silence for gaps inside takes.
    private(set) var lostFrames: Int64 = 0

    /// - Parameter numbered: every take numbered (`NAME-001.ext` ...); otherwise one take, into
    ///   `path`, whose file is created now.
    init(path: String, numbered: Bool, layout: LinearPCMLayout,
         make: @escaping (String) throws(AudioFileError) -> any RecordingFiles,
         finalized: @escaping ([String], Int64) -> Void) throws(AudioFileError) {
        self.path = path
        self.numbered = numbered
        self.layout = layout
        self.make = make
        self.finalized = finalized
        if !numbered { waiting = try make(path) }
    }

    var isRecording: Bool { current != nil }
    /// Every file written, in order (takes, then channel groups).
    var paths: [String] { closedPaths + (current?.files.paths ?? waiting?.paths ?? []) }
    var frames: Int64 { closedFrames + (current?.files.packetCount ?? 0) }

    /// Starts a take whose first frame is device frame `sampleTime`; its BWF TimeReference (where
    /// the type has one) is `timeReference`.
    func begin(at sampleTime: Double, timeReference: UInt64) throws(AudioFileError) {
        takeCount += 1
        let files: any RecordingFiles
        if let single = waiting {
            files = single
            waiting = nil
        } else {
            files = try make(TimeSplitFiles.partPath(path, index: takeCount))
        }
        if files.canCarryTimeReference { try files.markStart(frame: timeReference) }
        current = (files, TimelineAligner(longestFilledGap: 10 * Int64(files.sampleRate)), sampleTime)
        if firstFrame == nil { firstFrame = UInt64(max(0, sampleTime)) }
    }

    /// Appends `frames` frames in the files' layout whose first is device frame `sampleTime`;
    /// nothing when no take is open.
    func write(_ bytes: UnsafeRawPointer, frames: Int, at sampleTime: Double) throws(AudioFileError) {
        guard frames > 0, var take = current else { return }
        let placement = take.timeline.place(position: Int64((sampleTime - take.start).rounded()), count: Int64(frames))
        current = take
        if placement.silence > 0 {
            try take.files.appendSilence(frames: Int(placement.silence))
            lostFrames += placement.silence
        }
        let skip = Int(placement.skip)
        if frames > skip { try take.files.append(bytes + skip * layout.bytesPerFrame, frames: frames - skip) }
    }

    /// Finalizes the take being written, if any. A numbered take that holds no frame (one that
    /// ended where it began) is removed, not kept as an empty file.
    func end() throws(AudioFileError) {
        guard let take = current else { return }
        current = nil
        try take.files.close()
        if numbered && take.files.packetCount == 0 {
            take.files.paths.forEach { unlink($0) }
            return
        }
        closedPaths += take.files.paths
        closedFrames += take.files.packetCount
        finalized(take.files.paths, take.files.packetCount)
    }

    /// Ends the take being written; a single take that never began leaves its empty, valid file.
    func close() throws(AudioFileError) {
        try end()
        if let single = waiting {
            waiting = nil
            try single.close()
            closedPaths += single.paths
        }
    }
}

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
