import AQMedia
import Foundation

/// `aqjack record --split SECONDS`: a long recording as consecutive files of `splitFrames`
/// frames each (`take.wav` → `take-001.wav`, `take-002.wav` ...), **sample continuous**: file
/// k+1's first frame is the frame after file k's last, none lost or repeated, each file
/// finalized as soon as it is full and carrying its own BWF TimeReference (the JACK frame of its
/// first sample) where the type has one. Each part may itself be split by channels (more than
/// 1024: ``SplitRecordingFiles``). The next file is opened when its first frame arrives, so a
/// recording that ends on a boundary leaves no empty file. Queue thread only.
public final class TimeSplitFiles: RecordingFiles {
    public let layout: LinearPCMLayout
    public let sampleRate: Double
    public let splitFrames: Int64
    /// Makes the files of part `index` (1-based) at the given path.
    private let make: (String) throws(AudioFileError) -> any RecordingFiles
    private let basePath: String
    /// Called with the paths and length (frames) of each part as it is finalized.
    private let finalized: ([String], Int64) -> Void
    private var current: any RecordingFiles
    private var index = 1
    private var closedPaths: [String] = []
    private var closedFrames: Int64 = 0
    /// The first sample's JACK frame (in the files' rate), for each part's time reference.
    private var startReference: UInt64?
    /// The wall-clock time of the first part's first frame, when given.
    private var startDate: Date?
    private let naming: PartNaming
    /// `--split-at`: the first part ends at the wall clock's next boundary (set at ``markStart(frame:originated:)``).
    private let wallClockSplit: WallClockSplit?
    private var firstPartFrames: Int64?

    /// - Parameter make: opens the file of one part (called on the thread that writes frames).
    /// - Parameter finalized: called with a closed part's paths and frame count.
    /// - Parameter naming: the parts' names (the first one's from the wall clock now, just
    ///   before its first frame; the others' from their first frames).
    /// - Parameter wallClockSplit: parts cut at the top of each period of the wall clock:
    ///   `splitFrames` is then the period in frames, and the first part ends at the first boundary.
    public init(path: String, splitFrames: Int64, make: @escaping (String) throws(AudioFileError) -> any RecordingFiles,
                finalized: @escaping ([String], Int64) -> Void = { _, _ in }, naming: PartNaming = .numbered,
                wallClockSplit: WallClockSplit? = nil) throws(AudioFileError) {
        basePath = path
        self.splitFrames = splitFrames
        self.make = make
        self.finalized = finalized
        self.naming = naming
        self.wallClockSplit = wallClockSplit
        current = try make(naming.path(base: path, index: 1, date: nil))
        layout = current.layout
        sampleRate = current.sampleRate
    }

    /// `take.wav` → `take-001.wav` (part `index`, three digits or more).
    public static func partPath(_ path: String, index: Int) -> String {
        insertingBeforeExtension(String(format: "-%03d", index), into: path)
    }

    public var packetCount: Int64 { closedFrames + current.packetCount }
    public var paths: [String] { closedPaths + current.paths }
    public var canCarryTimeReference: Bool { current.canCarryTimeReference }

    public func markStart(frame: UInt64, originated: Date?) throws(AudioFileError) {
        startReference = frame
        startDate = originated
        if let wallClockSplit, let originated {
            firstPartFrames = max(1, Int64((wallClockSplit.secondsToBoundary(from: originated) * sampleRate).rounded()))
        }
        try current.markStart(frame: frame, originated: originated)
    }

    public func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
        var done = 0
        while done < frames {
            let limit = index == 1 ? firstPartFrames ?? splitFrames : splitFrames
            if current.packetCount >= limit { try nextPart(); continue }
            let count = Int(min(Int64(frames - done), limit - current.packetCount))
            try current.append(bytes + done * layout.bytesPerFrame, frames: count)
            done += count
        }
    }

    /// Finalizes the full part and opens the next, whose first frame follows the last.
    private func nextPart() throws(AudioFileError) {
        let full = current
        try full.close()
        closedPaths += full.paths
        closedFrames += full.packetCount
        finalized(full.paths, full.packetCount)
        index += 1
        let date = startDate.map { $0.addingTimeInterval(Double(closedFrames) / sampleRate) }
        current = try make(naming.path(base: basePath, index: index, date: date))
        if let startReference {
            try current.markStart(frame: startReference + UInt64(closedFrames), originated: date)
        }
    }

    public func close() throws(AudioFileError) {
        try current.close()
        if current.packetCount > 0 || index == 1 { finalized(current.paths, current.packetCount) }
    }
}
