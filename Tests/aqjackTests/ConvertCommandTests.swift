import AQTestSupport
import CSndFile
import Foundation
import Testing

@Suite("aqjack convert and info (no server needed)")
struct ConvertCommandTests {
    /// A 3 s stereo 24-bit WAV of the multi-sine at 48 kHz, written by sox from raw floats.
    static func makeSource(_ name: String, bits: Int = 24) throws -> String {
        let wav = ExternalTool.temporaryPath(name, extension: "wav")
        #expect(try MultiSine.writeFile(wav, frameCount: 144_000, channelCount: 2, sampleRate: 48000, encoding: ["-b", String(bits), "-e", "signed-integer"]) == 0)
        return wav
    }

    /// Samples as Float: exact for 16- and 24-bit integers, so equality is bit-exactness.
    static func pcmSamples(_ path: String) throws -> [Float] {
        try SoundFileContents(path: path).samples
    }

    @Test("FLAC, ALAC-in-CAF and ALAC-in-M4A round trips are bit-exact at 16 and 24 bits",
          arguments: [("flac", 24), ("caf", 24), ("m4a", 24), ("flac", 16), ("caf", 16), ("m4a", 16)])
    func losslessRoundTrip(_ ext: String, _ bits: Int) throws {
        let source = try Self.makeSource("lossless-src", bits: bits)
        let lossless = ExternalTool.temporaryPath("lossless", extension: ext)
        let back = ExternalTool.temporaryPath("lossless-back", extension: "wav")
        defer { for path in [source, lossless, back] { try? FileManager.default.removeItem(atPath: path) } }
        var arguments = ["convert", source, lossless]
        if ext != "flac" { arguments += ["--codec", "alac"] }
        let encoded = try AQJackCommand.run(arguments)
        #expect(encoded.status == 0, "\(encoded.standardError)")
        let decoded = try AQJackCommand.run(["convert", lossless, back])
        #expect(decoded.status == 0, "\(decoded.standardError)")
        let info = try AQJackCommand.run(["info", lossless, "--json"])
        #expect(info.standardOutput.contains(ext != "flac" ? "\"formatID\":\"'alac'\"" : "\"formatID\":\"'flac'\""), "\(info.standardOutput)")
        if ext != "flac" {
            // ALAC in MPEG-4 and CAF is read as packets and described as stored: Apple's format
            // flag for the source depth.
            #expect(info.standardOutput.contains("\"formatFlags\":\(bits == 24 ? 3 : 1)"))
            #expect(try ExternalTool.probe(lossless)["codec_name"] == "alac")
        } else {
            #expect(info.standardOutput.contains("\"bitsPerChannel\":\(bits)"))
        }
        let original = try Self.pcmSamples(source)
        let roundTrip = try Self.pcmSamples(back)
        #expect(original.count == 288_000)
        #expect(roundTrip == original)
    }

    @Test("WAV → AAC in M4A, CAF and ADTS: ffprobe reads AAC LC 128 kbit/s; aqjack info reports the exact length from the priming info")
    func aac() throws {
        let source = try Self.makeSource("aac-src")
        defer { try? FileManager.default.removeItem(atPath: source) }
        for ext in ["m4a", "caf", "aac"] {
            let output = ExternalTool.temporaryPath("aac", extension: ext)
            let back = ExternalTool.temporaryPath("aac-back", extension: "wav")
            defer { for path in [output, back] { try? FileManager.default.removeItem(atPath: path) } }
            var arguments = ["convert", "--bitrate", "128000", source, output, "--json"]
            if ext == "caf" { arguments += ["--codec", "aac"] }
            let result = try AQJackCommand.run(arguments)
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput.contains("\"primingFrames\":1024"))
            let probe = try ExternalTool.probe(output)
            #expect(probe["codec_name"] == "aac" && probe["profile"] == "LC" && probe["sample_rate"] == "48000" && probe["channels"] == "2")
            let info = try AQJackCommand.run(["info", output, "--json"])
            if ext != "aac" {
                // CAF 'pakt' and MPEG-4 keep priming and remainder: the length is exact.
                #expect(info.standardOutput.contains("\"frames\":144000"), "\(info.standardOutput)")
                #expect(info.standardOutput.contains("\"primingFrames\":1024"))
            }
            // Decoding back trims by the packet table: same length as the source, and close to it.
            let decoded = try AQJackCommand.run(["convert", output, back, "-b", "24"])
            #expect(decoded.status == 0, "\(decoded.standardError)")
            let original = try Self.pcmSamples(source)
            let roundTrip = try Self.pcmSamples(back)
            if ext != "aac" { #expect(roundTrip.count == original.count) }
            let snr = MultiSine.snr(roundTrip, reference: original, channelCount: 2, lag: ext == "aac" ? 1024 : 0)
            print("convert \(ext): AAC 128 kbit/s round trip SNR \(snr) dB")
            #expect(snr >= 20)
        }
    }

    @Test("Bad input gets a message and the right exit code")
    func errors() throws {
        let missing = try AQJackCommand.run(["convert", "/nonexistent/in.wav", "/tmp/out.wav"])
        #expect(missing.status == 1 && missing.standardError.contains("/nonexistent/in.wav"))
        let usage = try AQJackCommand.run(["convert", "only-one.wav"])
        #expect(usage.status == 2 && usage.standardError.contains("input and an output"))
        let source = try Self.makeSource("errors-src")
        defer { try? FileManager.default.removeItem(atPath: source) }
        let unknownType = try AQJackCommand.run(["convert", source, "/tmp/out.xyz"])
        #expect(unknownType.status == 1 && unknownType.standardError.contains("-f"))
        let exists = try AQJackCommand.run(["convert", source, source])
        #expect(exists.status == 1 && exists.standardError.contains("left untouched"))
        let badBitRate = try AQJackCommand.run(["convert", source, "/tmp/x.m4a", "--bitrate", "5"])
        #expect(badBitRate.status == 2 && badBitRate.standardError.contains("--bitrate"))
        let pcmInADTS = try AQJackCommand.run(["convert", source, ExternalTool.temporaryPath("x", extension: "aac"), "--codec", "lpcm"])
        #expect(pcmInADTS.status == 1 && pcmInADTS.standardError.contains("cannot hold linear PCM"))
        let notAudio = ExternalTool.temporaryPath("text", extension: "m4a")
        _ = FileManager.default.createFile(atPath: notAudio, contents: Data("not audio at all".utf8))
        defer { try? FileManager.default.removeItem(atPath: notAudio) }
        let info = try AQJackCommand.run(["info", notAudio, source])
        #expect(info.status == 1 && info.standardError.contains(notAudio) && info.standardOutput.contains(source))
    }
}
