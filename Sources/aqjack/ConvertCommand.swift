import AQCodecs
import AQGraph
import AQMedia
import AQPlugins
import Foundation
import Glibc

/// `aqjack convert IN OUT [options]`: afconvert's job (see ``FileConversion``). Options may come
/// before or after the file names. Exit 0 converted, 1 the conversion failed (message names the
/// file and why), 2 usage error.
struct ConvertCommand {
    var request = FileConversion.Request(inputPath: "", outputPath: "")
    var json = false
    var chain = PluginChainOptions()
    /// `--graph FILE`: a saved plugin graph (``GraphStage``) the output runs through.
    var graphFile: String?

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        var paths: [String] = []
        while let argument = cursor.next() {
            switch argument {
            case .option("-f"), .option("--file-type"):
                let text = try cursor.value(for: "-f", expected: "a file type: " + FileTypes.extensionList())
                guard let type = Self.fileType(named: text) else {
                    throw UsageError(message: "-f '\(text)' is not a file type: expected \(FileTypes.extensionList()) (or Apple's \(FileTypes.typeIDList))")
                }
                request.fileType = type
            case .option("--codec"):
                let text = try cursor.value(for: "--codec", expected: "lpcm, aac, alac or flac")
                guard let codec = Self.codec(named: text) else {
                    throw UsageError(message: "--codec '\(text)' is not a codec: expected lpcm, aac, alac or flac")
                }
                request.codec = codec
            case .option("--bitrate"):
                request.bitRate = try cursor.integer(for: "--bitrate", in: AACEncoder.bitRates, meaning: "an AAC bit rate in bits per second (all channels), e.g. 128000")
            case .option("-q"), .option("--quality"):
                request.quality = try cursor.integer(for: "-q", in: 0 ... 127, meaning: "a codec quality on Apple's scale (96 = High)")
            case .option("-r"), .option("--rate"):
                request.sampleRate = Double(try cursor.integer(for: "-r", in: 1000 ... 768_000, meaning: "a sample rate in Hz"))
            case .option("-c"), .option("--channels"):
                request.channelCount = try cursor.integer(for: "-c", in: 1 ... 1024, meaning: "a channel count (libsndfile writes at most 1024 per file)")
            case .option("-b"), .option("--bit-depth"):
                let depth = try cursor.integer(for: "-b", in: 8 ... 32, meaning: "a bit depth: 8, 16, 24 or 32")
                guard [8, 16, 24, 32].contains(depth) else { throw UsageError(message: "-b \(depth): expected 8, 16, 24 or 32 (bits per sample)") }
                request.bitDepth = depth
            case .option("--src-quality"):
                let text = try cursor.value(for: "--src-quality", expected: "best, medium or fastest")
                guard let quality = ["best": UInt32(0x7F), "medium": 0x40, "fastest": 0x20][text] else {
                    throw UsageError(message: "--src-quality '\(text)' is not a quality: expected best, medium or fastest")
                }
                request.sampleRateConverterQuality = quality
            case .option("--resampler"): request.resampler = try cursor.resampler(for: "--resampler")
            case .option("--force"): request.eraseExisting = true
            case .option("--json"): json = true
            case .option("--graph"):
                graphFile = try cursor.value(for: "--graph", expected: "a graph file saved by aqjack host's control socket (docs/CONTROL.md)")
            case let .option(option):
                if try chain.parse(option, from: &cursor) { continue }
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for convert: expected -f, --codec, --bitrate, -q, -r, -c, -b, --src-quality, --resampler, --plugin, --lv2, --set, --preset, --graph, --force or --json")
            case let .operand(path): paths.append(path)
            }
        }
        guard paths.count == 2 else {
            throw UsageError(message: "convert takes an input and an output file; got \(paths.count) file name\(paths.count == 1 ? "" : "s"): aqjack convert IN OUT [options]")
        }
        if graphFile != nil && !chain.isEmpty {
            throw UsageError(message: "--graph and --plugin (--lv2) both give the plugins: use one (a graph file can hold a chain)")
        }
        request.inputPath = paths[0]
        request.outputPath = paths[1]
    }

    /// An extension or Apple's four-character code, from the one table (``FileTypes``).
    static func fileType(named name: String) -> UInt32? { FileTypes.entry(named: name)?.typeID }

    static func codec(named name: String) -> UInt32? {
        switch name.lowercased() {
        case "lpcm", "pcm": AudioFormatValues.linearPCM
        case "aac": AudioFormatValues.mpeg4AAC
        case "alac": AudioFormatValues.appleLossless
        case "flac": AudioFormatValues.flac
        default: nil
        }
    }

    struct Summary: Encodable {
        let input: String
        let output: String
        let fileType: String
        let format: String
        let sampleRate: Double
        let channels: Int
        let inputFrames: Int64
        let outputFrames: Int64
        let packets: Int64
        let primingFrames: Int
        let remainderFrames: Int
    }

    func run() -> Int32 {
        let showProgress = isatty(STDERR_FILENO) == 1 && !json
        var lastShown = -1
        let started = Date()
        do throws(AudioFileError) {
            // Ctrl-C or SIGTERM abandons the conversion: the temporary output is removed, exit 1.
            let signals = SignalWatcher()
            var request = request
            if !chain.isEmpty || graphFile != nil {
                // The plugins run at the output's rate and channel count, after the conversion.
                let source = try FrameSource.open(request.inputPath)
                let channels = request.channelCount ?? source.channelCount, rate = request.sampleRate ?? source.sampleRate
                if let graphFile {
                    do throws(GraphError) {
                        request.stages = [try GraphStage(world: LV2World.loadedReporting(), path: graphFile, channelCount: channels, sampleRate: rate)]
                    } catch {
                        Diagnostics.error("cannot convert through the graph '\(graphFile)': \(error)")
                        return error.kind == .failed ? ExitStatus.failure : ExitStatus.usage
                    }
                }
                do throws(PluginError) {
                    if !chain.isEmpty {
                        request.stages = try chain.makeStages(world: LV2World.loadedReporting(), channelCount: channels, sampleRate: rate)
                    }
                } catch {
                    Diagnostics.error(error.message)
                    return exitStatus(for: error)
                }
            }
            let summary = try FileConversion(request).run(progress: { fraction in
                guard showProgress else { return }
                let percent = Int(fraction * 100)
                guard percent != lastShown else { return }
                lastShown = percent
                let filled = percent / 4
                Diagnostics.emit("\r[\(String(repeating: "#", count: filled))\(String(repeating: ".", count: 25 - filled))] \(percent)%")
            }, isCancelled: { signals.received.load(ordering: .relaxed) != 0 })
            if showProgress { Diagnostics.emit("\n") }
            let format = summary.outputFormat
            let result = Summary(input: request.inputPath, output: request.outputPath, fileType: fourCharacterCode(summary.fileType),
                                 format: fourCharacterCode(format.mFormatID), sampleRate: format.mSampleRate, channels: Int(format.mChannelsPerFrame),
                                 inputFrames: summary.inputFrames, outputFrames: summary.outputFrames, packets: summary.packets,
                                 primingFrames: summary.primingFrames, remainderFrames: summary.remainderFrames)
            printSummary(result, json: json) {
                let seconds = String(format: "%.2f", Date().timeIntervalSince(started))
                return "converted \(request.inputPath) → \(request.outputPath): \(result.fileType) \(result.format), \(Int(format.mSampleRate)) Hz, "
                    + "\(result.channels) ch, \(summary.outputFrames) frames in \(summary.packets) packets"
                    + (summary.primingFrames > 0 ? " (priming \(summary.primingFrames), remainder \(summary.remainderFrames))" : "") + " in \(seconds) s"
            }
            return ExitStatus.success
        } catch {
            if showProgress { Diagnostics.emit("\n") }
            Diagnostics.error(Self.describe(error.message, input: request.inputPath, output: request.outputPath))
            return ExitStatus.failure
        }
    }

    /// A conversion's error as a user reads it: naming both files unless it names one
    /// already, and stream-description fields in words ("mSampleRate is 64384.0" is the
    /// API's wording, for programs; "the sample rate is 64384 Hz" the command's).
    static func describe(_ message: String, input: String, output: String) -> String {
        var text = message
        for (field, words) in [("mSampleRate is ", "the sample rate is "), ("mChannelsPerFrame is ", "the channel count is "),
                               ("mFramesPerPacket is ", "the frames per packet are "), ("mBitsPerChannel is ", "the bit depth is "),
                               ("mFormatID is ", "the format is ")] where text.hasPrefix(field) {
            text = words + text.dropFirst(field.count)
            if field == "mSampleRate is ", let end = text.firstIndex(of: ";"),
               let rate = Double(text[text.index(text.startIndex, offsetBy: words.count) ..< end]) {
                text = words + "\(rate.rounded() == rate ? String(Int(rate)) : String(rate)) Hz" + text[end...]
            }
        }
        if text.contains(input) || text.contains(output) { return text }
        return "cannot convert '\(input)' to '\(output)': " + text
    }
}
