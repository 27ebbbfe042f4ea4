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

    /// - Parameter make: opens the file of one part (called on the thread that writes frames).
    /// - Parameter finalized: called with a closed part's paths and frame count.
    public init(path: String, splitFrames: Int64, make: @escaping (String) throws(AudioFileError) -> any RecordingFiles,
                finalized: @escaping ([String], Int64) -> Void = { _, _ in }) throws(AudioFileError) {
        basePath = path
        self.splitFrames = splitFrames
        self.make = make
        self.finalized = finalized
        current = try make(Self.partPath(path, index: 1))
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
        try current.markStart(frame: frame, originated: originated)
    }

    public func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
        var done = 0
        while done < frames {
            if current.packetCount >= splitFrames { try nextPart() }
            let count = Int(min(Int64(frames - done), splitFrames - current.packetCount))
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
        current = try make(Self.partPath(basePath, index: index))
        if let startReference, current.canCarryTimeReference {
            try current.markStart(frame: startReference + UInt64(closedFrames),
                                  originated: startDate.map { $0.addingTimeInterval(Double(closedFrames) / sampleRate) })
        }
    }

    public func close() throws(AudioFileError) {
        try current.close()
        if current.packetCount > 0 || index == 1 { finalized(current.paths, current.packetCount) }
    }
}
