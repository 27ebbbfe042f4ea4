import AQCodecs
import AQMedia
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

/// Issue 36: MPEG-4 files holding the other codecs Apple's AudioFile reads there as packets.
@Suite("MPEG-4 files of FLAC, Opus, AC-3, E-AC-3 and MP3 read as packets (no server needed)")
struct MPEG4PacketCodecsTests {
    enum Codec: String, CaseIterable, CustomTestStringConvertible {
        case flac, opus, ac3, eac3, mp3
        var testDescription: String { rawValue }
        var ffmpegCodec: [String] {
            switch self {
            case .flac: ["-c:a", "flac", "-strict", "-2"]
            case .opus: ["-c:a", "libopus", "-b:a", "96k"]
            case .ac3: ["-c:a", "ac3", "-b:a", "192k"]
            case .eac3: ["-c:a", "eac3", "-b:a", "192k"]
            case .mp3: ["-c:a", "libmp3lame", "-b:a", "192k"]
            }
        }
        var formatID: UInt32 {
            switch self {
            case .flac: AudioFormatValues.flac
            case .opus: AudioFormatValues.opus
            case .ac3: AudioFormatValues.ac3
            case .eac3: AudioFormatValues.enhancedAC3
            case .mp3: AudioFormatValues.mpegLayer3
            }
        }
        /// Frames a packet: FLAC's as ffmpeg's encoder makes them at 48 kHz (fixed), the others' as their formats fix them.
        var framesPerPacket: UInt32 { [.flac: 4608, .opus: 960, .ac3: 1536, .eac3: 1536, .mp3: 1152][self]! }
    }

    @Test("ffmpeg's MPEG-4 file of each codec (1 s of 48 kHz stereo): AudioFile reads its track as packets of Apple's format ID with the cookie its sample entry gives (FLAC the 'dfLa' payload, Opus an OpusHead, the others none), as many packets as ffprobe counts, byte for byte at ffprobe's positions; decoded through the converter and trimmed by the packet table (priming from the edit list: AC-3 256, MP3 1105; Opus's 312 pre-skip frames the decoder drops itself, so 0) they are ffmpeg's decode of the file sample for sample, 48,000 valid frames (AC-3: the packets' whole length); AudioFileStream's parser trims as much", arguments: Codec.allCases)
    func readsAsPackets(_ codec: Codec) throws {
        let source = ExternalTool.temporaryPath("mp4codec-src", extension: "wav")
        let encoded = ExternalTool.temporaryPath("mp4codec-\(codec.rawValue)", extension: "mp4")
        defer { for path in [source, encoded] { try? FileManager.default.removeItem(atPath: path) } }
        try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "signed-integer", "-b", "16"]) == 0)
        try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source] + codec.ffmpegCodec + [encoded]).status == 0)

        let file = try AudioFile.open(path: encoded)
        let reader = try #require(file.packetReader)
        #expect(reader.dataFormat.mFormatID == codec.formatID && reader.dataFormat.mChannelsPerFrame == 2 && reader.dataFormat.mSampleRate == 48000,
                 "\(reader.dataFormat)")
        #expect(reader.dataFormat.mFramesPerPacket == codec.framesPerPacket, "\(reader.dataFormat.mFramesPerPacket) frames a packet")
        switch codec {
        case .flac: #expect(reader.magicCookie.count == 42 && Array(reader.magicCookie.prefix(8)) == [0, 0, 0, 0, 0x80, 0, 0, 34])
        case .opus: #expect(reader.magicCookie.starts(with: Array("OpusHead".utf8)) && reader.magicCookie.count >= 19)
        default: #expect(reader.magicCookie.isEmpty)
        }
        // The packets where ffprobe finds them.
        let bytes = try #require(FileManager.default.contents(atPath: encoded).map(Array.init))
        let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pos,size", "-of", "csv=p=0", encoded])
        let expected = probe.standardOutput.split(separator: "\n").compactMap { line -> [UInt8]? in
            let fields = line.split(separator: ",").compactMap { Int($0) }
            guard fields.count == 2, fields[1] >= 0, fields[1] + fields[0] <= bytes.count else { return nil }
            return Array(bytes[fields[1] ..< fields[1] + fields[0]])
        }
        let packets = try PacketFileTests.readAll(reader)
        #expect(packets.count == expected.count && packets == expected, "\(packets.count) packets read, ffprobe \(expected.count)")

        // Decoded, as ffmpeg decodes the file.
        let reference = try ExternalTool.decodeWithFFmpeg(encoded)
        let converter = try FormatConverter(from: reader.dataFormat, to: CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 2))
        try converter.setDecoderCookie(reader.magicCookie)
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
        // ffmpeg trims the file's priming from the start (the edit list); so does the table.
        let table = try #require(reader.packetTable)
        let priming = Int(table.primingFrames), valid = Int(table.validFrameCount)
        #expect(decoded.count / 2 >= priming + valid, "\(decoded.count / 2) frames decoded for \(table)")
        let trimmed = Array(decoded[min(decoded.count, 2 * priming) ..< min(decoded.count, 2 * (priming + valid))])
        #expect(reference.count >= trimmed.count && trimmed.count >= 2 * 48000, "\(trimmed.count / 2) valid frames, ffmpeg decoded \(reference.count / 2)")
        let wrong = zip(trimmed, reference).filter { $0 != $1 }.count
        #expect(wrong == 0, "\(wrong) samples differ from ffmpeg's decode")
        // Packets of fixed length: the table covers them all (a short last FLAC block included).
        let covered = Int64(priming + valid) + Int64(table.remainderFrames)
        #expect(covered == (codec == .opus ? Int64(decoded.count / 2) : Int64(packets.count) * Int64(codec.framesPerPacket)), "\(table)")
        let expectedPriming: Int32 = [.flac: 0, .opus: 0, .ac3: 256, .eac3: 256, .mp3: 1105][codec]!
        // AudioFileStream's parser of the same bytes trims as much (Opus, AC-3, E-AC-3 and MPEG
        // audio: ffmpeg's edit list; its FLAC files have none).
        let parser = AudioStreamParser()
        try bytes.withUnsafeBytes { raw in try parser.parse(raw, discontinuity: false, events: { _ in }, packets: { _, _, _ in }) }
        #expect(parser.info.dataFormat.mFormatID == codec.formatID && parser.info.packetTable?.primingFrames ?? 0 == expectedPriming,
                "\(String(describing: parser.info.packetTable))")
        #expect(table.primingFrames == expectedPriming && (codec == .ac3 || codec == .eac3 || valid == 48000), "\(table)")
    }
}
