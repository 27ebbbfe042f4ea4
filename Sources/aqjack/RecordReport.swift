import AQCodecs
import AQControl
import AQCore
import AQJack
import AQMedia
import AQSession
import AQPlugins
import AQWeb
import AudioQueue
import CAudioTypes
import Foundation
import Glibc

/// The final summary of a recording.
struct RecordReport: Encodable {
    /// The file, or the first of a recording split into files of 1024 channels; nil when a
    /// take mode (--armed, --trigger, --osc, --transport-multi) ended before its first take.
    var file: String?
    /// Every file of the recording, in channel order (one unless split).
    var files: [String]
    let fileType: String
    let sampleRate: Int
    let channels: Int
    let bitsPerChannel: Int
    let sampleFormat: String
    var frames: Int64
    var seconds: Double
    var startFrameTime: UInt64?
    /// The wall-clock time of the first frame (ISO 8601, UTC, milliseconds), as the files' bext
    /// OriginationDate/-Time give it in local time.
    var startWallClock: String?
    var lostFrames: Int64
    let overrunFrames: Int
    let underrunFrames: Int
    let xruns: Int
    let ports: [String]
    var exitReason: String
    /// Frames JACK's frame time skipped while recording (the server ran no cycle for them): the
    /// lost frames that are the server's, not aqjack's.
    var serverSkippedFrames = 0
    /// How the process callback kept time (lateness, duration, late cycles).
    var processTiming: ProcessTiming?
    /// The sources' capture latency taken out of the frame times (0 with --no-latency-compensation).
    var latencyCompensationFrames = 0
    /// `--stems`: a mono file per channel.
    var stems = false
    /// `--split`: the length of each file, seconds.
    var splitSeconds: Double?
    /// `--transport`, `--trigger`, `--armed`: the takes begun (rolls and relocations in multi
    /// mode, triggers, SIGUSR1 starts); the relocations while the transport rolled.
    var takes: Int?
    var transportRelocations: Int?
    /// `--follow`, `--auto-connect`: connections made after the start (sources back, new
    /// matches), and the frames in which a channel was without its source (silence).
    var reconnections: Int?
    var sourcelessFrames: Int?
    /// `-m`: the Standard MIDI Files written, the events recorded and those lost.
    var midiFiles: [String]?
    var midiEvents: Int?
    var midiLostEvents: Int?
    /// `--silence-alarm`: the silences it told of.
    var silenceAlarms: Int?
    /// Free bytes on the files' disk at the end, and the seconds they hold at the data rate.
    var diskFreeBytes: Int64?
    var diskSecondsLeft: Double?

    /// What the queue and the server say once the queue has stopped; the session's part comes
    /// with ``finish(setup:latencyCompensation:exitReason:)``.
    init(options: RecordOptions, plan: RecordPlan, queue: AudioInputQueue, client: JackClient) {
        let format = options.encodesPerFile ? plan.fileFormat : queue.format
        file = nil
        files = []
        fileType = fourCharacterCode(options.fileType!).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        sampleRate = Int(format.mSampleRate)
        channels = Int(format.mChannelsPerFrame)
        bitsPerChannel = Int(format.mBitsPerChannel)
        sampleFormat = format.mFormatID == AudioFormatValues.mpeg4AAC ? "aac"
            : format.mFormatID == AudioFormatValues.appleLossless ? "alac"
            : format.mFormatFlags & AudioFormatValues.isFloat != 0 ? "float" : "signed-integer"
        frames = 0
        seconds = 0
        lostFrames = 0
        overrunFrames = queue.overrunFrameCount
        underrunFrames = queue.underrunFrameCount
        xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        ports = plan.sources
        exitReason = ""
        serverSkippedFrames = queue.serverSkippedFrameCount
        processTiming = client.processTiming
        stems = options.stems
        splitSeconds = options.splitSeconds ?? options.splitBytes.map { Double($0 / Int64(plan.format.mBytesPerFrame)) / plan.format.mSampleRate }
    }

    /// The session's part, once its files are finished (``files`` set before).
    mutating func finish(setup: RecordingSetup, queue: AudioInputQueue, latencyCompensation: Int, exitReason: String) {
        let summary = setup.session.summary
        file = files.first
        frames = summary.frames
        seconds = Double(frames) / Double(sampleRate)
        startFrameTime = summary.start
        startWallClock = summary.start.map { EventLog.timestamp(setup.clock.date(ofFrame: Double($0))) }
        lostFrames = setup.session.lostFrames(queue: queue)
        latencyCompensationFrames = latencyCompensation
        self.exitReason = exitReason
        if let takes = setup.takes { self.takes = takes.takeCount }
        if let transport = setup.transport { transportRelocations = transport.relocationCount }
    }

    func print(json: Bool) {
        printSummary(self, json: json) {
            let disk = diskFreeBytes.map { "disk free \(DiskSpace.describe(bytes: $0))" + (diskSecondsLeft.map { ": \(DiskSpace.describe(seconds: $0)) more at this data rate" } ?? "") }
            let lines: [String?] = [
                "\(files.isEmpty ? "no take recorded" : files.joined(separator: " + ")): \(fileType), \(channels) ch\(splitSeconds.map { " in \(files.count) files of \($0) s" } ?? (stems ? " as \(files.count) mono stems" : files.count > 1 ? " in \(files.count) files of at most \(SplitRecordingFiles.channelsPerFile)" : "")), \(sampleRate) Hz, \(bitsPerChannel > 0 ? "\(bitsPerChannel)-bit " : "")\(sampleFormat)",
                "  frames \(frames) (\(String(format: "%.3f", seconds)) s) from JACK frame \(startFrameTime.map(String.init) ?? "-")\(startWallClock.map { " (\($0))" } ?? "")\(latencyCompensationFrames > 0 ? " (the sources' \(latencyCompensationFrames)-frame latency taken out)" : "")",
                "  lost frames \(lostFrames) (written as silence), ring overruns \(overrunFrames), queue underruns \(underrunFrames), xruns \(xruns)\(serverSkippedFrames > 0 ? " (frames the server skipped: \(serverSkippedFrames))" : "")",
                reconnections.map { "  connections made while recording \($0), frames without a source (silence) \(sourcelessFrames ?? 0)" },
                midiFiles.map { "  MIDI: \($0.joined(separator: " + ")), \(midiEvents ?? 0) events, lost \(midiLostEvents ?? 0)" },
                silenceAlarms.map { "  silence alarms \($0)" },
                disk.map { "  " + $0 },
                "  stopped by: \(exitReason)",
            ]
            return lines.compactMap { $0 }.joined(separator: "\n")
        }
    }
}
