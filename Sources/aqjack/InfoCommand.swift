import AQCodecs
import AQMedia
import Foundation

/// `aqjack info FILE... [--json]`: afinfo's job. Exit 0 when every file was described, 1 when
/// any could not be read (the others are still described), 2 usage error.
struct InfoCommand {
    var paths: [String] = []
    var json = false

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("--json"): json = true
            case let .option(option):
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for info: expected --json")
            case let .operand(path): paths.append(path)
            }
        }
        guard !paths.isEmpty else { throw UsageError(message: "info needs at least one file: aqjack info FILE... [--json]") }
    }

    /// One file's description (JSON field names are the README's `aqjack.info/1`).
    struct FileInfo: Encodable {
        let path: String
        let fileType: String
        let formatID: String
        let formatFlags: UInt32
        let sampleRate: Double
        let channels: UInt32
        /// Core Audio's name for the default layout of that many channels ("Mono", "Stereo (L R)", ...).
        let channelLayout: String
        let bitsPerChannel: UInt32
        let bytesPerPacket: UInt32
        let framesPerPacket: UInt32
        let bytesPerFrame: UInt32
        let packets: Int64
        let frames: Int64
        let duration: Double
        let bitRate: Int
        let primingFrames: Int32?
        let remainderFrames: Int32?
        let magicCookieBytes: Int
        let maximumPacketSize: Int
        let timeReference: Int64?
    }

    /// The layout afinfo names for a channel count (the default layout tags: mono, stereo, the
    /// MPEG layouts AAC's channel configurations use), else "N channels, discrete".
    static func layoutName(channels: UInt32) -> String {
        switch channels {
        case 1: "Mono"
        case 2: "Stereo (L R)"
        case 3: "MPEG 3.0 A (L R C)"
        case 4: "Quadraphonic (L R Ls Rs)"
        case 5: "MPEG 5.0 A (L R C Ls Rs)"
        case 6: "MPEG 5.1 A (L R C LFE Ls Rs)"
        case 8: "MPEG 7.1 C (L R C LFE Ls Rs Rls Rrs)"
        default: "\(channels) channels, discrete"
        }
    }

    /// Whether an AAC file's cookie lists its channels in a program config element (how aqjack
    /// codes 6 and 8 full-band channels) rather than naming one of AAC's configurations.
    static func isProgramConfigured(_ packets: any PacketFileReading) -> Bool {
        guard packets.dataFormat.mFormatID == AudioFormatValues.mpeg4AAC,
              let config = try? ElementaryStreamDescriptor(parsing: packets.magicCookie).audioSpecificConfig else { return false }
        return config.channelConfiguration == 0
    }

    static func describe(_ path: String) throws(AudioFileError) -> FileInfo {
        let file = try AudioFile.open(path: path)
        defer { try? file.close() }
        if let packets = file.packetReader {
            let format = packets.dataFormat
            let table = packets.packetTable
            return FileInfo(path: path, fileType: fourCharacterCode(packets.fileType), formatID: fourCharacterCode(format.mFormatID),
                            formatFlags: format.mFormatFlags, sampleRate: format.mSampleRate, channels: format.mChannelsPerFrame,
                            channelLayout: Self.isProgramConfigured(packets) ? "\(format.mChannelsPerFrame) channels, full-band (AAC program config, no LFE)"
                                                                              : layoutName(channels: format.mChannelsPerFrame),
                            bitsPerChannel: format.mBitsPerChannel, bytesPerPacket: format.mBytesPerPacket, framesPerPacket: format.mFramesPerPacket,
                            bytesPerFrame: format.mBytesPerFrame, packets: packets.packetCount, frames: packets.frameCount, duration: packets.duration,
                            bitRate: packets.duration > 0 ? Int(Double(packets.byteCount * 8) / packets.duration) : 0,
                            primingFrames: table?.primingFrames, remainderFrames: table?.remainderFrames,
                            magicCookieBytes: packets.magicCookie.count, maximumPacketSize: packets.maximumPacketSize, timeReference: nil)
        }
        let reader = file.pcmReader!
        let format = reader.dataFormat
        var status = stat()
        let size = FilePath.withCString(path, { stat($0, &status) }) == 0 ? Int64(status.st_size) : 0
        // Lossless data (ALAC, FLAC) is described as stored, not as the float it decodes to.
        let stored = reader.storedFormatID
        return FileInfo(path: path, fileType: fourCharacterCode(reader.fileType), formatID: fourCharacterCode(stored ?? format.mFormatID),
                        formatFlags: format.mFormatFlags, sampleRate: format.mSampleRate, channels: format.mChannelsPerFrame,
                        channelLayout: layoutName(channels: format.mChannelsPerFrame),
                        bitsPerChannel: stored == nil ? format.mBitsPerChannel : UInt32(reader.storedBitDepth ?? 0),
                        bytesPerPacket: stored == nil ? format.mBytesPerPacket : 0, framesPerPacket: stored == nil ? format.mFramesPerPacket : 4096,
                        bytesPerFrame: stored == nil ? format.mBytesPerFrame : 0, packets: reader.packetCount, frames: reader.packetCount, duration: reader.duration,
                        bitRate: reader.duration > 0 ? Int(Double(reader.isDecoded ? size * 8 : reader.byteCount * 8) / reader.duration) : 0,
                        primingFrames: nil, remainderFrames: nil, magicCookieBytes: 0, maximumPacketSize: reader.layout.bytesPerFrame,
                        timeReference: reader.timeReference)
    }

    struct Listing: Encodable {
        let schema = "aqjack.info/1"
        let files: [FileInfo]
    }

    func run() -> Int32 {
        var files: [FileInfo] = []
        var failed = false
        for path in paths {
            do throws(AudioFileError) {
                files.append(try Self.describe(path))
            } catch {
                Diagnostics.error(error.message)
                failed = true
            }
        }
        printSummary(Listing(files: files), json: json) {
            files.map { info in
                var lines = ["\(info.path)", "  file type: \(info.fileType)", "  channel layout: \(info.channelLayout)",
                             "  data format: \(info.channels) ch, \(Int(info.sampleRate)) Hz, \(info.formatID) (0x\(String(info.formatFlags, radix: 16))) "
                                 + "\(info.bitsPerChannel) bits/channel, \(info.bytesPerPacket) bytes/packet, \(info.framesPerPacket) frames/packet, \(info.bytesPerFrame) bytes/frame",
                             "  packets: \(info.packets), frames: \(info.frames), duration: \(String(format: "%.6f", info.duration)) s",
                             "  bit rate: \(info.bitRate) bits/s, maximum packet size: \(info.maximumPacketSize) bytes"]
                if let priming = info.primingFrames, let remainder = info.remainderFrames {
                    lines.append("  priming frames: \(priming), remainder frames: \(remainder)")
                }
                if info.magicCookieBytes > 0 { lines.append("  magic cookie: \(info.magicCookieBytes) bytes") }
                if let reference = info.timeReference { lines.append("  BWF time reference: \(reference) frames") }
                return lines.joined(separator: "\n")
            }.joined(separator: "\n")
        }
        return failed ? ExitStatus.failure : ExitStatus.success
    }
}
