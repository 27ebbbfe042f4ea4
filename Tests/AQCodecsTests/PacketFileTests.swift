import AQCodecs
import AQCore
import AQMedia
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

@Suite("AAC packet files: ADTS, CAF, MPEG-4")
struct PacketFileTests {
    /// 2 s of stereo multi-sine at 44.1 kHz, 128 kbit/s.
    static let encoded: (packets: [EncodedPacket], priming: Int, remainder: Int, input: [Float], config: AudioSpecificConfig) = {
        let input = MultiSine.interleaved(frameCount: 88200, channelCount: 2, sampleRate: 44100)
        let (packets, encoder) = try! AACCodecTests.encode(input, channels: 2, rate: 44100, bitRate: 128_000)
        return (packets, encoder.primingFrames, encoder.remainderFrames, input, encoder.audioSpecificConfig)
    }()

    static func write(_ fileType: UInt32, path: String) throws {
        let data = encoded
        let writer = try #require(try AudioFile.create(path: path, fileType: fileType, format: CompressedFormatValues.aacDescription(data.config), eraseExisting: true).packetWriter)
        try writer.setMagicCookie(ElementaryStreamDescriptor(audioSpecificConfig: data.config).bytes)
        writer.packetTable = PacketTable(validFrameCount: 88200, primingFrames: Int32(data.priming), remainderFrames: Int32(data.remainder))
        // Write in groups of 10 packets, as a recording's buffers would.
        var start = 0
        while start < data.packets.count {
            let group = data.packets[start ..< min(start + 10, data.packets.count)]
            var bytes: [UInt8] = []
            var descriptions: [AudioStreamPacketDescription] = []
            for packet in group {
                descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(bytes.count), mVariableFramesInPacket: 0, mDataByteSize: UInt32(packet.bytes.count)))
                bytes += packet.bytes
            }
            try bytes.withUnsafeBytes { raw in
                try descriptions.withUnsafeBufferPointer { try writer.writePackets(raw.baseAddress!, byteCount: raw.count, descriptions: $0, startPacket: Int64(start)) }
            }
            start += group.count
        }
        try writer.close()
    }

    static func readAll(_ reader: any PacketFileReading) throws -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 768 * 2 * 8)
        var descriptions = [AudioStreamPacketDescription](repeating: AudioStreamPacketDescription(), count: 8)
        while true {
            let read = try buffer.withUnsafeMutableBytes { raw in
                try reader.readPackets(startPacket: Int64(packets.count), packetCount: 8, into: raw.baseAddress!, capacity: raw.count, descriptions: &descriptions)
            }
            if read.packets == 0 { break }
            for description in descriptions.prefix(read.packets) {
                packets.append(Array(buffer[Int(description.mStartOffset) ..< Int(description.mStartOffset) + Int(description.mDataByteSize)]))
            }
        }
        return packets
    }

    @Test("Written packets read back identical; ffprobe reads AAC LC; the packet table trims to exactly the input", arguments: [
        ("adts", AudioFileTypeValues.adts), ("caf", AudioFileTypeValues.caf), ("m4a", AudioFileTypeValues.m4a),
        ("mp4", AudioFileTypeValues.mpeg4),
    ])
    func roundTrip(_ name: String, _ fileType: UInt32) throws {
        let path = ExternalTool.temporaryPath("packets", extension: name)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.write(fileType, path: path)
        let reader = try #require(try AudioFile.open(path: path).packetReader)
        #expect(reader.fileType == fileType)
        #expect(reader.dataFormat.mFormatID == AudioFormatValues.mpeg4AAC)
        #expect(reader.dataFormat.mSampleRate == 44100 && reader.dataFormat.mChannelsPerFrame == 2 && reader.dataFormat.mFramesPerPacket == 1024)
        #expect(try ElementaryStreamDescriptor(parsing: reader.magicCookie).audioSpecificConfig.sampleRate == 44100)
        let packets = try Self.readAll(reader)
        #expect(packets == Self.encoded.packets.map(\.bytes))
        if fileType != AudioFileTypeValues.adts {
            // CAF 'pakt' and MPEG-4 timestamps keep the priming and the exact length.
            let table = try #require(reader.packetTable)
            #expect(table.primingFrames == Int32(Self.encoded.priming))
            #expect(table.validFrameCount == 88200)
            #expect(table.remainderFrames == Int32(Self.encoded.remainder))
        }
        let probe = try ExternalTool.probe(path)
        #expect(probe["codec_name"] == "aac")
        #expect(probe["profile"] == "LC")
        #expect(probe["sample_rate"] == "44100" && probe["channels"] == "2")
        #expect(probe["nb_read_packets"] == String(Self.encoded.packets.count))
        // ffmpeg's own decode: MPEG-4's edit list makes it drop the priming (it keeps the
        // remainder); FFmpeg 5.1 ignores CAF's 'pakt' priming and ADTS cannot carry it, so there
        // the signal lines up at lag = priming.
        let decoded = try ExternalTool.decodeWithFFmpeg(path)
        let isMPEG4 = fileType == AudioFileTypeValues.m4a || fileType == AudioFileTypeValues.mpeg4
        let lag = isMPEG4 ? 0 : Self.encoded.priming
        let snr = MultiSine.snr(decoded, reference: Self.encoded.input, channelCount: 2, lag: lag)
        print("\(name): ffmpeg decodes \(decoded.count / 2) frames, SNR \(snr) dB at lag \(lag)")
        #expect(snr >= 20)
        #expect(decoded.count / 2 == Self.encoded.packets.count * 1024 - (isMPEG4 ? Self.encoded.priming : 0))
    }

    @Test("Truncated and bit-flipped files give errors or fewer packets, never a crash", arguments: ["adts", "caf", "m4a"])
    func corrupted(_ name: String) throws {
        let path = ExternalTool.temporaryPath("corrupt", extension: name)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let type = ["adts": AudioFileTypeValues.adts, "caf": AudioFileTypeValues.caf, "m4a": AudioFileTypeValues.m4a][name]!
        try Self.write(type, path: path)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let damaged = ExternalTool.temporaryPath("damaged", extension: name)
        defer { try? FileManager.default.removeItem(atPath: damaged) }
        var generator = SystemRandomNumberGenerator()
        var opened = 0, refused = 0
        for trial in 0 ..< 60 {
            var bytes = [UInt8](original)
            if trial % 2 == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0 ..< bytes.count, using: &generator)))
            } else {
                for _ in 0 ..< 1 + trial / 10 { bytes[Int.random(in: 0 ..< bytes.count, using: &generator)] ^= UInt8(1 << Int.random(in: 0 ... 7, using: &generator)) }
            }
            _ = FileManager.default.createFile(atPath: damaged, contents: Data(bytes))
            do {
                guard let reader = try AudioFile.open(path: damaged).packetReader else {
                    refused += 1
                    continue
                }
                let packets = try Self.readAll(reader)
                #expect(packets.count <= Self.encoded.packets.count + 1)
                // Every packet handed out decodes or is refused with an error.
                let decoder = try AACDecoder(config: try ElementaryStreamDescriptor(parsing: reader.magicCookie).audioSpecificConfig)
                for packet in packets { try? packet.withUnsafeBytes { try decoder.decode($0) { _, _ in } } }
                opened += 1
            } catch let error as any AudioStatusCarrying {   // a file error, or the decoder's
                #expect(!error.message.isEmpty)
                refused += 1
            }
        }
        print("\(name): 60 damaged files, \(opened) opened, \(refused) refused with an error")
        #expect(opened + refused == 60)
    }

    @Test("A CAF 'desc' with an impossible sample rate is refused, not converted to an integer (a libFuzzer finding)")
    func impossibleRate() throws {
        let path = ExternalTool.temporaryPath("badrate", extension: "caf")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.write(AudioFileTypeValues.caf, path: path)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // 'desc' starts at byte 8; its body (the big-endian Float64 rate first) at byte 20.
        #expect(Array(bytes[8 ..< 12]) == Array("desc".utf8))
        for rate in [-Double.greatestFiniteMagnitude, .nan, .infinity, 0, 1e300] {
            let pattern = rate.bitPattern
            for index in 0 ..< 8 { bytes[20 + index] = UInt8(truncatingIfNeeded: pattern >> (56 - 8 * UInt64(index))) }
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            #expect(throws: AudioFileError.self) { _ = try AudioFile.open(path: path).packetReader }
        }
        var nanFormat = CompressedFormatValues.aacDescription(Self.encoded.config)
        nanFormat.mSampleRate = .nan
        #expect(throws: AudioConverterError.self) { _ = try FormatConverter(from: CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 2), to: nanFormat) }
    }

    @Test("fuzzFindingChannelMismatch: a CAF whose 'desc' and cookie disagree on channels is refused at open, not decoded past its buffer (issue 9, item 17)")
    func fuzzFindingChannelMismatch() throws {
        let path = ExternalTool.temporaryPath("badchannels", extension: "caf")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.write(AudioFileTypeValues.caf, path: path)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // mChannelsPerFrame: the 6th big-endian field after the 8-byte rate, at byte 20 + 24.
        #expect(Array(bytes[44 ..< 48]) == [0, 0, 0, 2])
        for channels: UInt8 in [1, 6, 255] {
            bytes[47] = channels
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            do {
                _ = try FrameSource.open(path)
                Issue.record("a \(channels)-channel 'desc' over a stereo cookie was accepted")
            } catch {
                #expect(error.status == AudioFileError.fileInvalidFileCode)
                // 1 and 6 disagree with the cookie; 255 is more than any AAC stream has.
                let reason = channels == 255 ? "1 ... 8 channels; got 44100.0 Hz, 255 channels" : "the AAC magic cookie describes 2 channels but the stream description says \(channels)"
                #expect(error.message.contains(reason), "\(error.message)")
            }
        }
    }

    @Test("A CAF whose packet table outgrows the reserved region: readable while written up to there, complete after close")
    func cafTableOverflow() throws {
        let path = ExternalTool.temporaryPath("overflow", extension: "caf")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try CAFPacketFileWriter(path: path, format: CompressedFormatValues.aacDescription(Self.encoded.config), eraseExisting: true)
        // 1-byte size entries: the 256 KiB region holds about 262,000 of them.
        let count = CAFPacketFileWriter.reservedTableBytes + 1000
        let bytes = (0 ..< count).map { UInt8(truncatingIfNeeded: $0 % 100 + 1) }
        let descriptions = (0 ..< count).map { AudioStreamPacketDescription(mStartOffset: Int64($0), mVariableFramesInPacket: 0, mDataByteSize: 1) }
        // Half first: the in-place table is readable before close.
        let half = count / 2
        try bytes.withUnsafeBytes { raw in
            try descriptions.withUnsafeBufferPointer { all in
                try writer.writePackets(raw.baseAddress!, byteCount: raw.count, descriptions: UnsafeBufferPointer(rebasing: all[0 ..< half]), startPacket: 0)
            }
        }
        let partial = try #require(try AudioFile.open(path: path).packetReader)
        #expect(partial.packetCount == Int64(half))
        try bytes.withUnsafeBytes { raw in
            try descriptions.withUnsafeBufferPointer { all in
                try writer.writePackets(raw.baseAddress!, byteCount: raw.count, descriptions: UnsafeBufferPointer(rebasing: all[half...]), startPacket: Int64(half))
            }
        }
        try writer.close()
        let reader = try #require(try AudioFile.open(path: path).packetReader)
        #expect(reader.packetCount == Int64(count))
        var buffer = [UInt8](repeating: 0, count: 64)
        var described = [AudioStreamPacketDescription](repeating: AudioStreamPacketDescription(), count: 64)
        let read = try buffer.withUnsafeMutableBytes { raw in
            try reader.readPackets(startPacket: Int64(count - 64), packetCount: 64, into: raw.baseAddress!, capacity: raw.count, descriptions: &described)
        }
        #expect(read.packets == 64 && Array(buffer) == Array(bytes[(count - 64)...]))
    }

    @Test("ffmpeg's Apple Lossless CAF (its cookie Apple's 'frma'/'alac' atoms, no format flag; libsndfile cannot open it): read as 'alac' packets with the 16-bit source flag its cookie gives, every packet where ffprobe finds it; decoded, the source's samples bit for bit")
    func ffmpegALACInCAF() throws {
        let source = ExternalTool.temporaryPath("alaccaf-src", extension: "wav")
        let caf = ExternalTool.temporaryPath("alaccaf", extension: "caf")
        defer { for path in [source, caf] { try? FileManager.default.removeItem(atPath: path) } }
        try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "signed-integer", "-b", "16"]) == 0)
        try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source, "-c:a", "alac", caf]).status == 0)
        let reader = try #require(try AudioFile.open(path: caf).packetReader)
        #expect(reader.dataFormat.mFormatID == AudioFormatValues.appleLossless && reader.dataFormat.mFramesPerPacket == 4096
                && reader.dataFormat.mFormatFlags == 1, "\(reader.dataFormat)")
        #expect(reader.magicCookie.count >= 36 && Array(reader.magicCookie[4 ..< 8]) == Array("frma".utf8))
        let packets = try Self.readAll(reader)
        let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", caf])
        #expect(packets.map(\.count) == probe.standardOutput.split(separator: "\n").compactMap { Int($0) })
        let converter = try FormatConverter(from: reader.dataFormat, to: CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 2))
        try converter.setDecoderCookie(reader.magicCookie)
        var decoded: [Float] = []
        var scratch = [Float](repeating: 0, count: 2 * 8192)
        for packet in packets {
            try packet.withUnsafeBytes { try converter.push(packet: $0) }
            while true {
                let frames = scratch.withUnsafeMutableBytes { converter.pullFrames(into: $0.baseAddress!, maximumFrames: 8192) }
                if frames == 0 { break }
                decoded += scratch[0 ..< 2 * frames]
            }
        }
        let table = try #require(reader.packetTable)
        let valid = Array(decoded.prefix(2 * Int(table.validFrameCount)))
        let reference = try ExternalTool.decodeWithFFmpeg(source)
        #expect(valid.count == 2 * 48000 && valid == reference, "\(valid.count / 2) valid frames of \(decoded.count / 2), \(table)")
    }

    @Test("FLAC in CAF ('desc' 'flac' with a fixed block of 4608 frames, the STREAMINFO block as 'kuki', 'pakt' with the short last block in its remainder), made here from ffmpeg's FLAC frames: read as 'flac' packets, the same frames; decoded and trimmed by the table, ffmpeg's decode of the .flac sample for sample")
    func flacInCAF() throws {
        let source = ExternalTool.temporaryPath("flaccaf-src", extension: "wav")
        let flac = ExternalTool.temporaryPath("flaccaf", extension: "flac")
        let caf = ExternalTool.temporaryPath("flaccaf", extension: "caf")
        defer { for path in [source, flac, caf] { try? FileManager.default.removeItem(atPath: path) } }
        try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "signed-integer", "-b", "16"]) == 0)
        try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source, "-c:a", "flac", flac]).status == 0)
        let bytes = try #require(FileManager.default.contents(atPath: flac).map(Array.init))
        let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "packet=pos,size", "-of", "csv=p=0", flac])
        let frames = probe.standardOutput.split(separator: "\n").compactMap { line -> [UInt8]? in
            let fields = line.split(separator: ",").compactMap { Int($0) }
            guard fields.count == 2, fields[1] >= 0, fields[1] + fields[0] <= bytes.count else { return nil }
            return Array(bytes[fields[1] ..< fields[1] + fields[0]])
        }
        try #require(frames.count == 11 && Array(bytes[0 ..< 4]) == Array("fLaC".utf8))
        // The CAF, big-endian: header, 'desc', 'kuki' (the STREAMINFO block after "fLaC"),
        // 'pakt' (11 packets, 48,000 valid frames, no priming, 11 × 4608 - 48,000 remainder,
        // each size as a variable-length integer), 'data' (edit count, then the frames).
        func be(_ value: UInt64, _ count: Int) -> [UInt8] { (0 ..< count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - $0))) } }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] { Array(type.utf8) + be(UInt64(body.count), 8) + body }
        func varint(_ value: Int) -> [UInt8] {
            var groups = [UInt8(value & 0x7F)], rest = value >> 7
            while rest > 0 { groups.insert(UInt8(rest & 0x7F) | 0x80, at: 0); rest >>= 7 }
            return groups
        }
        let desc = be(Double(48000).bitPattern, 8) + Array("flac".utf8) + be(1, 4) + be(0, 4) + be(4608, 4) + be(2, 4) + be(0, 4)
        let pakt = be(11, 8) + be(48000, 8) + be(0, 4) + be(UInt64(11 * 4608 - 48000), 4) + frames.flatMap { varint($0.count) }
        let file = Array("caff".utf8) + [0, 1, 0, 0] + chunk("desc", desc) + chunk("kuki", Array(bytes[4 ..< 42]))
            + chunk("pakt", pakt) + chunk("data", be(0, 4) + frames.flatMap { $0 })
        try #require(FileManager.default.createFile(atPath: caf, contents: Data(file)))

        let reader = try #require(try AudioFile.open(path: caf).packetReader)
        #expect(reader.dataFormat.mFormatID == AudioFormatValues.flac && reader.dataFormat.mFramesPerPacket == 4608, "\(reader.dataFormat)")
        let packets = try Self.readAll(reader)
        #expect(packets == frames, "\(packets.count) packets read")
        let converter = try FormatConverter(from: reader.dataFormat, to: CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 2))
        try converter.setDecoderCookie(reader.magicCookie)
        var decoded: [Float] = []
        var scratch = [Float](repeating: 0, count: 2 * 8192)
        for packet in packets {
            try packet.withUnsafeBytes { try converter.push(packet: $0) }
            while true {
                let count = scratch.withUnsafeMutableBytes { converter.pullFrames(into: $0.baseAddress!, maximumFrames: 8192) }
                if count == 0 { break }
                decoded += scratch[0 ..< 2 * count]
            }
        }
        let table = try #require(reader.packetTable)
        let valid = Array(decoded.prefix(2 * Int(table.validFrameCount)))
        let reference = try ExternalTool.decodeWithFFmpeg(flac)
        #expect(table.validFrameCount == 48000 && valid == reference, "\(table), \(decoded.count / 2) frames decoded")
    }
}
