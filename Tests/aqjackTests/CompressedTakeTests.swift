import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    /// AAC and Apple Lossless recordings in parts and takes: each file encoded by itself on the
    /// disk-writer thread (its own encoder, priming marked, exactly its frames valid).
    @Suite("aqjack record: compressed files split and in takes")
    struct CompressedTakeTests {
        /// A `--split 1 -d 2.5` recording of the generator's 2 channels to `name`.m4a with
        /// `arguments`; its summary and the parts' decodes (ffmpeg, which follows the edit list).
        private func splitRecording(generator: GeneratorClient, arguments: [String], folder: String) throws -> (RecordSummary, [[Float]]) {
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "-d", "2.5", "--split", "1",
                                                "--name", TestServer.uniqueClientName("csplitrec")] + arguments + [folder + "/take.m4a"])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.files == (1 ... 3).map { folder + String(format: "/take-%03d.m4a", $0) } && summary.frames == 120_000, "\(summary.files)")
            let expected = [48000, 48000, 24000]
            // Each part holds exactly its frames after its priming: what its edit list says
            // (ffprobe) and what aqjack info reads.
            for (path, frames) in zip(summary.files, expected) {
                let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path])
                #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "\(frames)", "\(path): \(probe.standardOutput)")
                let info = try AQJackCommand.run(["info", "--json", path])
                #expect(info.standardOutput.contains("\"frames\":\(frames)"), "\(path): \(info.standardOutput)")
            }
            // ffmpeg cuts the priming (the edit list's start) but decodes the last packet whole:
            // each part's decode is taken to its length.
            let decodes = try summary.files.map { try ExternalTool.decodeWithFFmpeg($0) }
            #expect(zip(decodes, expected).allSatisfy { $0.count / 2 >= $1 }, "\(decodes.map { $0.count / 2 })")
            return (summary, zip(decodes, expected).map { Array($0.prefix(2 * $1)) })
        }

        private func folder(_ name: String) throws -> String {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-\(name)-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return folder
        }

        @Test("--codec alac --split 1 over 2.5 s: three M4A files of exactly 48000, 48000 and 24000 frames; their decodes concatenated are the 16-bit signal, bit-exact and continuous across both boundaries (none lost or repeated)")
        func splitAppleLossless() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("csplitgen"), channelCount: 2, integerBits: 16)
            let folder = try folder("alacsplit")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let (summary, decodes) = try splitRecording(generator: generator, arguments: ["--codec", "alac", "-b", "16"], folder: folder)
            let joined = decodes.flatMap { $0 }
            let check = try #require(integerSignalCheck(joined, channels: 2, bits: 16), "no signal")
            #expect(check.wrongFrames <= summary.xruns * 128 * 2, "\(check), \(summary.xruns) xruns")
            #expect(Int64(check.silentFrames) == summary.lostFrames, "\(check), lost \(summary.lostFrames)")
            if summary.xruns == 0 { #expect(check.wrongFrames == 0 && check.silentFrames == 0, "\(check)") }
        }

        @Test("--split 1 over 2.5 s to AAC: three M4A files of exactly 48000, 48000 and 24000 frames after their priming; a 1 kHz sine decoded across each boundary fits one sine (a frame lost or repeated there would shift its phase)")
        func splitAAC() throws {
            let sine = GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.5, sampleRate: 48000)
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("caacgen"), channelCount: 2, wavePeriod: sine)
            let folder = try folder("aacsplit")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let (summary, decodes) = try splitRecording(generator: generator, arguments: ["--bitrate", "128000"], folder: folder)
            let left = decodes.flatMap { $0 }.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            // How the priming is treated: each part is encoded by itself, so each starts with its
            // encoder's 1024 priming frames, which its edit list cuts; a part's first decoded
            // frame is the recording's frame at its boundary. One sine fitted over 4800 frames
            // either side of each boundary measures whether the parts join without a gap.
            for boundary in [48000, 96000] {
                let snr = SineAnalysis.fittedSNR(left[(boundary - 4800) ..< (boundary + 4800)], frequency: 1000, sampleRate: 48000)
                let within = SineAnalysis.fittedSNR(left[(boundary - 14400) ..< (boundary - 4800)], frequency: 1000, sampleRate: 48000)
                print("aqjack record --split AAC: \(snr) dB across the boundary at \(boundary), \(within) dB within the part before it")
                #expect(snr >= 30 || summary.xruns > 0, "boundary \(boundary): \(snr) dB across it, \(within) dB within a part")
            }
        }

        @Test("--transport with --codec alac: one M4A take of exactly the frames the transport rolled, the 16-bit signal bit-exact from the roll's first frame")
        func transportAppleLossless() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("ctgen"), channelCount: 2, integerBits: 16)
            let watcher = try CaptureClient(name: TestServer.uniqueClientName("ctwatch"), channelCount: 1, capacityFrames: 1 << 20)
            try watcher.activate()
            let folder = try folder("alactransport")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let control = watcher.client
            control.stopTransport()
            try control.locateTransport(to: 0)
            let name = TestServer.uniqueClientName("ctrec")
            let recorder = try RecordTransportTests.startRecorder(["--transport", "--codec", "alac", "-b", "16", folder + "/take.m4a"],
                                                                  generator: generator, name: name, folder: folder, control: control)
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            usleep(300_000)
            control.startTransport()
            usleep(700_000)
            control.stopTransport()
            let exit = recorder.exitStatus()
            #expect(exit.status == 0, "\((try? String(contentsOfFile: folder + "/err.txt", encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/out.json")))
            #expect(summary.exitReason == "transport-stop" && summary.files == [folder + "/take.m4a"])
            let rolls = RecordTransportTests.rolls(seenBy: watcher)
            try #require(rolls.count == 1, "rolls seen: \(rolls)")
            let roll = rolls[0], end = try #require(roll.end)
            let decoded = try ExternalTool.decodeWithFFmpeg(folder + "/take.m4a")
            #expect(decoded.count / 2 == Int(end - roll.start), "\(decoded.count / 2) frames for a roll of \(end - roll.start)")
            let check = try #require(integerSignalCheck(decoded, channels: 2, bits: 16), "no signal")
            // The first frame is the roll's: the 16-bit signal repeats every 2048 frames.
            #expect(UInt64(check.start) == roll.start % 2048, "take starts at signal frame \(check.start), roll at \(roll.start)")
            #expect(check.wrongFrames <= summary.xruns * 128 * 2 && check.silentFrames == 0, "\(check), \(summary.xruns) xruns")
        }
    }
}
