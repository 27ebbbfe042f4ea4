import AQMedia
import Foundation
import Synchronization

/// Recording files whose writes run on the ``DiskWriter`` thread: the queue thread's
/// ``append(_:frames:)`` copies the frames into a ``DiskStream`` and returns at once; the disk
/// thread writes them to the files underneath (one file, files of 1024 channels, files split in
/// time), updates headers, finalizes and hands off parts there too.
///
/// A disk that falls behind by less than the stream's ring loses nothing and delays no buffer.
/// One that falls further behind loses the frames that found no room: they are counted in
/// ``droppedFrames`` and written as silence once there is room again, so every later frame stays
/// where the timeline puts it. A write that fails ends the writing: the next call on the queue
/// thread throws its error.
///
/// Threads: the ``RecordingFiles`` members from the one queue thread (or the caller that owns
/// the recording) at a time; ``paths`` from any.
public final class DiskBackedFiles: RecordingFiles, @unchecked Sendable {
    public let layout: LinearPCMLayout
    public let sampleRate: Double
    public let canCarryTimeReference: Bool
    /// The stream the writes go through (shared by the takes of one recording).
    public let stream: DiskStream
    /// The files written to, on the disk thread only (until the stream has finished).
    private let inner: any RecordingFiles
    /// Frames given so far, written or to be written (lost ones included, as silence).
    private var givenFrames: Int64 = 0
    /// Frames of silence (found no room in the ring, or a gap) not yet queued.
    private var pendingLoss: Int64 = 0
    /// The files' count once closed: what they hold.
    private var closedCount: Int64?
    private let pathSnapshot: Mutex<[String]>
    /// Frames that found no room in the ring (the disk was behind by more than it holds): kept
    /// as silence in the files.
    public private(set) var droppedFrames: Int64 = 0

    /// Writes to `inner` through `stream`. `inner` belongs to the disk thread from now on.
    public init(_ inner: any RecordingFiles, stream: DiskStream) {
        self.inner = inner
        self.stream = stream
        layout = inner.layout
        sampleRate = inner.sampleRate
        canCarryTimeReference = inner.canCarryTimeReference
        pathSnapshot = Mutex(inner.paths)
    }

    /// Bytes of ring for `seconds` of `layout` at `sampleRate`: at least 4 MiB, at most 512 MiB
    /// (2040 float channels at 48 kHz: 1.37 s). Its pages are touched as the ring fills, not
    /// at the start.
    public static func ringBytes(layout: LinearPCMLayout, sampleRate: Double, seconds: Double = defaultRingSeconds) -> Int {
        let wanted = Double(layout.bytesPerFrame) * sampleRate * seconds
        return Int(min(max(wanted, 4 * 1_048_576), 512 * 1_048_576))
    }
    /// How long the disk may stall without a loss, by default.
    public static let defaultRingSeconds = 3.0

    /// Frames in the files, counting those still on their way; after ``close()``, what they hold.
    public var packetCount: Int64 { closedCount ?? givenFrames }
    public var paths: [String] { pathSnapshot.withLock { $0 } }

    public func markStart(frame: UInt64, originated: Date?) throws(AudioFileError) {
        try checkDisk()
        stream.perform { [inner] () throws(AudioFileError) in try inner.markStart(frame: frame, originated: originated) }
    }

    public func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
        try checkDisk()
        guard frames > 0 else { return }
        queueLoss()
        let sent = stream.send(bytes, count: frames * layout.bytesPerFrame) { [inner, weak self] (data) throws(AudioFileError) in
            try inner.append(data, frames: frames)
            self?.refreshPaths()
        }
        if !sent {
            pendingLoss += Int64(frames)
            droppedFrames += Int64(frames)
        }
        givenFrames += Int64(frames)
    }

    /// Writes what is queued, closes the files and waits for the disk thread to have done so;
    /// the stream is finished with it.
    public func close() throws(AudioFileError) {
        try close { _ in }
        let failure = stream.finish()
        // The disk thread is done: what the files hold (less than given when a write failed).
        closedCount = inner.packetCount
        if let failure { throw failure }
    }

    /// Queues `frames` of silence for the disk thread, after everything given before. The
    /// silence takes no room in the ring, so it is never lost to a stalled disk (and never
    /// counted twice, as a gap and as dropped frames).
    public func appendSilence(frames: Int) throws(AudioFileError) {
        try checkDisk()
        guard frames > 0 else { return }
        pendingLoss += Int64(frames)
        queueLoss()
        givenFrames += Int64(frames)
    }

    /// Queues the files' close (after everything given) and then `done`, on the disk thread;
    /// returns at once. The stream goes on (other takes use it).
    public func close(then done: @escaping @Sendable ([String]) -> Void) throws(AudioFileError) {
        guard closedCount == nil else { return }
        queueLoss()
        closedCount = givenFrames
        stream.perform(always: true) { [inner, weak self] () throws(AudioFileError) in
            defer { done(inner.paths) }
            try inner.close()
            self?.refreshPaths()
        }
    }

    /// Queues the silence owed so far, before anything given after it.
    private func queueLoss() {
        guard pendingLoss > 0 else { return }
        let frames = pendingLoss
        pendingLoss = 0
        stream.perform { [inner] () throws(AudioFileError) in try inner.appendSilence(frames: Int(frames)) }
    }

    /// Throws the disk thread's failure, if a write failed.
    private func checkDisk() throws(AudioFileError) {
        if let failure = stream.failure { throw failure }
    }

    /// Disk thread: the files' paths as they are now (a split in time adds parts).
    private func refreshPaths() {
        let now = inner.paths
        pathSnapshot.withLock { if $0.count != now.count { $0 = now } }
    }
}
