import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// The takes of a recording that starts and stops by itself (`--transport`, `--trigger`,
/// `--armed`): each take its own file — the path itself for a single take, else `NAME-001.ext`,
/// `NAME-002.ext` ... — finalized as soon as the take ends (and handed to `--on-file`). A take's
/// frames are appended as the controller writes them: the queue has already filled every gap
/// with silence, and the frames of that silence a take holds are counted lost (told by
/// ``noteGapSilence(_:)``, found by position). With a ``DiskStream``, every take's writes, its close, the removal of an empty take and the
/// hand-off run on the disk-writer thread (the take's file is created on the calling thread, so
/// a refusal comes at once). Queue thread only.
public final class TakeFiles {
    public let layout: LinearPCMLayout
    private let path: String
    private let numbered: Bool
    /// Opens the files of a take at a path.
    private let make: (String) throws(AudioFileError) -> any RecordingFiles
    /// Called with the paths and length of each take as it is finalized (on the disk thread
    /// with a stream).
    private let finalized: @Sendable ([String], Int64) -> Void
    private let stream: DiskStream?
    private var droppedBefore: Int64 = 0
    /// The single take's file, opened up front so a refusal (an existing file) comes first.
    private var waiting: (any RecordingFiles)?
    /// The take being written, and the position of its next frame (the controller's frames).
    private var current: (any RecordingFiles)?
    private var position = 0.0
    /// The latest runs of gap silence, as positions, oldest first: at most `gapRunLimit`, enough
    /// for a pre-roll's worth (a run comes at most once a buffer).
    private var gapRuns: [Range<Double>] = []
    private static let gapRunLimit = 256
    /// Frames of the takes that are gap silence (fractional when resampled).
    private var gapFrames = 0.0
    public private(set) var takeCount = 0
    /// The wall-clock time of a frame as the controller counts (a take's first frame: its
    /// files' OriginationDate/-Time), when known. Set before the first take.
    public var clock: (@Sendable (Double) -> Date)?
    /// How numbered takes are named (``PartNaming``: `NAME-001.ext` ..., or the wall clock).
    public var naming = PartNaming.numbered
    /// Told on the calling thread when a take begins (its files' paths, its TimeReference, its
    /// first frame as the controller counts: the queue's sample time) and ends (its frames; 0
    /// for a numbered take that held none, whose file is removed): what a session reports as
    /// events, and where `record -m` starts a take's MIDI file.
    public var onBegin: (@Sendable ([String], UInt64, Double) -> Void)?
    public var onEnd: (@Sendable (Int64) -> Void)?
    /// The takes closed and kept, in order (their paths grow on the disk thread until closed:
    /// a split in time adds parts).
    private var closedTakes: [any RecordingFiles] = []
    private var closedFrames: Int64 = 0
    /// The first take's first frame, as the controller counts frames (``TakeController``).
    public private(set) var firstFrame: Double?
    /// Frames of the takes lost, all written as silence: gaps the queue filled, frames the disk
    /// writer had no room for.
    public var lostFrames: Int64 { Int64(gapFrames.rounded()) + droppedBefore + (current?.droppedFrames ?? 0) }

    /// - Parameter numbered: every take numbered (`NAME-001.ext` ...); otherwise one take, into
    ///   `path`, whose file is created now.
    /// - Parameter stream: the disk-writer stream the takes are written through; nil writes on
    ///   the calling thread.
    public init(path: String, numbered: Bool, layout: LinearPCMLayout, stream: DiskStream? = nil,
                make: @escaping (String) throws(AudioFileError) -> any RecordingFiles,
                finalized: @escaping @Sendable ([String], Int64) -> Void = { _, _ in }) throws(AudioFileError) {
        self.path = path
        self.numbered = numbered
        self.layout = layout
        self.stream = stream
        if let stream {
            self.make = { (path: String) throws(AudioFileError) -> any RecordingFiles in
                let files = try make(path)
                return DiskBackedFiles(files, stream: stream)
            }
        } else {
            self.make = make
        }
        self.finalized = finalized
        if !numbered { waiting = try self.make(path) }
    }

    public var isRecording: Bool { current != nil }
    /// Every file written, in order (takes, then channel groups).
    public var paths: [String] { closedTakes.flatMap(\.paths) + (current?.paths ?? waiting?.paths ?? []) }
    public var frames: Int64 { closedFrames + (current?.packetCount ?? 0) }

    /// Starts a take whose first frame is frame `sampleTime` as the controller counts; its BWF
    /// TimeReference (where the type has one) is `timeReference`.
    public func begin(at sampleTime: Double, timeReference: UInt64) throws(AudioFileError) {
        takeCount += 1
        let date = clock?(sampleTime)
        let files: any RecordingFiles
        if let single = waiting {
            files = single
            waiting = nil
        } else {
            files = try make(naming.path(base: path, index: takeCount, date: date))
        }
        try files.markStart(frame: timeReference, originated: date)
        current = files
        position = sampleTime
        if firstFrame == nil { firstFrame = sampleTime }
        onBegin?(files.paths, timeReference, sampleTime)
    }

    /// Tells the takes which frames (positions as the controller counts) are silence the queue
    /// put in for lost frames; those the takes hold are counted in ``lostFrames``.
    public func noteGapSilence(_ runs: [Range<Double>]) {
        gapRuns.append(contentsOf: runs)
        if gapRuns.count > Self.gapRunLimit { gapRuns.removeFirst(gapRuns.count - Self.gapRunLimit) }
    }

    /// Appends `frames` frames in the files' layout to the take being written, the next frames
    /// of its timeline; nothing when no take is open.
    public func write(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
        guard frames > 0, let files = current else { return }
        try files.append(bytes, frames: frames)
        let written = position ..< position + Double(frames)
        for run in gapRuns where run.overlaps(written) {
            let overlap = run.clamped(to: written)
            gapFrames += overlap.upperBound - overlap.lowerBound
        }
        position = written.upperBound
    }

    /// Finalizes the take being written, if any. A numbered take that holds no frame (one that
    /// ended where it began) is removed, not kept as an empty file.
    public func end() throws(AudioFileError) {
        guard let files = current else { return }
        current = nil
        let frames = files.packetCount
        onEnd?(frames)
        droppedBefore += files.droppedFrames
        let empty = numbered && frames == 0
        if !empty {
            closedTakes.append(files)
            closedFrames += frames
        }
        // The paths are read once the files are closed: the last frames may open another part.
        try files.close { [finalized] paths in
            if empty { paths.forEach { unlink($0) } } else { finalized(paths, frames) }
        }
    }

    /// Ends the take being written; a single take that never began leaves its empty, valid file.
    public func close() throws(AudioFileError) {
        try end()
        if let single = waiting {
            waiting = nil
            try single.close { _ in }
            closedTakes.append(single)
        }
        // Every take's writes and close done: the disk thread's failure, if one failed.
        if let failure = stream?.finish() { throw failure }
    }
}
