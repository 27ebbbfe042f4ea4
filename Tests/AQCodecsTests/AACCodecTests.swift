import AQCodecs
import AQMedia
import AQTestSupport
import Testing

@Suite("AAC through libavcodec")
struct AACCodecTests {
    /// Encodes `input` and returns the packets and the encoder (for priming/remainder).
    static func encode(_ input: [Float], channels: Int, rate: Int, bitRate: Int, chunk: Int = 441) throws -> ([EncodedPacket], AACEncoder) {
        let encoder = try AACEncoder(sampleRate: rate, channelCount: channels, bitRate: bitRate)
        var packets: [EncodedPacket] = []
        let frames = input.count / channels
        try input.withUnsafeBufferPointer { samples in
            var start = 0
            while start < frames {
                let count = min(chunk, frames - start)
                try encoder.encode(samples.baseAddress! + start * channels, frameCount: count) { packets.append($0) }
                start += count
            }
        }
        try encoder.finish { packets.append($0) }
        return (packets, encoder)
    }

    static func decode(_ packets: [EncodedPacket], config: AudioSpecificConfig) throws -> [Float] {
        let decoder = try AACDecoder(config: config)
        var output: [Float] = []
        for packet in packets {
            try packet.bytes.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { pointer, frames in output += UnsafeBufferPointer(start: pointer, count: frames * config.channelCount) }
            }
        }
        return output
    }

    @Test("128 kbit/s stereo multi-sine: packets of 1024 frames, priming 1024, SNR at lag = priming ≥ 20 dB")
    func roundTrip() throws {
        let rate = 44100, channels = 2, frames = 44100 * 2
        let input = MultiSine.interleaved(frameCount: frames, channelCount: channels, sampleRate: Double(rate))
        let (packets, encoder) = try Self.encode(input, channels: channels, rate: rate, bitRate: 128_000)
        #expect(encoder.primingFrames == 1024)
        #expect(packets.count * 1024 == encoder.primingFrames + frames + encoder.remainderFrames)
        #expect((0 ..< 1024).contains(encoder.remainderFrames))
        #expect(packets.allSatisfy { $0.bytes.count <= encoder.maximumPacketSize && !$0.bytes.isEmpty })
        let decoded = try Self.decode(packets, config: encoder.audioSpecificConfig)
        #expect(decoded.count == packets.count * 1024 * channels)
        let snr = MultiSine.snr(decoded, reference: input, channelCount: channels, lag: encoder.primingFrames)
        print("AAC 128 kbit/s stereo multi-sine SNR \(snr) dB")
        #expect(snr >= 20)
        // Misaligned by one packet the SNR collapses: the lag is what aligns it.
        #expect(MultiSine.snr(decoded, reference: input, channelCount: channels, lag: 0) < 3)
    }

    @Test("The magic cookie is an ES_Descriptor that parses back to the encoder's config")
    func cookie() throws {
        let encoder = try AACEncoder(sampleRate: 48000, channelCount: 2, bitRate: 96000)
        let descriptor = ElementaryStreamDescriptor(audioSpecificConfig: encoder.audioSpecificConfig, averageBitRate: 96000,
                                                    maximumBitRate: 96000, bufferSize: 1536)
        let bytes = descriptor.bytes
        #expect(bytes.first == 0x03)
        let parsed = try ElementaryStreamDescriptor(parsing: bytes)
        #expect(parsed == descriptor)
        #expect(parsed.audioSpecificConfig.sampleRate == 48000)
        #expect(parsed.audioSpecificConfig.channelCount == 2)
        #expect(parsed.audioSpecificConfig.objectType == 2)
        // A bare AudioSpecificConfig and an esds box payload are read too.
        #expect(try ElementaryStreamDescriptor(parsing: encoder.audioSpecificConfig.bytes).audioSpecificConfig.sampleRate == 48000)
        #expect(try ElementaryStreamDescriptor(parsing: [0, 0, 0, 0] + bytes) == descriptor)
        // Every truncation is an error, never a crash.
        for length in 0 ..< bytes.count - 1 {
            let cut = Array(bytes[..<length])
            #expect(throws: AudioFileError.self) { try ElementaryStreamDescriptor(parsing: cut) }
        }
    }

    @Test("ADTS headers round-trip and reject bad sync words")
    func adts() throws {
        let config = try AudioSpecificConfig(objectType: 2, sampleRate: 44100, channelCount: 2)
        #expect(config.bytes == [0x12, 0x10])
        let header = try ADTSHeader(config: config, payloadLength: 371)
        let bytes = header.bytes
        #expect(bytes.count == 7 && bytes[0] == 0xFF && bytes[1] == 0xF1)
        let parsed = bytes.withUnsafeBytes { ADTSHeader(parsing: $0) }
        #expect(parsed == header)
        #expect(parsed?.payloadLength == 371)
        var broken = bytes
        broken[1] = 0xE1
        #expect(broken.withUnsafeBytes { ADTSHeader(parsing: $0) } == nil)
        #expect(throws: AudioFileError.self) { try AudioSpecificConfig(objectType: 2, sampleRate: 44000, channelCount: 2) }
        #expect(throws: AudioFileError.self) { try AudioSpecificConfig(objectType: 2, sampleRate: 44100, channelCount: 7) }
    }

    @Test("Every channel count AAC carries (1 ... 6, 8) encodes and decodes to as many channels: 1 ... 5 with a plain channel configuration, 6 and 8 with a program config element (full-band, no LFE)",
          arguments: [1, 2, 3, 4, 5, 6, 8])
    func channelCounts(_ channels: Int) throws {
        let input = MultiSine.interleaved(frameCount: 4800, channelCount: channels, sampleRate: 48000)
        let (packets, encoder) = try Self.encode(input, channels: channels, rate: 48000, bitRate: 48000 * channels)
        #expect(encoder.audioSpecificConfig.channelCount == channels)
        #expect(encoder.audioSpecificConfig.channelConfiguration == (channels >= 6 ? 0 : channels))
        let decoded = try Self.decode(packets, config: encoder.audioSpecificConfig)
        #expect(decoded.count == packets.count * 1024 * channels)
    }

    @Test("the program config aqjack builds for 6 and 8 channels is FFmpeg's encoder's, bit for bit up to its comment field, and parses back to the channel count")
    func programConfig() throws {
        for channels in [6, 8] {
            let built = try AudioSpecificConfig(objectType: 2, sampleRate: 48000, channelCount: channels)
            let encoder = try AACEncoder(sampleRate: 48000, channelCount: channels, bitRate: 64_000 * channels)
            let ffmpeg = encoder.audioSpecificConfig.bytes
            // Ours ends with an empty comment (length 0); FFmpeg's names itself ("Lavc...").
            #expect(Array(built.bytes.dropLast()) == Array(ffmpeg.prefix(built.bytes.count - 1)), "\(built.bytes) vs \(ffmpeg)")
            #expect(built.bytes.last == 0 && ffmpeg[built.bytes.count - 1] > 0)
            #expect(try AudioSpecificConfig(parsing: built.bytes).channelCount == channels)
            #expect(try AudioSpecificConfig(parsing: ffmpeg).channelCount == channels)
            #expect(built.channelConfiguration == 0 && built.programChannelCount == channels)
        }
        // An ADTS header names 5.1 as 5.1: its config stays configuration 6 (six channels).
        let header = try ADTSHeader(config: AudioSpecificConfig(objectType: 2, sampleRate: 48000, channelConfiguration: 6), payloadLength: 100)
        #expect(try header.audioSpecificConfig.channelConfiguration == 6)
        #expect(try header.audioSpecificConfig.channelCount == 6)
    }
}
