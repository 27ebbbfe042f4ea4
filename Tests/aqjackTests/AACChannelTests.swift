import AQCodecs
import AQTestSupport
import Foundation
import Testing

/// AAC with many channels (issue 9, items 6 and 15). No server needed.
@Suite("AAC channel layouts and bit rates (no server needed)")
struct AACChannelTests {
    /// A distinct tone on every channel: 500, 700, ... Hz at 0.3, as a 16-bit WAV from sox.
    static func tones(channels: Int, path: String) throws -> [Double] {
        let frequencies = (1 ... channels).map { Double(300 + 200 * $0) }
        let result = try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "\(channels)", "-b", "16", path, "synth", "2"]
                                            + frequencies.flatMap { ["sine", String(Int($0))] } + ["vol", "0.3"])
        #expect(result.status == 0, "\(result.standardError)")
        return frequencies
    }

    @Test("item06AACFullBandChannels: 5, 6 and 8 channels decode a distinct tone on every channel, in aqjack and in ffmpeg (6 and 8 without an LFE); ADTS refuses 6 and 8, 7 is refused",
          arguments: [5, 6, 7, 8])
    func item06AACFullBandChannels(channels: Int) throws {
        let source = ExternalTool.temporaryPath("tones\(channels)", extension: "wav")
        let encoded = ExternalTool.temporaryPath("tones\(channels)", extension: "m4a")
        let adts = ExternalTool.temporaryPath("tones\(channels)", extension: "aac")
        let decoded = ExternalTool.temporaryPath("tones\(channels)-back", extension: "wav")
        defer { for path in [source, encoded, adts, decoded] { try? FileManager.default.removeItem(atPath: path) } }
        let frequencies = try Self.tones(channels: channels, path: source)
        let encode = try AQJackCommand.run(["convert", source, encoded])
        // AAC has no 7-channel configuration: refused with the counts it takes.
        if channels == 7 {
            #expect(encode.status == 1 && encode.standardError.contains("AAC carries 1 ... 6 or 8 channels"), "\(encode.standardError)")
            return
        }
        #expect(encode.status == 0, "\(encode.standardError)")
        #expect(!encode.standardError.contains("LFE"), "\(encode.standardError)")
        let decode = try AQJackCommand.run(["convert", encoded, decoded])
        #expect(decode.status == 0, "\(decode.standardError)")
        let file = try SoundFileContents(path: decoded)
        #expect(file.channels == channels)
        let byFFmpeg = try ExternalTool.decodeWithFFmpeg(encoded)
        for (name, samples) in [("aqjack", file.samples), ("ffmpeg", byFFmpeg)] {
            for channel in 0 ..< channels {
                let channelSamples = stride(from: channel, to: samples.count, by: channels).map { samples[$0] }
                let middle = channelSamples[4800 ..< channelSamples.count - 4800]
                // Every channel full-band: channel 4 (1100 Hz) decoded 47 dB down while AAC coded it as LFE.
                let snr = SineAnalysis.fittedSNR(middle, frequency: frequencies[channel], sampleRate: 48000)
                #expect(snr >= 20, "\(name): channel \(channel + 1) at \(frequencies[channel]) Hz: SNR \(snr) dB")
            }
        }
        // ADTS headers cannot name a layout without LFE: 6 and 8 refused, naming the types that can.
        let toADTS = try AQJackCommand.run(["convert", source, adts])
        if channels >= 6 {
            #expect(toADTS.status == 1 && toADTS.standardError.contains("write .m4a or .caf"), "\(toADTS.standardError)")
            #expect(!FileManager.default.fileExists(atPath: adts))
        } else {
            #expect(toADTS.status == 0, "\(toADTS.standardError)")
        }
    }

    @Test("item15AACDefaultBitRate: 64 kbit/s per channel at 44.1/48 kHz up to 8 channels (512 kbit/s), as the README says")
    func item15AACDefaultBitRate() throws {
        for channels in 1 ... 8 {
            #expect(FormatConverter.defaultBitRate(channelCount: channels, sampleRate: 48000) == 64_000 * channels)
            #expect(FormatConverter.defaultBitRate(channelCount: channels, sampleRate: 44100) == 64_000 * channels)
        }
        #expect(FormatConverter.defaultBitRate(channelCount: 2, sampleRate: 22050) == 64_000)
        // The encoder takes what the default asks for, and the file says so in its cookie.
        let source = ExternalTool.temporaryPath("rate8", extension: "wav")
        let encoded = ExternalTool.temporaryPath("rate8", extension: "caf")
        defer { for path in [source, encoded] { try? FileManager.default.removeItem(atPath: path) } }
        _ = try Self.tones(channels: 8, path: source)
        // CAF keeps the converter's cookie as written (MPEG-4's esds is FFmpeg's own).
        let encode = try AQJackCommand.run(["convert", source, encoded, "--codec", "aac"])
        #expect(encode.status == 0, "\(encode.standardError)")
        let reader = try #require(try AudioFile.open(path: encoded).packetReader)
        let cookie = try ElementaryStreamDescriptor(parsing: reader.magicCookie)
        #expect(cookie.averageBitRate == 512_000, "\(cookie)")
        let readme = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/README.md", encoding: .utf8)
        #expect(readme.contains("default 64 kbit/s per channel at 44.1/48 kHz, up to 512 kbit/s"))
    }
}
