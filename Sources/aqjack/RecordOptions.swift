import AQCodecs
import AQMedia
import AQSession
import AudioQueue
import CAudioTypes
import Foundation

/// The parsed command line of `aqjack record`.
struct RecordOptions {
    var ports: [String] = []
    var channels: Int?
    var fileType: UInt32?
    var depth: String?
    var rate: Int?
    var sourceQuality = "best"
    var resampler = Resampler.Engine.soxr
    var seconds: Double?
    /// `--split SECONDS`: consecutive files of this length, sample continuous.
    var splitSeconds: Double?
    /// `--split-size BYTES`: consecutive files of at most this much audio data each.
    var splitBytes: Int64?
    /// `--on-file CMD`: run for each finalized file.
    var onFileCommand: String?
    /// `--transport` (one take, roll to stop) or `--transport-multi` (a file per roll).
    var transport: TransportMode?
    enum TransportMode { case single, multi }
    /// `--trigger DBFS`: takes start at that peak level; `--hold SECONDS` after the last.
    var triggerLevel: Double?
    var holdSeconds: Double?
    /// `--armed`: SIGUSR1 toggles takes.
    var armed = false
    /// `--pre-roll SECONDS`: each take starts that long before its trigger.
    var preRollSeconds: Double?
    /// `--osc PORT [--osc-host ADDRESS] [--osc-token TOKEN]`: /aqjack/start, /stop, /split, /status, /quit.
    var osc = OSCOptions()
    /// `--http [ADDRESS:]PORT [--http-token TOKEN]`: the web page, /status, /metrics, /live, POST /control/VERB.
    var http = HTTPOptions()
    /// Takes that start and stop by themselves (trigger, SIGUSR1 or OSC).
    var isArmedRecording: Bool { triggerLevel != nil || armed || osc.port != nil }
    var startFrame: UInt64?
    var force = false
    /// 'lpcm' or 'aac ' (AAC for .aac/.m4a/.mp4; CAF with --codec aac).
    var codec: UInt32?
    var bitRate: Int?
    var quality: Int?
    var meter: Bool?
    var json = false
    var path = ""
    /// `--lv2` plugins the recording goes through, on the queue thread (latency compensated).
    var chain = PluginChainOptions()
    /// Whether the sources' capture latency is taken out of the frame times (default on).
    var compensatesLatency = true
    /// `--silence-alarm DBFS SECONDS`: an event when every channel stays below DBFS (peak) that
    /// long, and one when sound returns.
    var silenceAlarm: (decibels: Double, seconds: Double)?
    /// What each file says about itself: `--description`, `--originator`,
    /// `--originator-reference`, `--project`, `--scene`, `--take`, `--loudness` (bext, iXML).
    var metadata = RecordingMetadata()
    /// `--name-format PATTERN`: files named after their first frame's wall-clock time (strftime).
    var nameFormat: String?
    /// `--split-at PERIOD`: parts cut at the top of each PERIOD of the wall clock, seconds.
    var splitAtSeconds: Double?
    /// How parts and takes are named.
    var naming: PartNaming { nameFormat.map { .wallClock(pattern: $0) } ?? .numbered }
    /// `-m PORT_OR_GLOB`: JACK MIDI ports recorded to a Standard MIDI File beside each audio file.
    var midiPorts: [String] = []
    /// `--follow`: what is connected to the inputs is kept connected as its clients come and go.
    var follow = false
    /// `-p GLOB --auto-connect`: ports matching the globs that appear later are connected too.
    var autoConnect = false
    /// `--latency-offset FRAMES`: the sources' latency that they do not report, taken out of the
    /// frame times with the reported one.
    var latencyOffset = 0
    /// `--stems`: a mono file per channel, named after its source port.
    var stems = false
    /// `--min-free MINUTES`: refuse to start unless the disk holds this long at the data rate;
    /// while recording, the disk-low warning comes at this much time left (default 10 minutes).
    var minimumFreeMinutes: Double?

    /// Seconds of a period written `90`, `90s`, `15m`, `15min` or `1h`; nil otherwise.
    static func period(_ text: String) -> Double? {
        let units: [(String, Double)] = [("min", 60), ("h", 3600), ("m", 60), ("s", 1)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }.flatMap { $0.isFinite ? $0 : nil }
        }
        return Double(text).flatMap { $0.isFinite ? $0 : nil }
    }

    /// The longest `-d`: a year, in seconds (at 768 kHz still far inside Int64 frames).
    static let longestDuration = 31_536_000.0
    /// The shortest file of a split recording, seconds: one 0.1 s queue buffer (shorter parts
    /// would only be more files, up to one a frame).
    static let shortestSplit = 0.1
    /// The most memory a pre-roll may take (all channels, as recorded): 1 GiB.
    static let largestPreRollBytes = 1 << 30
    /// `entry` if `record` writes that file type (``FileTypes``: it has recordable codecs).
    static func recordable(_ entry: FileTypeEntry?) -> FileTypeEntry? {
        entry.flatMap { $0.recordableCodecs.isEmpty ? nil : $0 }
    }

    var isAAC: Bool { codec == AudioFormatValues.mpeg4AAC }
    var isALAC: Bool { codec == AudioFormatValues.appleLossless }
    /// Recorded as packets (AAC, ALAC) rather than linear PCM.
    var isCompressed: Bool { isAAC || isALAC }
    /// A compressed recording in parts, takes or stems (`--split`, `--transport`, `--trigger`,
    /// `--armed`, `--osc`, `--stems`): the queue delivers Float frames and each file encodes its
    /// own (its own priming, exactly its frames), on the disk-writer thread. Other compressed
    /// recordings are encoded by the queue.
    var encodesPerFile: Bool { isCompressed && (splitSeconds != nil || splitAtSeconds != nil || transport != nil || isArmedRecording || stems) }

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        var paths: [String] = []
        while let argument = cursor.next() {
            switch argument {
            case .option("-p"), .option("--port"):
                ports.append(try cursor.value(for: "-p", expected: "a port name or glob, e.g. -p 'system:capture_*'"))
            case .option("-m"), .option("--midi"):
                midiPorts.append(try cursor.value(for: "-m", expected: "a JACK MIDI output port or glob, e.g. -m 'keys:midi_out'"))
            case .option("-c"), .option("--channels"):
                channels = try cursor.integer(for: "-c", in: 1 ... Int(LinearPCMLayout.maximumChannelCount),
                                              meaning: "a channel count (a recording of more than 1024 is split into files of 1024 channels, libsndfile's limit)")
            case .option("-f"), .option("--format"):
                let recordable = FileTypes.extensionList { !$0.recordableCodecs.isEmpty }
                let text = try cursor.value(for: "-f", expected: recordable)
                guard let type = Self.recordable(FileTypes.entry(forExtension: text))?.typeID else {
                    throw UsageError(message: "-f '\(text)' is not a file type: expected \(recordable)")
                }
                fileType = type
            case .option("--codec"):
                let text = try cursor.value(for: "--codec", expected: "lpcm, aac or alac")
                switch text.lowercased() {
                case "lpcm", "pcm": codec = AudioFormatValues.linearPCM
                case "aac": codec = AudioFormatValues.mpeg4AAC
                case "alac": codec = AudioFormatValues.appleLossless
                default: throw UsageError(message: "--codec '\(text)' cannot be recorded: expected lpcm, aac or alac (convert to FLAC afterwards with aqjack convert)")
                }
            case .option("--bitrate"):
                bitRate = try cursor.integer(for: "--bitrate", in: AACEncoder.bitRates, meaning: "an AAC bit rate in bits per second (all channels), e.g. 128000")
            case .option("-q"), .option("--quality"):
                quality = try cursor.integer(for: "-q", in: 0 ... 127, meaning: "a codec quality on Apple's scale (96 = High)")
            case .option("-b"), .option("--bits"):
                let text = try cursor.value(for: "-b", expected: "16, 24, 32, float or double")
                guard ["16", "24", "32", "float", "double"].contains(text) else {
                    throw UsageError(message: "-b '\(text)' is not a sample depth: expected 16, 24, 32, float or double")
                }
                depth = text
            case .option("-r"), .option("--rate"):
                rate = try cursor.integer(for: "-r", in: 1000 ... 768_000, meaning: "a sample rate in Hz")
            case .option("--src-quality"):
                let text = try cursor.value(for: "--src-quality", expected: "best, medium or fastest")
                guard ["best", "medium", "fastest"].contains(text) else {
                    throw UsageError(message: "--src-quality '\(text)' is not a quality: expected best, medium or fastest")
                }
                sourceQuality = text
            case .option("-d"), .option("--duration"):
                seconds = try cursor.real(for: "-d", in: 0 ... RecordOptions.longestDuration, excludingLowerBound: true,
                                          meaning: "a duration in seconds (at most a year)")
            case .option("--split"):
                splitSeconds = try cursor.real(for: "--split", in: RecordOptions.shortestSplit ... RecordOptions.longestDuration,
                                               meaning: "the length of each file in seconds (at least one 0.1 s queue buffer)")
            case .option("--split-size"):
                splitBytes = Int64(try cursor.integer(for: "--split-size", in: 1 ... (1 << 50),
                                                      meaning: "the audio bytes of each file (e.g. 2000000000 for files under 2 GB)"))
            case .option("--on-file"):
                onFileCommand = try cursor.value(for: "--on-file", expected: "a command to run with each finished file's path, e.g. 'flac -f'")
            case .option("--transport"): transport = .single
            case .option("--transport-multi"): transport = .multi
            case .option("--trigger"):
                triggerLevel = try cursor.real(for: "--trigger", in: -120 ... 0, meaning: "a peak level in dBFS, e.g. -30")
            case .option("--hold"):
                holdSeconds = try cursor.real(for: "--hold", in: 0 ... 3600, meaning: "seconds below the trigger level before a take ends")
            case .option("--pre-roll"):
                preRollSeconds = try cursor.real(for: "--pre-roll", in: 0 ... 600, meaning: "seconds kept before each take's start")
            case .option("--armed"): armed = true
            case .option("--silence-alarm"):
                let level = try cursor.real(for: "--silence-alarm", in: -120 ... 0, meaning: "a peak level in dBFS then seconds, e.g. --silence-alarm -60 10")
                let seconds = try cursor.real(for: "--silence-alarm \(level)", in: 0.1 ... 86400,
                                              meaning: "the seconds every channel stays below the level before the alarm, e.g. --silence-alarm -60 10")
                silenceAlarm = (level, seconds)
            case .option("--description"):
                metadata.description = try cursor.value(for: "--description", expected: "the files' BWF description (256 bytes at most)")
            case .option("--originator"):
                metadata.originator = try cursor.value(for: "--originator", expected: "who made the files, for BWF (32 bytes at most)")
            case .option("--originator-reference"):
                metadata.originatorReference = try cursor.value(for: "--originator-reference", expected: "the files' BWF originator reference (32 bytes at most)")
            case .option("--project"):
                metadata.project = try cursor.value(for: "--project", expected: "the project's name, for iXML")
            case .option("--scene"):
                metadata.scene = try cursor.value(for: "--scene", expected: "the scene, for iXML")
            case .option("--take"):
                metadata.take = try cursor.value(for: "--take", expected: "the take's name or number, for iXML")
            case .option("--loudness"): metadata.measuresLoudness = true
            case .option("--stems"): stems = true
            case .option("--follow"): follow = true
            case .option("--auto-connect"): autoConnect = true
            case .option("--latency-offset"):
                latencyOffset = try cursor.integer(for: "--latency-offset", in: 0 ... 10_000_000,
                                                   meaning: "frames of latency the sources do not report (a network bridge's), taken out of the frame times")
            case .option("--name-format"):
                let pattern = try cursor.value(for: "--name-format", expected: "an strftime pattern for the files' names, e.g. 'gig-%Y%m%d-%H%M%S'")
                guard !pattern.contains("/"), !PartNaming.format(pattern, Date()).isEmpty else {
                    throw UsageError(message: "--name-format '\(pattern)' does not make a file name: expected an strftime pattern without '/', e.g. 'gig-%Y%m%d-%H%M%S' (FILE gives the folder and extension)")
                }
                nameFormat = pattern
            case .option("--split-at"):
                let text = try cursor.value(for: "--split-at", expected: "a period of the wall clock, e.g. 1h, 15m or 30s")
                guard let seconds = Self.period(text), seconds >= 1, seconds <= 86400 else {
                    throw UsageError(message: "--split-at '\(text)' is not a period: expected seconds or a number with s, m or h, from 1s to 24h, e.g. 1h")
                }
                splitAtSeconds = seconds
            case .option("--min-free"):
                minimumFreeMinutes = try cursor.real(for: "--min-free", in: 0 ... 525_600, meaning: "minutes of recording the disk must hold at the data rate")
            case .option("--start-at"):
                startFrame = try cursor.integer(for: "--start-at", in: 0 ... latestStartFrame, meaning: "a JACK frame time")
            case .option("--resampler"): resampler = try cursor.resampler(for: "--resampler")
            case .option("--force"): force = true
            case .option("--no-latency-compensation"): compensatesLatency = false
            case .option("--meter"): meter = true
            case .option("--no-meter"): meter = false
            case .option("--json"): json = true
            case let .option(option):
                if try chain.parse(option, from: &cursor) { continue }
                if try osc.parse(option, from: &cursor) { continue }
                if try http.parse(option, from: &cursor) { continue }
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for record: expected -p, -m, -c, -f, -b, -r, --codec, --bitrate, -q, --src-quality, --resampler, -d, --split, --split-size, --on-file, --transport, --transport-multi, --trigger, --hold, --armed, --pre-roll, --silence-alarm, --min-free, --description, --originator, --originator-reference, --project, --scene, --take, --loudness, --stems, --follow, --auto-connect, --latency-offset, --name-format, --split-at, --osc, --osc-host, --osc-token, --http, --http-token, --http-token-file, --start-at, --plugin, --lv2, --set, --preset, --no-latency-compensation, --force, --meter, --no-meter, --json, --server or --name")
            case let .operand(word):
                paths.append(word)
            }
        }
        guard paths.count == 1 else {
            throw UsageError(message: paths.isEmpty ? "record needs a FILE to write, e.g. aqjack record take1.wav"
                                                     : "record takes one FILE, got \(paths.count): \(paths.joined(separator: ", "))")
        }
        path = paths[0]
        if fileType == nil {
            guard let type = Self.recordable(FileTypes.entry(forPath: path))?.typeID else {
                throw UsageError(message: "cannot tell the file type of '\(path)' from its extension: use \(FileTypes.extensionList(prefix: ".") { !$0.recordableCodecs.isEmpty }), or -f")
            }
            fileType = type
        }
        // What the type can take is the table's (FileTypes): its first recordable codec by default.
        let entry = FileTypes.entry(fileType!)!
        if codec == nil { codec = entry.recordableCodecs[0] }
        if !entry.recordableCodecs.contains(codec!) {
            let takers = FileTypes.all.filter { $0.recordableCodecs.contains(codec!) }.map { "." + $0.primaryExtension }
            switch codec! {
            case AudioFormatValues.mpeg4AAC:
                throw UsageError(message: "--codec aac records to \(takers.joined(separator: ", ")); '\(path)' is \(fourCharacterCode(fileType!))")
            case AudioFormatValues.appleLossless:
                throw UsageError(message: "--codec alac records to \(takers.joined(separator: " or ")); '\(path)' is \(fourCharacterCode(fileType!)) (record PCM and convert it for ALAC in CAF)")
            default:
                let holds = entry.recordableCodecs.map(FileTypes.codecName).joined(separator: " or ")
                throw UsageError(message: "\(fourCharacterCode(fileType!)) files hold \(holds), not linear PCM: drop --codec lpcm or record to .wav/.caf")
            }
        }
        if metadata.measuresLoudness && ![AudioFileTypeValues.wave, AudioFileTypeValues.rf64].contains(fileType!) {
            throw UsageError(message: "--loudness writes Broadcast Wave's version 2 'bext' chunk: record to .wav or .rf64, not \(fourCharacterCode(fileType!))")
        }
        if follow && autoConnect {
            throw UsageError(message: "--follow keeps whatever is connected, --auto-connect connects -p's matches as they appear: give one")
        }
        if autoConnect && ports.isEmpty {
            throw UsageError(message: "--auto-connect connects the ports matching -p as they appear: give -p GLOB, e.g. -p 'synth:out_*'")
        }
        if splitAtSeconds != nil && (splitSeconds != nil || splitBytes != nil || transport != nil || isArmedRecording) {
            throw UsageError(message: "--split-at cuts one continuous recording at the wall clock: drop --split, --split-size, --transport, --trigger, --armed and --osc")
        }
        if splitSeconds != nil && splitBytes != nil {
            throw UsageError(message: "--split and --split-size both set the length of each file: give one")
        }
        if splitBytes != nil && isCompressed {
            throw UsageError(message: "--split-size counts linear-PCM bytes; \(isAAC ? "AAC" : "Apple Lossless") files have no fixed size a frame: give --split SECONDS")
        }
        if let transport {
            let name = transport == .single ? "--transport" : "--transport-multi"
            // The take starts and ends where the transport does: nothing else decides it.
            if seconds != nil || startFrame != nil || splitSeconds != nil || splitBytes != nil {
                throw UsageError(message: "\(name) records from the transport's roll to its stop: drop -d, --start-at, --split and --split-size")
            }
        }
        // --trigger with --osc: the level starts takes, OSC may start, stop or split one too and
        // reads the status (a studio watching a trigger recorder from its control surface).
        // SIGUSR1's toggle has no meaning beside a level, so --armed stays alone.
        if triggerLevel != nil && armed {
            throw UsageError(message: "--trigger starts takes at a level, --armed on SIGUSR1: give one (--trigger works with --osc)")
        }
        if holdSeconds != nil && triggerLevel == nil {
            throw UsageError(message: "--hold is how long a --trigger take goes on below the level: give --trigger DBFS too")
        }
        if preRollSeconds != nil && !isArmedRecording {
            throw UsageError(message: "--pre-roll keeps the seconds before a take's start: give --trigger DBFS or --armed")
        }
        if isArmedRecording {
            let name = triggerLevel != nil ? "--trigger" : osc.port != nil ? "--osc" : "--armed"
            if transport != nil { throw UsageError(message: "\(name) and --transport both start and stop takes: give one") }
            if seconds != nil || startFrame != nil || splitSeconds != nil || splitBytes != nil {
                throw UsageError(message: "\(name) starts and stops takes by itself: drop -d, --start-at, --split and --split-size")
            }
        }
        try osc.validate()
        try http.validate()
        if isALAC, let depth, depth != "16" && depth != "24" {
            throw UsageError(message: "-b \(depth) with --codec alac: Apple Lossless records 16 or 24 bits")
        }
        if isAAC && depth != nil {
            throw UsageError(message: "-b sets a linear-PCM bit depth; AAC takes --bitrate (bits per second) instead")
        }
        if !isAAC && (bitRate != nil || quality != nil) {
            throw UsageError(message: "--bitrate and -q apply to AAC; this recording is \(isALAC ? "Apple Lossless" : "linear PCM") (use --codec aac, or .m4a/.aac)")
        }
    }

    /// What is wrong with the sizes given once the format is known (the server's rate and the
    /// channel count), or nil: a pre-roll larger than ``largestPreRollBytes``, or a
    /// `--split-size` under 0.1 s of audio.
    func sizeProblem(format: AudioStreamBasicDescription) -> String? {
        let bytesPerSecond = Double(max(format.mBytesPerFrame, 4 * format.mChannelsPerFrame)) * format.mSampleRate
        if let preRoll = preRollSeconds, preRoll * bytesPerSecond > Double(Self.largestPreRollBytes) {
            let most = Double(Self.largestPreRollBytes) / bytesPerSecond
            return "--pre-roll \(preRoll) s of \(format.mChannelsPerFrame) channels at \(Int(format.mSampleRate)) Hz would keep \(Int64(preRoll * bytesPerSecond) >> 20) MiB in memory: expected at most \(Self.largestPreRollBytes >> 20) MiB (\(String(format: "%.1f", most)) s at this width)"
        }
        if let bytes = splitBytes, format.mBytesPerFrame > 0, Double(bytes) < Self.shortestSplit * bytesPerSecond {
            return "--split-size \(bytes) is less than 0.1 s of this recording (\(Int64(Self.shortestSplit * bytesPerSecond)) bytes at \(format.mBytesPerFrame) bytes a frame): expected at least that"
        }
        return nil
    }

    /// The stream description to record: the depth given, else float for the WAVE family and
    /// CAF, 24-bit for AIFF; the file type's byte order.
    func format(channelCount: Int, sampleRate: Int) -> AudioStreamBasicDescription {
        if isALAC {
            return CompressedFormatValues.alacDescription(sampleRate: Double(sampleRate), channelCount: channelCount, bitDepth: depth == "24" ? 24 : 16)
        }
        if isAAC {
            return AudioStreamBasicDescription(mSampleRate: Double(sampleRate), mFormatID: AudioFormatValues.mpeg4AAC,
                                               mFormatFlags: AudioFormatValues.aacLowComplexity, mBytesPerPacket: 0, mFramesPerPacket: 1024,
                                               mBytesPerFrame: 0, mChannelsPerFrame: UInt32(channelCount), mBitsPerChannel: 0, mReserved: 0)
        }
        let type = fileType!
        let isAIFF = type == AudioFileTypeValues.aiff || type == AudioFileTypeValues.aifc
        let chosen = depth ?? (type == AudioFileTypeValues.aiff ? "24" : "float")
        let isFloat = chosen == "float" || chosen == "double"
        let bits = chosen == "float" ? 32 : chosen == "double" ? 64 : Int(chosen)!
        var flags = AudioFormatValues.isPacked | (isFloat ? AudioFormatValues.isFloat : AudioFormatValues.isSignedInteger)
        if isAIFF || type == AudioFileTypeValues.caf { flags |= AudioFormatValues.isBigEndian }
        let bytesPerFrame = UInt32(channelCount * bits / 8)
        return AudioStreamBasicDescription(mSampleRate: Double(sampleRate), mFormatID: AudioFormatValues.linearPCM,
                                           mFormatFlags: flags, mBytesPerPacket: bytesPerFrame, mFramesPerPacket: 1,
                                           mBytesPerFrame: bytesPerFrame, mChannelsPerFrame: UInt32(channelCount),
                                           mBitsPerChannel: UInt32(bits), mReserved: 0)
    }
}
