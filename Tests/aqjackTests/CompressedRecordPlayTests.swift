import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack record and play with AAC and ALAC")
    struct CompressedRecordPlayTests {
        @Test("record -d 3 to .m4a, .aac and .caf --codec aac at 128 kbit/s: ffprobe reads AAC LC; M4A/CAF hold exactly 3 s after the priming",
              arguments: [("m4a", [String]()), ("aac", []), ("caf", ["--codec", "aac"])])
        func recordAAC(_ ext: String, _ extra: [String]) throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("aacgen"), channelCount: 2,
                                                wavePeriod: GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.5, sampleRate: 48000))
            let path = temporaryPath("aac-record.\(ext)")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try AQJackCommand.run(["record", "--json", "-p", "\(generator.client.name):out_*", "-d", "3", "--bitrate", "128000",
                                                "--name", TestServer.uniqueClientName("aacrec"), path] + extra)
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.sampleFormat == "aac" && summary.frames == 3 * 48000 && summary.exitReason == "duration")
            let probe = try ExternalTool.probe(path)
            #expect(probe["codec_name"] == "aac" && probe["profile"] == "LC" && probe["sample_rate"] == "48000" && probe["channels"] == "2")
            let info = try AQJackCommand.run(["info", "--json", path])
            #expect(info.status == 0)
            if ext != "aac" {
                #expect(info.standardOutput.contains("\"frames\":144000"), "\(info.standardOutput)")
                #expect(info.standardOutput.contains("\"primingFrames\":1024"))
            }
            // ffmpeg decodes it; the 1 kHz sine survives the codec.
            let decoded = try ExternalTool.decodeWithFFmpeg(path)
            let left = stride(from: 0, to: decoded.count, by: 2).map { decoded[$0] }
            #expect(left.count >= 3 * 48000)
            // Fitted per 0.25 s window: an xrun on this 2-core machine makes jackd skip or repeat a
            // cycle's frame time, which shifts the generator's phase (not aqjack's doing); the
            // median window must be clean.
            let (snr, worst) = SineAnalysis.windowedSNR(left[4096 ..< left.count - 4096], frequency: 1000, sampleRate: 48000, window: 12000)
            print("aqjack record \(ext): \(left.count) frames decoded by ffmpeg, median window sine SNR \(snr) dB (worst \(worst))")
            #expect(snr >= 30)
            // Decoding with aqjack convert trims by the packet table: exactly the recorded length.
            if ext != "aac" {
                let back = temporaryPath("aac-back.wav")
                defer { try? FileManager.default.removeItem(atPath: back) }
                let converted = try AQJackCommand.run(["convert", path, back])
                #expect(converted.status == 0, "\(converted.standardError)")
                #expect(try SoundFileContents(path: back).frames == 3 * 48000)
            }
        }

        @Test("play an M4A: the recorder receives exactly the file's audio (priming trimmed), same as aqjack convert decodes it")
        func playAAC() throws {
            let source = temporaryPath("play-src.wav")
            let m4a = temporaryPath("play.m4a")
            let reference = temporaryPath("play-ref.wav")
            let recorded = temporaryPath("play-rec.wav")
            defer { for path in [source, m4a, reference, recorded] { try? FileManager.default.removeItem(atPath: path) } }
            let samples = MultiSine.interleaved(frameCount: 48000, channelCount: 2, sampleRate: 48000)
            let raw = temporaryPath("play-src.f32")
            defer { try? FileManager.default.removeItem(atPath: raw) }
            _ = FileManager.default.createFile(atPath: raw, contents: samples.withUnsafeBytes { Data($0) })
            #expect(try ExternalTool.run("sox", ["-t", "f32", "-r", "48000", "-c", "2", raw, "-e", "float", source]).status == 0)
            #expect(try AQJackCommand.run(["convert", source, m4a]).status == 0)
            #expect(try AQJackCommand.run(["convert", m4a, reference, "-b", "32"]).status == 0)
            let expected = try SoundFileContents(path: reference).samples   // float from 32-bit int: the decoder's floats to 2^-31

            // A recorder, then the player feeding it.
            let recorderName = TestServer.uniqueClientName("aacplayrec")
            let recorderErr = temporaryPath("rec.err")
            let recorderOut = temporaryPath("rec.out")
            defer { for path in [recorderErr, recorderOut] { try? FileManager.default.removeItem(atPath: path) } }
            let recorder = try AQJackCommand.start(["record", "--json", "-c", "2", "-b", "float", "-d", "2.5", "--name", recorderName, recorded],
                                                   standardOutput: URL(fileURLWithPath: recorderOut), standardError: URL(fileURLWithPath: recorderErr))
            usleep(700_000)
            let played = try AQJackCommand.run(["play", "--json", "-p", "\(recorderName):in_*", "--name", TestServer.uniqueClientName("aacplay"), m4a])
            #expect(played.status == 0, "\(played.standardError)")
            _ = recorder.exitStatus()
            let file = try SoundFileContents(path: recorded)
            let first = try #require(file.samples.firstIndex { $0 != 0 })
            let got = Array(file.samples[(first - first % 2)...].prefix(expected.count))
            let firstExpected = try #require(expected.firstIndex { $0 != 0 })
            #expect(firstExpected < 2)   // priming trimmed: sound from the first frame
            #expect(got.count == expected.count)
            let worst = zip(got, expected).map { abs($0 - $1) }.max() ?? 1
            print("aqjack play m4a: \(got.count / 2) frames, largest difference from aqjack convert's decode \(worst)")
            #expect(worst < 1e-6)
        }

        @Test("play ffmpeg's ALAC CAF (its packet table counts 12 × 4096 frames; the packets hold 48,000) and Opus MP4 (312 pre-skip frames the decoder drops): each plays its 48,000 frames to the end, exit 0, exitReason end, no error")
        func playFFmpegPacketFiles() throws {
            let source = temporaryPath("ffplay-src.wav")
            defer { try? FileManager.default.removeItem(atPath: source) }
            try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "signed-integer", "-b", "16"]) == 0)
            for (codec, ext) in [(["-c:a", "alac"], "caf"), (["-c:a", "libopus", "-b:a", "128k"], "mp4")] {
                let file = temporaryPath("ffplay.\(ext)")
                defer { try? FileManager.default.removeItem(atPath: file) }
                try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source] + codec + [file]).status == 0)
                let played = try AQJackCommand.run(["play", "--json", "--no-connect", "--name", TestServer.uniqueClientName("ffplay"), file])
                let summary = (try? JSONSerialization.jsonObject(with: Data(played.standardOutput.utf8)) as? [String: Any]) ?? [:]
                #expect(played.status == 0 && summary["exitReason"] as? String == "end" && summary["framesPlayed"] as? Int == 48000
                        && !played.standardError.contains("error"), "\(ext): \(played.standardOutput) \(played.standardError)")
            }
        }

        @Test("SIGKILL after 3 s: ADTS and CAF recordings read to their last packet, an M4A to its last fragment (≥ 1.5 s)",
              arguments: ["aac", "m4a", "caf"])
        func killedAACRecorder(_ ext: String) throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("kagen"), channelCount: 2,
                                                wavePeriod: GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.5, sampleRate: 48000))
            let path = temporaryPath("killed-aac.\(ext)")
            let out = URL(fileURLWithPath: temporaryPath("ka.out"))
            let err = URL(fileURLWithPath: temporaryPath("ka.err"))
            defer { for file in [path, out.path, err.path] { try? FileManager.default.removeItem(atPath: file) } }
            let process = try AQJackCommand.start(["record", "-p", "\(generator.client.name):out_*", "--name", TestServer.uniqueClientName("ka"), path]
                                                      + (ext == "caf" ? ["--codec", "aac"] : []),
                                                  standardOutput: out, standardError: err)
            usleep(3_000_000)
            kill(process.processIdentifier, SIGKILL)
            _ = process.exitStatus()
            let probe = try ExternalTool.probe(path)
            #expect(probe["codec_name"] == "aac", "\(probe)")
            let packets = Int(probe["nb_read_packets"] ?? "") ?? 0
            print("killed \(ext) recorder: ffprobe reads \(packets) packets (\(Double(packets * 1024) / 48000) s)")
            #expect(packets * 1024 >= 48000 * 3 / 2)
            let decoded = try ExternalTool.decodeWithFFmpeg(path)
            #expect(decoded.count / 2 >= 48000 * 3 / 2)
            // aqjack reads it too, every packet ffprobe counted.
            let info = try AQJackCommand.run(["info", "--json", path])
            #expect(info.status == 0 && info.standardOutput.contains("\"packets\":\(packets)"), "\(info.standardOutput) \(info.standardError)")
        }

        @Test("SIGINT stops an M4A recording cleanly: exit 0, a plain MPEG-4 file with the exact packet table")
        func interruptedM4A() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("iagen"), channelCount: 2)
            let path = temporaryPath("interrupted.m4a")
            let out = URL(fileURLWithPath: temporaryPath("ia.out"))
            let err = URL(fileURLWithPath: temporaryPath("ia.err"))
            defer { for file in [path, out.path, err.path] { try? FileManager.default.removeItem(atPath: file) } }
            let process = try AQJackCommand.start(["record", "--json", "-p", "\(generator.client.name):out_*", "--name", TestServer.uniqueClientName("ia"), path],
                                                  standardOutput: out, standardError: err)
            usleep(2_000_000)
            kill(process.processIdentifier, SIGINT)
            let processExit = process.exitStatus()
            #expect(processExit.status == 0, "\((try? String(contentsOf: err, encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: out))
            #expect(summary.exitReason == "interrupt")
            let info = try AQJackCommand.run(["info", "--json", path])
            #expect(info.standardOutput.contains("\"primingFrames\":1024"))
            #expect(info.standardOutput.contains("\"frames\":\(summary.frames)"), "\(summary)")
            #expect(summary.frames > 48000)
        }

        @Test("record --codec alac -b 16 -d 2 to .m4a: ffprobe reads ALAC; decoded it is the generator's signal bit-exact, exactly 2 s")
        func recordALAC() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("alacgen"), channelCount: 2, integerBits: 16)
            let path = temporaryPath("alac-record.m4a")
            let back = temporaryPath("alac-back.wav")
            defer { for file in [path, back] { try? FileManager.default.removeItem(atPath: file) } }
            let result = try AQJackCommand.run(["record", "--json", "--codec", "alac", "-b", "16", "-p", "\(generator.client.name):out_*", "-d", "2",
                                                "--name", TestServer.uniqueClientName("alacrec"), path])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.sampleFormat == "alac" && summary.frames == 96000)
            #expect(try ExternalTool.probe(path)["codec_name"] == "alac")
            let converted = try AQJackCommand.run(["convert", path, back])
            #expect(converted.status == 0, "\(converted.standardError)")
            let file = try SoundFileContents(path: back)
            #expect(file.frames == 96000)
            // Lost device frames would be silence in place (xruns on this machine).
            #expect(integerSignalStartAllowingSilence(file.samples, channels: 2, bits: 16) != nil, "the ALAC file is not the generator's signal")
        }
    }
}
