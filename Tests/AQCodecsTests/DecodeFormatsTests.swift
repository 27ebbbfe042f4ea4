import AQCodecs
import AQMedia
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

/// Issue 36: the formats that are only decoded here go through the converter (AudioConverter's
/// engine) frame for frame as ffmpeg decodes the same file.
@Suite("Decoding FLAC and E-AC-3 packets through the converter (no server needed)")
struct DecodeFormatsTests {
    enum Format: String, CaseIterable, CustomTestStringConvertible {
        case flac, eac3
        var testDescription: String { rawValue }
        var formatID: UInt32 { self == .flac ? AudioFormatValues.flac : AudioFormatValues.enhancedAC3 }
    }

    /// The raw packets of `path`: FLAC frames where ffprobe's FLAC parser puts them; E-AC-3 sync
    /// frames split by their own size field (frmsiz: 16-bit words less one).
    static func packets(_ path: String, format: Format) throws -> [[UInt8]] {
        let bytes = try #require(FileManager.default.contents(atPath: path).map(Array.init))
        switch format {
        case .flac:
            let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "packet=pos,size", "-of", "csv=p=0", path])
            return probe.standardOutput.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: ",").compactMap { Int($0) }
                guard fields.count == 2, fields[1] >= 0, fields[0] + fields[1] <= bytes.count else { return nil }
                return Array(bytes[fields[1] ..< fields[1] + fields[0]])
            }
        case .eac3:
            var packets: [[UInt8]] = [], at = 0
            while at + 4 <= bytes.count, bytes[at] == 0x0B, bytes[at + 1] == 0x77 {
                let size = ((Int(bytes[at + 2] & 0x07) << 8) | Int(bytes[at + 3]) + 1) * 2
                guard at + size <= bytes.count else { break }
                packets.append(Array(bytes[at ..< at + size]))
                at += size
            }
            return packets
        }
    }

    @Test("FLAC (ffmpeg's encoder, no cookie: the frames' headers say enough) and E-AC-3 (192 kbit/s), 48 kHz stereo: every packet pushed into a converter to 32-bit float gives ffmpeg's decode of the file, sample for sample, nothing more or less", arguments: Format.allCases)
    func decodesAsFFmpeg(_ format: Format) throws {
        let source = ExternalTool.temporaryPath("decode-src", extension: "wav")
        let encoded = ExternalTool.temporaryPath("decode", extension: format == .flac ? "flac" : "eac3")
        defer { for path in [source, encoded] { try? FileManager.default.removeItem(atPath: path) } }
        try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "signed-integer", "-b", "16"]) == 0)
        let codec = format == .flac ? ["-c:a", "flac"] : ["-c:a", "eac3", "-b:a", "192k"]
        try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source] + codec + [encoded]).status == 0)
        let packets = try Self.packets(encoded, format: format)
        try #require(packets.count > 10, "\(packets.count) packets")
        let reference = try ExternalTool.decodeWithFFmpeg(encoded)
        try #require(reference.count >= 2 * 48000, "ffmpeg decoded \(reference.count / 2) frames")

        let input = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: format.formatID, mFormatFlags: 0, mBytesPerPacket: 0, mFramesPerPacket: 0,
                                                mBytesPerFrame: 0, mChannelsPerFrame: 2, mBitsPerChannel: 0, mReserved: 0)
        let converter = try FormatConverter(from: input, to: CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 2))
        var decoded: [Float] = []
        var scratch = [Float](repeating: 0, count: 2 * 8192)
        func drain() {
            while true {
                let frames = scratch.withUnsafeMutableBytes { converter.pullFrames(into: $0.baseAddress!, maximumFrames: 8192) }
                if frames == 0 { return }
                decoded += scratch[0 ..< 2 * frames]
            }
        }
        for packet in packets {
            try packet.withUnsafeBytes { try converter.push(packet: $0) }
            drain()
        }
        try converter.finish()
        drain()
        #expect(decoded.count == reference.count, "\(decoded.count / 2) frames decoded, ffmpeg \(reference.count / 2)")
        let wrong = zip(decoded, reference).filter { $0 != $1 }.count
        #expect(wrong == 0, "\(wrong) samples differ from ffmpeg's decode")
    }
}
