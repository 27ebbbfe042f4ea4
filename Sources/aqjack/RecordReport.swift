import AQCodecs
import AQControl
import AQCore
import AQJack
import AQMedia
import AQSession
import AQPlugins
import AudioQueue
import CAudioTypes
import Foundation
import Glibc

/// The final summary of a recording.
struct RecordReport: Encodable {
    /// The file, or the first of a recording split into files of 1024 channels; nil when a
    /// take mode (--armed, --trigger, --osc, --transport-multi) ended before its first take.
    let file: String?
    /// Every file of the recording, in channel order (one unless split).
    let files: [String]
    let fileType: String
    let sampleRate: Int
    let channels: Int
    let bitsPerChannel: Int
    let sampleFormat: String
    let frames: Int64
    let seconds: Double
    let startFrameTime: UInt64?
    let lostFrames: Int64
    let overrunFrames: Int
    let underrunFrames: Int
    let xruns: Int
    let ports: [String]
    let exitReason: String
    /// Frames JACK's frame time skipped while recording (the server ran no cycle for them): the
    /// lost frames that are the server's, not aqjack's.
    var serverSkippedFrames = 0
    /// How the process callback kept time (lateness, duration, late cycles).
    var processTiming: ProcessTiming?
    /// The sources' capture latency taken out of the frame times (0 with --no-latency-compensation).
    var latencyCompensationFrames = 0
    /// `--split`: the length of each file, seconds.
    var splitSeconds: Double?
    /// `--transport`, `--trigger`, `--armed`: the takes begun (rolls and relocations in multi
    /// mode, triggers, SIGUSR1 starts); the relocations while the transport rolled.
    var takes: Int?
    var transportRelocations: Int?

    init(files: [String], fileType: String, format: AudioStreamBasicDescription, frames: Int64, startFrame: UInt64?,
         lostFrames: Int64, overrunFrames: Int, underrunFrames: Int, xruns: Int, ports: [String], exitReason: String) {
        file = files.first
        self.files = files
        self.fileType = fileType.trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        sampleRate = Int(format.mSampleRate)
        channels = Int(format.mChannelsPerFrame)
        bitsPerChannel = Int(format.mBitsPerChannel)
        sampleFormat = format.mFormatID == CompressedFormatValues.mpeg4AAC ? "aac"
            : format.mFormatID == CompressedFormatValues.appleLossless ? "alac"
            : format.mFormatFlags & AudioFormatValues.isFloat != 0 ? "float" : "signed-integer"
        self.frames = frames
        seconds = Double(frames) / format.mSampleRate
        startFrameTime = startFrame
        self.lostFrames = lostFrames
        self.overrunFrames = overrunFrames
        self.underrunFrames = underrunFrames
        self.xruns = xruns
        self.ports = ports
        self.exitReason = exitReason
    }

    func print(json: Bool) {
        printSummary(self, json: json) {
            """
            \(files.isEmpty ? "no take recorded" : files.joined(separator: " + ")): \(fileType), \(channels) ch\(splitSeconds.map { " in \(files.count) files of \($0) s" } ?? (files.count > 1 ? " in \(files.count) files of at most \(SplitRecordingFiles.channelsPerFile)" : "")), \(sampleRate) Hz, \(bitsPerChannel)-bit \(sampleFormat)
              frames \(frames) (\(String(format: "%.3f", seconds)) s) from JACK frame \(startFrameTime.map(String.init) ?? "-")\(latencyCompensationFrames > 0 ? " (the sources' \(latencyCompensationFrames)-frame latency taken out)" : "")
              lost frames \(lostFrames) (written as silence), ring overruns \(overrunFrames), queue underruns \(underrunFrames), xruns \(xruns)\(serverSkippedFrames > 0 ? " (frames the server skipped: \(serverSkippedFrames))" : "")
              stopped by: \(exitReason)
            """
        }
    }
}
