import AQCore
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

/// Faults while recording and playing (issue 9), on the test server: SIGKILL with silent and
/// signal input, a disk that fills (a small tmpfs the test mounts), a file truncated while it
/// plays, the server dying during playback, and one exit-status convention for every
/// subcommand.
extension JackServerSuite {
    @Suite("aqjack under faults")
    struct FaultTests {
        /// Starts `aqjack record` in the background with output to files.
        static func startRecording(_ arguments: [String], name: String) throws -> (process: Process, out: URL, err: URL) {
            let out = URL(fileURLWithPath: temporaryPath("\(name).out"))
            let err = URL(fileURLWithPath: temporaryPath("\(name).err"))
            let process = try AQJackCommand.start(["record", "--json", "--no-meter"] + arguments, standardOutput: out, standardError: err)
            return (process, out, err)
        }

        /// Frames `ffprobe` decodes from `path` (its packets × 1024 for AAC), or nil.
        static func probedSeconds(_ path: String) throws -> Double? {
            let result = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
            return result.status == 0 ? Double(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) : nil
        }

        @Test("item02SilentCompressedKill: SIGKILL after 4 s of silent or signal input leaves M4A, ADTS, CAF and ALAC files readable to within 1 s of the kill",
              arguments: ["m4a", "aac", "caf", "mp4", "wav"], [true, false])
        func item02SilentCompressedKill(ext: String, silent: Bool) throws {
            // CAF records AAC with --codec aac, MP4 here records Apple Lossless; WAV is the PCM reference.
            let extra = ext == "caf" ? ["--codec", "aac"] : ext == "mp4" ? ["--codec", "alac"] : []
            // Silence is the hard case: AAC packets of silence are ~10 bytes, and a buffer used
            // to fill (and reach the file) only after 10-24 s.
            let wave = silent ? [Float](repeating: 0, count: 48) : GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.5, sampleRate: 48000)
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("killsrc"), channelCount: 2, wavePeriod: wave)
            let path = temporaryPath("killed-\(silent ? "silent" : "tone").\(ext)")
            let run = try Self.startRecording(["-p", "\(generator.client.name):out_*", "--name", TestServer.uniqueClientName("kc"), path] + extra,
                                              name: "kill-\(ext)")
            defer { for file in [path, run.out.path, run.err.path] { try? FileManager.default.removeItem(atPath: file) } }
            usleep(4_000_000)
            kill(run.process.processIdentifier, SIGKILL)
            _ = run.process.exitStatus()
            // 4 s minus at most 0.5 s of start-up (client, ports, connections) and 1 s before the kill.
            let seconds = try #require(try Self.probedSeconds(path), "ffprobe cannot read the \(ext) file a killed recorder left")
            #expect(seconds >= 2.5, "\(ext) silent=\(silent): \(seconds) s readable")
            let info = try AQJackCommand.run(["info", "--json", path])
            #expect(info.status == 0, "\(info.standardError)")
        }

        @Test("item02CompressedDurationEndsOnTime: record -d 1 to M4A of silence ends within 2 s (it took 10-24 s)")
        func item02CompressedDurationEndsOnTime() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("dsrc"), channelCount: 2, wavePeriod: [Float](repeating: 0, count: 48))
            let path = temporaryPath("short-silence.m4a")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try AQJackCommand.run(["record", "--json", "-p", "\(generator.client.name):out_*", "-d", "1",
                                                "--name", TestServer.uniqueClientName("ds"), path])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.seconds < 2, "took \(result.seconds) s")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.frames == 48000)
        }

        @Test("item04DiskFullCompressed: an M4A recording that fills the disk stops with exit 1 naming ENOSPC; the file is readable and holds what the summary says")
        func item04DiskFullCompressed() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("dfsrc"), channelCount: 2,
                                                wavePeriod: GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.5, sampleRate: 48000))
            let disk = try SmallDisk(kilobytes: 64)
            defer { disk.unmount() }
            let path = disk.path + "/full.m4a"
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--bitrate", "128000",
                                                "--name", TestServer.uniqueClientName("df"), path])
            #expect(result.status == 1)
            #expect(result.standardError.contains("ENOSPC"), "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.exitReason == "error")
            // The file: complete fragments only, which decode to the summary's frames, the 1024
            // frames of encoder priming among them (a fragmented file cut short has no edit list
            // to mark them), as the message says (defect09M4ADiskFullSummary).
            let probe = try ExternalTool.probe(path)
            let packets = try #require(Int64(probe["nb_read_packets"] ?? ""), "\(probe)")
            #expect(packets > 40)
            #expect(summary.frames == packets * 1024, "summary \(summary.frames) frames, file \(packets) packets")
            #expect(result.standardError.contains("the file keeps \(summary.frames) frames, the first 1024 of them the encoder's priming"), "\(result.standardError)")
            let copy = temporaryPath("full-decoded.wav")
            defer { try? FileManager.default.removeItem(atPath: copy) }
            let convert = try AQJackCommand.run(["convert", path, copy])
            #expect(convert.status == 0, "\(convert.standardError)")
            #expect(soxFrames(copy).map(Int64.init) == packets * 1024)
        }

        @Test("item12DiskFullPCM: a WAV recording that fills the disk stops with exit 1, the message names the file, ENOSPC and the frames kept; every kept frame is bit-exact",
              arguments: ["wav", "caf"])
        func item12DiskFullPCM(ext: String) throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("dpsrc"), channelCount: 2)
            let disk = try SmallDisk(kilobytes: 256)
            defer { disk.unmount() }
            let path = disk.path + "/full.\(ext)"
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*",
                                                "--name", TestServer.uniqueClientName("dp"), path])
            #expect(result.status == 1)
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            #expect(result.standardError.contains("writing '\(path)' failed: ENOSPC (No space left on device)"), "\(result.standardError)")
            #expect(result.standardError.contains("the file keeps \(summary.frames) frames"), "\(result.standardError)")
            #expect(!result.standardError.contains("No Error"))
            #expect(summary.frames > 20000)
            #expect(soxFrames(path).map(Int64.init) == summary.frames)
            let file = try SoundFileContents(path: path)
            #expect(Int64(file.frames) == summary.frames)
            if ext == "wav" {
                #expect(verifyFloatRecording(file, channels: 2).wrong == 0)
                // defect09WAVTornFrame: the data chunk holds whole frames only (2 float channels).
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
                let data = try #require((12 ..< bytes.count - 8).first { bytes[$0 ..< $0 + 4].elementsEqual("data".utf8) })
                let size = bytes[data + 4 ..< data + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
                #expect(size == Int(summary.frames) * 8 && bytes.count >= data + 8 + size, "data \(size) bytes, \(summary.frames) frames, file \(bytes.count) bytes")
            }
        }

        @Test("item11TruncatedWhilePlaying: a file cut short while it plays ends with exit 1, reason file-error, frames expected and played")
        func item11TruncatedWhilePlaying() throws {
            let path = temporaryPath("truncated-play.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", "10", "sine", "440"])
            let out = URL(fileURLWithPath: temporaryPath("trunc.out"))
            let err = URL(fileURLWithPath: temporaryPath("trunc.err"))
            defer { for file in [out.path, err.path] { try? FileManager.default.removeItem(atPath: file) } }
            let process = try AQJackCommand.start(["play", "--json", "--no-connect", "--name", TestServer.uniqueClientName("tr"), path],
                                                  standardOutput: out, standardError: err)
            usleep(1_000_000)
            // Keep the header and 3 s of the 10 s.
            #expect(truncate(path, off_t(44 + 3 * 48000 * 4)) == 0)
            let processExit = process.exitStatus()
            let message = String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self)
            #expect(processExit.status == 1, "\(message)")
            #expect(message.contains("ended after") && message.contains("of the 480000 frames its header gives"), "\(message)")
            let summary = try JSONDecoder().decode(PlaySummary.self, from: Data(contentsOf: out))
            #expect(summary.exitReason == "file-error")
            #expect(summary.expectedFrames == 480_000)
            #expect(summary.framesPlayed >= 3 * 48000 - 48000 && summary.framesPlayed < 480_000, "\(summary.framesPlayed)")
        }

        @Test("item16PlayReportsFileFrames: a 44.1 kHz file on the 48 kHz server reports frames at 44.1 kHz, and the JACK frames at 48 kHz beside them")
        func item16PlayReportsFileFrames() throws {
            let path = temporaryPath("rate441.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try ExternalTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "1", "sine", "440"])
            let result = try AQJackCommand.run(["play", "--json", "--no-connect", "--name", TestServer.uniqueClientName("r441"), path])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(PlaySummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.sampleRate == 44100 && summary.expectedFrames == 44100)
            #expect(abs(summary.framesPlayed - 44100) <= 2, "\(summary.framesPlayed)")
            #expect(result.standardOutput.contains("\"deviceSampleRate\":48000"))
            let device = try #require(result.standardOutput.firstMatch(of: /"deviceFrames":(\d+)/).flatMap { Int64($0.1) })
            #expect(abs(device - 48000) <= 2, "\(device)")
        }

        @Test("item13RecordNonUTF8Name: record writes exactly the Latin-1 name it was given, and info reads it back")
        func item13RecordNonUTF8Name() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("l1src"), channelCount: 2)
            let folder = temporaryPath("latin1-record")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let name: [UInt8] = Array("prise".utf8) + [0xE9, 0xFF] + Array(".wav".utf8)
            let path = Array(folder.utf8) + [UInt8(ascii: "/")] + name
            let result = try runRaw(["record", "-d", "0.5", "--no-meter", "-p", "\(generator.client.name):out_*",
                                     "--name", TestServer.uniqueClientName("l1"), path])
            #expect(result.status == 0, "\(result.standardError)")
            #expect(rawEntries(folder) == [name])
            #expect(result.standardOutput.contains("prise\\xe9\\xff.wav"), "\(result.standardOutput)")
            let info = try runRaw(["info", "--json", path])
            #expect(info.status == 0 && info.standardOutput.contains("\"frames\":24000"), "\(info.standardOutput) \(info.standardError)")
        }

        @Test("the JACK server stopped (SIGSTOP) for 3 s during a recording: after 2 s aqjack says it gets no cycles, says when they come again, and the recording ends as asked (exit 0, all 6 s of frames)")
        func serverStalls() throws {
            let recording = try PrivateServerRecording(role: "stall", arguments: ["-d", "6"])
            defer { recording.cleanUp() }
            let (server, process, out) = (recording.server, recording.process, recording.out)
            usleep(1_500_000)
            kill(server.processIdentifier, SIGSTOP)
            usleep(3_000_000)
            kill(server.processIdentifier, SIGCONT)
            let processExit = process.exitStatus(within: 60)
            let message = recording.standardError
            #expect(processExit.succeeded, "\(message)")
            #expect(message.contains("the server has run no cycle of"), "\(message)")
            #expect(message.contains("again, after"), "\(message)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: out))
            #expect(summary.exitReason == "duration" && summary.frames == 288_000)
        }

        @Test("Ctrl-C while the JACK server does not answer (stopped with SIGSTOP): aqjack leaves after 10 s with exit 1 and a message naming the server, instead of waiting forever in libjack; the file is valid and holds what was recorded")
        func serverSilentAtExit() throws {
            let recording = try PrivateServerRecording(role: "silent-exit", arguments: [])
            defer { recording.cleanUp() }
            let (server, process, path) = (recording.server, recording.process, recording.path)
            usleep(2_000_000)
            kill(server.processIdentifier, SIGSTOP)
            usleep(200_000)
            kill(process.processIdentifier, SIGINT)
            let started = Date()
            let processExit = process.exitStatus(within: 60)
            let seconds = Date().timeIntervalSince(started)
            let message = recording.standardError
            #expect(processExit == .exited(1), "\(message)")
            #expect(message.contains("the JACK server '\(server.name)' did not answer for 10 s"), "\(message)")
            #expect(seconds >= 9 && seconds < 30, "left after \(seconds) s")
            let file = try SoundFileContents(path: path)
            #expect(file.frames >= 48_000, "\(file.frames) frames kept")
        }

        @Test("the JACK server dying during playback: exit 1, reason server-shutdown")
        func playServerDeath() throws {
            let server = try PrivateJackServer()
            let path = temporaryPath("play-death.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", "10", "sine", "440"])
            let out = URL(fileURLWithPath: temporaryPath("pdeath.out"))
            let err = URL(fileURLWithPath: temporaryPath("pdeath.err"))
            defer { for file in [out.path, err.path] { try? FileManager.default.removeItem(atPath: file) } }
            let process = try AQJackCommand.start(["play", "--json", "--no-connect", "--server", server.name, path], standardOutput: out, standardError: err)
            usleep(1_000_000)
            server.stop()
            let processExit = process.exitStatus()
            let message = String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self)
            #expect(processExit.status == 1, "\(message)")
            #expect(message.contains("shut down"))
            let summary = try JSONDecoder().decode(PlaySummary.self, from: Data(contentsOf: out))
            #expect(summary.exitReason == "server-shutdown")
        }

        @Test("item14ExitCodesAgree: Ctrl-C and SIGTERM end record and play alike, exit 0 with the reason in the summary, as the README's table says",
              arguments: ["record", "play"], [SIGINT, SIGTERM])
        func item14ExitCodesAgree(command: String, signal: Int32) throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("exsrc"), channelCount: 2)
            let input = temporaryPath("exit-in.wav")
            let output = temporaryPath("exit-\(command)-\(signal).wav")
            try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", input, "synth", "10", "sine", "440"])
            let out = URL(fileURLWithPath: temporaryPath("exit.out"))
            let err = URL(fileURLWithPath: temporaryPath("exit.err"))
            defer { for file in [input, output, out.path, err.path] { try? FileManager.default.removeItem(atPath: file) } }
            let arguments = command == "record"
                ? ["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--name", TestServer.uniqueClientName("ex"), output]
                : ["play", "--json", "--no-connect", "--name", TestServer.uniqueClientName("ex"), input]
            let process = try AQJackCommand.start(arguments, standardOutput: out, standardError: err)
            usleep(1_000_000)
            kill(process.processIdentifier, signal)
            let processExit = process.exitStatus()
            #expect(processExit.isExit)
            #expect(processExit.status == 0, "\(String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))")
            let text = String(decoding: try Data(contentsOf: out), as: UTF8.self)
            #expect(text.contains("\"exitReason\":\"\(signal == SIGINT ? "interrupt" : "terminate")\""), "\(text)")
            let readme = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/README.md", encoding: .utf8)
            #expect(readme.contains("Ctrl-C (SIGINT) or SIGTERM ends `record` and `play` normally"))
        }
    }
}

/// `aqjack record --json --no-meter` of the silent capture ports of a real-time server of the
/// test's own, for the tests that stop that server (SIGSTOP) under it.
struct PrivateServerRecording {
    let server: PrivateJackServer
    let path: String
    let out: URL
    let err: URL
    let process: Process

    /// Starts the server, then the recorder with `arguments` added (e.g. `-d 6`).
    init(role: String, arguments: [String]) throws {
        server = try PrivateJackServer(realtime: true)
        path = temporaryPath(role + ".wav")
        out = URL(fileURLWithPath: temporaryPath(role + ".out"))
        err = URL(fileURLWithPath: temporaryPath(role + ".err"))
        process = try AQJackCommand.start(["record", "--json", "--no-meter", "--server", server.name, "-p", "system:capture_*", "-c", "2"]
                                          + arguments + [path], standardOutput: out, standardError: err)
    }

    /// What the recorder wrote to standard error so far.
    var standardError: String { String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self) }

    /// Lets the server run again, kills a recorder still running, stops the server, removes the files.
    func cleanUp() {
        kill(server.processIdentifier, SIGCONT)
        if process.isRunning { kill(process.processIdentifier, SIGKILL); _ = process.exitStatus(within: 10) }
        server.stop()
        for file in [path, out.path, err.path] { try? FileManager.default.removeItem(atPath: file) }
    }
}
