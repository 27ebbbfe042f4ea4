import AQJack
import AQMedia
import Foundation

/// `aqjack record --split SECONDS`: a long recording as consecutive files of `splitFrames`
/// frames each (`take.wav` → `take-001.wav`, `take-002.wav` ...), **sample continuous**: file
/// k+1's first frame is the frame after file k's last, none lost or repeated, each file
/// finalized as soon as it is full and carrying its own BWF TimeReference (the JACK frame of its
/// first sample) where the type has one. Each part may itself be split by channels (more than
/// 1024: ``SplitRecordingFiles``). The next file is opened when its first frame arrives, so a
/// recording that ends on a boundary leaves no empty file. Queue thread only.
final class TimeSplitFiles: RecordingFiles {
    let layout: LinearPCMLayout
    let sampleRate: Double
    let splitFrames: Int64
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

    init(path: String, splitFrames: Int64, make: @escaping (String) throws(AudioFileError) -> any RecordingFiles,
         finalized: @escaping ([String], Int64) -> Void) throws(AudioFileError) {
        basePath = path
        self.splitFrames = splitFrames
        self.make = make
        self.finalized = finalized
        current = try make(Self.partPath(path, index: 1))
        layout = current.layout
        sampleRate = current.sampleRate
    }

    /// `take.wav` → `take-001.wav` (part `index`, three digits or more).
    static func partPath(_ path: String, index: Int) -> String {
        insertingBeforeExtension(String(format: "-%03d", index), into: path)
    }

    var packetCount: Int64 { closedFrames + current.packetCount }
    var paths: [String] { closedPaths + current.paths }
    var canCarryTimeReference: Bool { current.canCarryTimeReference }

    func markStart(frame: UInt64) throws(AudioFileError) {
        startReference = frame
        try current.markStart(frame: frame)
    }

    func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
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
            try current.markStart(frame: startReference + UInt64(closedFrames))
        }
    }

    func close() throws(AudioFileError) {
        try current.close()
        if current.packetCount > 0 || index == 1 { finalized(current.paths, current.packetCount) }
    }
}

/// `aqjack record --on-file CMD`: runs `CMD PATH` (through `/bin/sh -c`, so CMD may be a
/// pipeline or have arguments) for each finalized file, with a one-line JSON summary of it on
/// standard input, off the queue thread so the recording never waits; a command that fails is
/// reported on standard error, the recording goes on. ``waitForAll()`` waits for the commands
/// still running when the recording ends.
final class FileHook: @unchecked Sendable {
    let command: String
    private let group = DispatchGroup()
    private let queue = DispatchQueue(label: "aqjack.on-file")

    init(command: String) { self.command = command }

    /// Starts the command for `path`, first frame `frame` (the JACK frame, or nil) and `frames` long.
    func run(path: String, frames: Int64) {
        let summary = "{\"path\":\(jsonString(path)),\"frames\":\(frames)}\n"
        let command = command
        queue.async(group: group) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command + " \"$@\"", "aqjack-on-file", path]
            let input = Pipe()
            process.standardInput = input
            do {
                try process.run()
                input.fileHandleForWriting.write(Data(summary.utf8))
                try? input.fileHandleForWriting.close()
                if let exit = process.waitForExit(), !exit.succeeded {
                    Diagnostics.note("--on-file '\(command)' failed for \(path) (\(exit)); the recording goes on")
                }
            } catch {
                Diagnostics.note("--on-file '\(command)' could not run for \(path): \(error.localizedDescription)")
            }
        }
    }

    /// Waits for every command started so far.
    func waitForAll() { group.wait() }

    private func jsonString(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
