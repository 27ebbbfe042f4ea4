import AQJack
import AQMedia
import AQServerSuite
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack record --trigger, --hold, --pre-roll and --armed")
    struct RecordTriggerTests {
        /// File frame `frame`'s sample on both channels: loud (0.5 and up, -6 dBFS) in the
        /// `loud` ranges, else quiet (below -74 dBFS); every frame's value its own, so a take
        /// shows exactly which frames it holds.
        static func sample(_ frame: Int, loud: [Range<Int>]) -> Float {
            loud.contains { $0.contains(frame) } ? 0.5 + Float(frame) * 1e-6 : Float(frame) * 1e-9
        }

        /// Writes `frames` frames of ``sample(_:loud:)`` to a stereo float WAVE at `path` (the
        /// right channel negated): the file a player plays into the recorder.
        static func writeSource(_ path: String, frames: Int, loud: [Range<Int>]) throws {
            let format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: AudioFormatValues.linearPCM,
                                                     mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                                     mBytesPerPacket: 8, mFramesPerPacket: 1, mBytesPerFrame: 8, mChannelsPerFrame: 2,
                                                     mBitsPerChannel: 32, mReserved: 0)
            let writer = try AudioFileWriter(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true)
            var samples = [Float](repeating: 0, count: frames * 2)
            for frame in 0 ..< frames {
                samples[2 * frame] = sample(frame, loud: loud)
                samples[2 * frame + 1] = -sample(frame, loud: loud)
            }
            try samples.withUnsafeBytes { try writer.writePackets($0.baseAddress!, byteCount: $0.count, startPacket: 0, packetCount: frames) }
            try writer.close()
        }

        @Test("--trigger -40 --hold 0.25 --pre-roll 0.1 on a file played at a known JACK frame: two takes, each starting exactly 4800 frames before the first loud frame and ending exactly 12000 frames after the last, every sample the file's (24-bit Apple Lossless: to its 24 bits), TimeReference (WAVE) the JACK frame of the first",
              arguments: ["wav", "m4a"])
        func triggerPreRollHold(ext: String) throws {
            let loud = [24_000 ..< 48_000, 96_000 ..< 108_000]
            let frames = 150_000
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-trigger-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let source = folder + "/source.wav"
            try Self.writeSource(source, frames: frames, loud: loud)

            // The player first (its ports are the recorder's sources), scheduled 3 s ahead.
            let control = try GeneratorClient(name: TestServer.uniqueClientName("trigclock"), channelCount: 1)
            let start = UInt64(control.client.estimatedFrameTime) + 3 * 48000
            let playerName = TestServer.uniqueClientName("trigplay")
            let player = try AQJackCommand.start(["play", "--json", "--no-connect", "--start-at", "\(start)", "--name", playerName, source],
                                                 standardOutput: URL(fileURLWithPath: folder + "/play.json"), standardError: URL(fileURLWithPath: folder + "/play.err"))
            defer { if player.isRunning { kill(player.processIdentifier, SIGKILL) } }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, control.client.portInfo(named: "\(playerName):out_2") == nil { usleep(20_000) }
            let recorderName = TestServer.uniqueClientName("trigrec")
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-p", "\(playerName):out_*", "--trigger", "-40", "--hold", "0.25",
                                                    "--pre-roll", "0.1", "--name", recorderName]
                                                   + (ext == "m4a" ? ["--codec", "alac", "-b", "24"] : []) + [folder + "/take.\(ext)"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: folder + "/rec.err"))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            _ = player.exitStatus()
            usleep(500_000)
            // Every file write ran on the process's disk-writer thread.
            #expect(threadNames(of: recorder.processIdentifier).contains("aqjack-disk"), "\(threadNames(of: recorder.processIdentifier))")
            kill(recorder.processIdentifier, SIGTERM)
            let recorderExit = recorder.exitStatus()
            #expect(recorderExit.status == 0, "\((try? String(contentsOfFile: folder + "/rec.err", encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/rec.json")))
            let played = try JSONDecoder().decode(PlaySummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/play.json")))
            #expect(played.startFrameTime == start && played.underrunFrames == 0)
            let takes = [folder + "/take-001.\(ext)", folder + "/take-002.\(ext)"]
            try #require(summary.files == takes, "files \(summary.files)")
            // Take k: file frames loud[k].lowerBound - 4800 ..< loud[k].upperBound + 12000, the
            // first loud frame at take frame 4800 and the last 12000 frames before the end.
            // Located by content (every file frame's value is its own): a server xrun skips a
            // cycle for every client, the player then plays on (its later frames a cycle later
            // on the JACK clock) while the recorder keeps its timeline with a cycle of silence,
            // counted as lost; a cycle the recorder alone missed is silence in its place, its
            // frames lost (counted); a cycle the player alone missed reaches the recorder stale.
            let skipped = max(summary.xruns, played.xruns) * 128
            for (path, range) in zip(takes, loud) {
                let first = range.lowerBound - 4800, end = range.upperBound + 12_000
                // WAVE: every sample exact; Apple Lossless at 24 bits: within half a 24-bit step.
                let samples: [Float], tolerance: Float
                var timeReference: Int64?
                if ext == "wav" {
                    let take = try SoundFileContents(path: path)
                    timeReference = take.timeReference
                    samples = take.samples
                    tolerance = 0
                } else {
                    samples = try ExternalTool.decodeWithFFmpeg(path)
                    tolerance = 1.0 / Float(1 << 23)
                }
                let check = TakeContents(samples, file: first ..< end, loud: loud, tolerance: tolerance)
                #expect(check.firstLoud == 4800 && check.lastLoud == check.frames - 12_001, "\(path): \(check)")
                #expect(check.missing <= check.silent + check.stale, "\(path): \(check)")
                #expect(check.silent <= Int(summary.lostFrames) && check.stale <= skipped, "\(path): \(check), \(summary.lostFrames) lost, \(skipped) skipped")
                if skipped == 0 { #expect(check.frames == end - first && check.silent == 0 && check.stale == 0, "\(path): \(check)") }
                if ext == "wav" {
                    // The JACK frame of the take's first frame: the player's schedule, later by
                    // the cycles the server skipped before it.
                    let late = (timeReference ?? -1) - (Int64(start) + Int64(first))
                    #expect(late >= 0 && late <= Int64(skipped) && late % 128 == 0,
                            "\(path): TimeReference \(String(describing: timeReference)), expected \(Int64(start) + Int64(first)) (+ up to \(skipped))")
                }
            }
        }

        /// What a take holds, located by content: the file's frames `file` in order with cycles
        /// put in between (silence for a gap in the recorder's timeline, or a stale cycle
        /// repeated), and where its first and last loud frames are. A frame that is not the next
        /// file frame is looked for up to 1024 frames further on (the timeline's cycles in the
        /// pre-roll or the hold stand for file frames the take then does not reach).
        struct TakeContents: CustomStringConvertible {
            var frames = 0, silent = 0, stale = 0
            /// File frames of `file` not in the take, and of them in the loud ranges.
            var missing = 0, missingLoud = 0
            var firstLoud = -1, lastLoud = -1

            init(_ samples: [Float], file: Range<Int>, loud: [Range<Int>], tolerance: Float) {
                frames = samples.count / 2
                func matches(_ frame: Int, _ left: Float, _ right: Float) -> Bool {
                    let expected = RecordTriggerTests.sample(frame, loud: loud)
                    return abs(left - expected) <= tolerance && abs(right + expected) <= tolerance
                }
                var next = file.lowerBound
                for frame in 0 ..< frames {
                    let left = samples[2 * frame], right = samples[2 * frame + 1]
                    if left == 0 && right == 0 { silent += 1; continue }
                    guard let found = (next ..< min(next + 1024, file.upperBound)).first(where: { matches($0, left, right) }) else {
                        stale += 1
                        continue
                    }
                    for skipped in next ..< found {
                        missing += 1
                        if loud.contains(where: { $0.contains(skipped) }) { missingLoud += 1 }
                    }
                    if loud.contains(where: { $0.contains(found) }) {
                        if firstLoud < 0 { firstLoud = frame }
                        lastLoud = frame
                    }
                    next = found + 1
                }
                missing += file.upperBound - next
            }
            var description: String {
                "\(frames) frames, \(silent) silent, \(stale) stale, \(missing) missing (\(missingLoud) loud), loud from \(firstLoud) to \(lastLoud)"
            }
        }

        @Test("--armed --pre-roll 0.05: SIGUSR1 starts a take (with 2400 frames from before the signal), the next ends it, the third starts another that SIGTERM finalizes; every sample the generator's at its TimeReference")
        func armedBySignal() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("armgen"), channelCount: 2)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-armed-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let name = TestServer.uniqueClientName("armrec")
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--armed", "--pre-roll", "0.05",
                                                    "--name", name, folder + "/take.wav"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: folder + "/rec.err"))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, generator.client.portInfo(named: "\(name):in_2")?.connections.isEmpty ?? true { usleep(20_000) }
            usleep(300_000)   // more than the pre-roll recorded while waiting
            for pause in [600_000, 300_000, 400_000] as [UInt32] {
                kill(recorder.processIdentifier, SIGUSR1)
                usleep(pause)
            }
            kill(recorder.processIdentifier, SIGTERM)
            let recorderExit = recorder.exitStatus()
            #expect(recorderExit.status == 0, "\((try? String(contentsOfFile: folder + "/rec.err", encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/rec.json")))
            let takes = [folder + "/take-001.wav", folder + "/take-002.wav"]
            try #require(summary.files == takes, "files \(summary.files)")
            for (path, seconds) in zip(takes, [0.6, 0.4]) {
                let take = try SoundFileContents(path: path)
                // The signal's time, give or take the 0.1 s buffers it is applied at, plus the pre-roll.
                #expect(Double(take.frames) >= (seconds - 0.25) * 48000 + 2400 && Double(take.frames) <= (seconds + 0.25) * 48000 + 2400, "\(path): \(take.frames) frames")
                let check = verifyFloatRecording(take, channels: 2)
                #expect(check.wrong <= summary.xruns * 128 * 2 && Int64(check.silent) <= summary.lostFrames, "\(path): \(check)")
            }
        }

        @Test("Every take mode ended before its first take (SIGTERM, SIGINT, /aqjack/quit) exits 0 with a summary of no take and no file")
        func endsBeforeFirstTake() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-notake-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let modes: [(options: [String], stop: Int32?)] = [(["--armed"], SIGTERM), (["--armed"], SIGINT), (["--trigger", "-20"], SIGTERM),
                                                              (["--transport-multi"], SIGINT), (["--osc", "0"], nil)]
            let observer = try JackClient(name: TestServer.uniqueClientName("notakeobs"))
            defer { observer.close() }
            for (index, mode) in modes.enumerated() {
                let name = TestServer.uniqueClientName("notake")
                let output = folder + "/\(index).json", errors = folder + "/\(index).err"
                let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-c", "2", "--name", name] + mode.options + [folder + "/take\(index).wav"],
                                                       standardOutput: URL(fileURLWithPath: output), standardError: URL(fileURLWithPath: errors))
                defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
                // Until the client is there (the OSC port printed), then stop it.
                if let stop = mode.stop {
                    let deadline = Date().addingTimeInterval(10)
                    while Date() < deadline, observer.portInfo(named: "\(name):in_1") == nil { usleep(20_000) }
                    usleep(200_000)
                    kill(recorder.processIdentifier, stop)
                } else {
                    let port = try #require(RecordOSCTests.notedPort(in: errors), "\(mode.options): no OSC port noted")
                    _ = RecordOSCTests.OSCClient(port: port).send("/aqjack/quit")
                }
                let exit = recorder.exitStatus()
                let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                #expect(exit == .exited(0), "\(mode.options): exit \(exit), \(stderr)")
                let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: output)))
                #expect(summary.file == nil && summary.files.isEmpty && summary.frames == 0, "\(mode.options): \(summary.files)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("take\(index)") }.isEmpty)
            }
        }

        @Test("--trigger, --armed, --hold and --pre-roll refuse what they cannot go with (exit 2, a message naming them)")
        func refusals() throws {
            let both = try AQJackCommand.run(["record", "--trigger", "-30", "--armed", temporaryPath("t.wav")])
            #expect(both.status == 2 && both.standardError.contains("give one"), "\(both.standardError)")
            let hold = try AQJackCommand.run(["record", "--hold", "1", temporaryPath("t.wav")])
            #expect(hold.status == 2 && hold.standardError.contains("give --trigger DBFS too"), "\(hold.standardError)")
            let preRoll = try AQJackCommand.run(["record", "--pre-roll", "1", temporaryPath("t.wav")])
            #expect(preRoll.status == 2 && preRoll.standardError.contains("give --trigger DBFS or --armed"), "\(preRoll.standardError)")
            let level = try AQJackCommand.run(["record", "--trigger", "6", temporaryPath("t.wav")])
            #expect(level.status == 2 && level.standardError.contains("--trigger"), "\(level.standardError)")
            let duration = try AQJackCommand.run(["record", "--armed", "-d", "1", temporaryPath("t.wav")])
            #expect(duration.status == 2 && duration.standardError.contains("drop -d"), "\(duration.standardError)")
        }
    }
}
