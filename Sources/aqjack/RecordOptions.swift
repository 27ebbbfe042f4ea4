import AQMedia
import CAudioTypes

/// The parsed command line of `aqjack record`.
struct RecordOptions {
    var ports: [String] = []
    var channels: Int?
    var fileType: UInt32?
    var depth: String?
    var rate: Int?
    var sourceQuality = "best"
    var seconds: Double?
    var startFrame: UInt64?
    var force = false
    var meter: Bool?
    var json = false
    var path = ""

    static let fileTypes: [String: UInt32] = [
        "wav": AudioFileTypeValues.wave, "wave": AudioFileTypeValues.wave, "w64": AudioFileTypeValues.wave64,
        "rf64": AudioFileTypeValues.rf64, "aiff": AudioFileTypeValues.aiff, "aif": AudioFileTypeValues.aiff,
        "aifc": AudioFileTypeValues.aifc, "caf": AudioFileTypeValues.caf,
    ]

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        var paths: [String] = []
        while let argument = cursor.next() {
            switch argument {
            case .option("-p"), .option("--port"):
                ports.append(try cursor.value(for: "-p", expected: "a port name or glob, e.g. -p 'system:capture_*'"))
            case .option("-c"), .option("--channels"):
                let text = try cursor.value(for: "-c", expected: "a channel count 1 ... 256")
                guard let count = Int(text), (1 ... 256).contains(count) else {
                    throw UsageError(message: "-c '\(text)' is not a channel count: expected 1 ... 256")
                }
                channels = count
            case .option("-f"), .option("--format"):
                let text = try cursor.value(for: "-f", expected: "wav, w64, rf64, aiff, aifc or caf")
                guard let type = Self.fileTypes[text.lowercased()] else {
                    throw UsageError(message: "-f '\(text)' is not a file type: expected wav, w64, rf64, aiff, aifc or caf")
                }
                fileType = type
            case .option("-b"), .option("--bits"):
                let text = try cursor.value(for: "-b", expected: "16, 24, 32, float or double")
                guard ["16", "24", "32", "float", "double"].contains(text) else {
                    throw UsageError(message: "-b '\(text)' is not a sample depth: expected 16, 24, 32, float or double")
                }
                depth = text
            case .option("-r"), .option("--rate"):
                let text = try cursor.value(for: "-r", expected: "a sample rate in Hz")
                guard let value = Int(text), (1000 ... 768_000).contains(value) else {
                    throw UsageError(message: "-r '\(text)' is not a sample rate: expected 1000 ... 768000 Hz")
                }
                rate = value
            case .option("--src-quality"):
                let text = try cursor.value(for: "--src-quality", expected: "best, medium or fastest")
                guard ["best", "medium", "fastest"].contains(text) else {
                    throw UsageError(message: "--src-quality '\(text)' is not a quality: expected best, medium or fastest")
                }
                sourceQuality = text
            case .option("-d"), .option("--duration"):
                let text = try cursor.value(for: "-d", expected: "seconds, e.g. -d 20 or -d 1.5")
                guard let value = Double(text), value > 0, value.isFinite else {
                    throw UsageError(message: "-d '\(text)' is not a duration: expected a positive number of seconds")
                }
                seconds = value
            case .option("--start-at"):
                let text = try cursor.value(for: "--start-at", expected: "a JACK frame time")
                guard let value = UInt64(text) else {
                    throw UsageError(message: "--start-at '\(text)' is not a frame: expected a JACK frame time (a whole number)")
                }
                startFrame = value
            case .option("--force"): force = true
            case .option("--meter"): meter = true
            case .option("--no-meter"): meter = false
            case .option("--json"): json = true
            case let .option(option):
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for record: expected -p, -c, -f, -b, -r, --src-quality, -d, --start-at, --force, --meter, --no-meter, --json, --server or --name")
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
            let ext = path.split(separator: ".").last.map { String($0).lowercased() } ?? ""
            guard let type = Self.fileTypes[ext], path.contains(".") else {
                throw UsageError(message: "cannot tell the file type of '\(path)' from its extension: use .wav, .w64, .rf64, .aiff, .aifc or .caf, or -f")
            }
            fileType = type
        }
    }

    /// The stream description to record: the depth given, else float for the WAVE family and
    /// CAF, 24-bit for AIFF; the file type's byte order.
    func format(channelCount: Int, sampleRate: Int) -> AudioStreamBasicDescription {
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
