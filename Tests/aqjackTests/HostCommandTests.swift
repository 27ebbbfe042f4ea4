import AQJack
import AQPlugins
import AQServerSuite
import AQTestSupport
import AudioQueue
import Foundation
import Testing

extension JackServerSuite {
    /// `aqjack host`: a real LV2 plugin live on the private server, between the test's own
    /// generator and recorder.
    @Suite("aqjack host")
    struct HostCommandTests {
        /// Starts `aqjack host ARGS` in the background and waits until its ports are there.
        static func startHost(_ arguments: [String], name: String, expectPort: String, standardInput: Pipe? = nil,
                              environment: [String: String] = [:]) throws -> (Process, URL, URL) {
            let out = URL(fileURLWithPath: temporaryPath("\(name).out")), err = URL(fileURLWithPath: temporaryPath("\(name).err"))
            let process = try AQJackCommand.start(["host", "--name", name, "--json"] + arguments, standardOutput: out, standardError: err,
                                                  standardInput: standardInput, environment: environment)
            let clock = try JackClient(name: TestServer.uniqueClientName("hostwatch"))
            defer { clock.close() }
            for _ in 0 ..< 250 where !clock.portNames().contains("\(name):\(expectPort)") { usleep(20_000) }
            usleep(200_000)   // activated and connected
            return (process, out, err)
        }

        /// The latency range [min, max] that `aqjack --ports --json` (`listing`) gives port `port`
        /// for `mode` ("capture" or "playback"), or nil.
        static func latency(of port: String, _ mode: String, in listing: String) -> [Int]? {
            let ports = (try? JSONSerialization.jsonObject(with: Data(listing.utf8)) as? [String: Any])?["ports"] as? [[String: Any]] ?? []
            guard let entry = ports.first(where: { $0["name"] as? String == port }),
                  let range = (entry["latency"] as? [String: Any])?[mode] as? [String: Any] else { return nil }
            return [range["min"] as? Int ?? -1, range["max"] as? Int ?? -1]
        }

        /// Expects every sound sample `log` recorded (channel 0; silence before and after the
        /// host is not counted) to be the generator's at its frame × `coefficient`, exactly, and
        /// over 24,000 of them. A server xrun can hand a client a stale cycle: at most two
        /// cycles of 128 frames an xrun may be wrong.
        static func expectGained(_ log: DeliveryLog, by coefficient: Float, generator: GeneratorClient,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
            var checked = 0, wrong = 0
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for (offset, got) in delivery.samples.enumerated() where got != 0 {
                    checked += 1
                    if got != TestSignal.sample(channel: 0, frame: first &+ UInt32(offset)) * coefficient { wrong += 1 }
                }
            }
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(checked > 24_000 && wrong <= xruns * 2 * 128, "\(checked) samples checked, \(wrong) wrong, \(xruns) xruns", sourceLocation: sourceLocation)
            if xruns == 0 { #expect(wrong == 0, sourceLocation: sourceLocation) }
        }

        /// Interrupts the host (Ctrl-C), waits for it, then stops and disposes of the recorder;
        /// returns how the host ended and its standard error.
        static func stopHost(_ host: Process, err: URL, recorder: AudioInputQueue) -> (exit: ChildExit, errors: String) {
            host.interrupt()
            let exit = host.exitStatus()
            recorder.stop()
            recorder.dispose()
            return (exit, String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))
        }

        @Test("host swh amp --set gain=6 between the generator and a recording queue: every sample is the plugin's own offline result for the generator's signal (bit-exact)")
        func ampLive() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("hostgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "hostrec")
            let name = TestServer.uniqueClientName("hostamp")
            let (host, out, err) = try Self.startHost([PluginConvertTests.amp, "--set", "gain=6", "-i", "\(generator.client.name):out_1",
                                                       "-o", "\(recorder.driver.name):in_1"], name: name, expectPort: "output")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            usleep(1_000_000)
            let (hostExit, errors) = Self.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            // The plugin itself, offline on the same frames: what the host must have produced.
            let world = LV2World()
            var checked = 0, wrong = 0
            for delivery in log.deliveries where delivery.samples.contains(where: { $0 != 0 }) {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                var expected = (0 ..< delivery.samples.count).map { TestSignal.sample(channel: 0, frame: first &+ UInt32($0)) }
                let stage = try LV2Stage(world: world, uri: PluginConvertTests.amp, settings: [.control(symbol: "gain", value: 6)], channelCount: 1, sampleRate: 48000)
                expected.withUnsafeMutableBufferPointer { stage.process($0.baseAddress!, frameCount: $0.count, channelCount: 1) }
                for (got, want) in zip(delivery.samples, expected) where got != 0 {
                    checked += 1
                    if got != want { wrong += 1 }
                }
            }
            #expect(checked > 24_000 && wrong == 0, "\(checked) samples checked, \(wrong) wrong")
            let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
            #expect(summary?["exitReason"] as? String == "interrupt")
            #expect((summary?["cycles"] as? Int ?? 0) > 300)
        }

        @Test("host the tests' own plugins: one that requires the LV2 worker (gain 0 until its worker thread answers) and one that requires fixed power-of-two blocks and state:makePath (NaN for a run of another length, or a file it could not make): every sample exactly the generator's × 0.5",
              arguments: TestPlugin.allCases)
        func testPluginLive(plugin: TestPlugin) throws {
            let folder = try plugin.build()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("tpgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "tprec")
            let name = TestServer.uniqueClientName("hosttp")
            // The host finds the plugin through LV2_PATH, which it inherits; unset again at once
            // (this process's own LV2 worlds keep the installed plugins).
            setenv("LV2_PATH", folder, 1)
            let started = Result { try Self.startHost([plugin.uri] + plugin.settings + ["-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                      name: name, expectPort: "out") }
            unsetenv("LV2_PATH")
            let (host, out, err) = try started.get()
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            usleep(1_000_000)
            if plugin == .worker {
                #expect(threadNames(of: host.processIdentifier).contains("aqjack-lv2-work"), "\(threadNames(of: host.processIdentifier))")
            }
            let (hostExit, errors) = Self.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            var checked = 0, wrong = 0
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for (offset, got) in delivery.samples.enumerated() where got != 0 {
                    checked += 1
                    if got != TestSignal.sample(channel: 0, frame: first &+ UInt32(offset)) * 0.5 { wrong += 1 }
                }
            }
            // A server xrun can hand the host a stale cycle (128 wrong samples in a loaded CI run):
            // at most two cycles an xrun, none without one.
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(checked > 24_000 && wrong <= xruns * 2 * 128, "\(checked) samples checked, \(wrong) wrong, \(xruns) xruns")
            if xruns == 0 { #expect(wrong == 0) }
            let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
            #expect(summary?["refusedWorkRequests"] as? Int == 0, "\(String(describing: summary))")
        }

        @Test("host amp: 'gain=-6' and 'gain 12' lines on standard input change the gain live (each stretch of the output is the plugin's offline result at that gain); a bad line is reported and skipped")
        func consoleChangesGain() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("congen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "conrec")
            let name = TestServer.uniqueClientName("hostcon")
            let input = Pipe()
            let (host, out, err) = try Self.startHost([PluginConvertTests.amp, "-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                      name: name, expectPort: "output", standardInput: input)
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            usleep(300_000)
            input.fileHandleForWriting.write(Data("gain=-6\nloud\n".utf8))
            usleep(400_000)
            input.fileHandleForWriting.write(Data("gain 12\n".utf8))
            usleep(400_000)
            let (hostExit, errors) = Self.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            #expect(errors.contains("console: 'loud': expected SYMBOL=VALUE"), "\(errors)")
            // Each sample is the signal at one of the three gains, in order 0, -6, 12 dB.
            let world = LV2World()
            var factors: [Float] = []
            for gain: Float in [0, -6, 12] {
                let stage = try LV2Stage(world: world, uri: PluginConvertTests.amp, settings: [.control(symbol: "gain", value: gain)], channelCount: 1, sampleRate: 48000)
                var one: [Float] = [1]
                stage.process(&one, frameCount: 1, channelCount: 1)
                factors.append(one[0])
            }
            var order: [Int] = []
            var unexplained = 0
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for (frame, got) in delivery.samples.enumerated() where got != 0 {
                    let signal = TestSignal.sample(channel: 0, frame: first &+ UInt32(frame))
                    guard let which = factors.firstIndex(where: { signal * $0 == got }) else { unexplained += 1; continue }
                    if order.last != which { order.append(which) }
                }
            }
            // A server xrun can hand the host a stale cycle (128 samples of the signal at another
            // frame): at most two cycles an xrun, none without one.
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(unexplained <= xruns * 2 * 128 && order == [0, 1, 2], "gains in order \(order), \(unexplained) samples at none of them, \(xruns) xruns")
            if xruns == 0 { #expect(unexplained == 0) }
        }

        @Test("host mda JX10 fed two notes on its MIDI input: it sounds from each note's frame (onset within one period), silent before the first")
        func synthPlaysNotes() throws {
            let clock = try JackClient(name: TestServer.uniqueClientName("jxclock"))
            let now = UInt64(clock.estimatedFrameTime)
            clock.close()
            let notes: [(frame: UInt64, note: UInt8)] = [(now + 48_000 + 37, 60), (now + 72_000 + 101, 67)]
            let sender = try MIDINoteClient(name: TestServer.uniqueClientName("jxnotes"), notes: notes, lengthFrames: 6_000)
            let (recorder, log) = try startFloatRecorder(channels: 2, role: "jxrec")
            let name = TestServer.uniqueClientName("hostjx10")
            // The shortest release: the first note has died away before the second.
            let (host, out, err) = try Self.startHost([PluginConvertTests.jx10, "--set", "env_rel=0", "-i", sender.portName,
                                                       "-o", "\(recorder.driver.name):in_*"], name: name, expectPort: "right_out")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            while UInt64(sender.client.estimatedFrameTime) < notes[1].frame + 12_000 { usleep(50_000) }
            let (hostExit, errors) = Self.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            #expect(sender.processor.sentCount.load(ordering: .relaxed) == 4)
            // The left channel on the JACK timeline.
            var left: [UInt64: Float] = [:]
            for delivery in log.deliveries {
                let first = UInt64(delivery.startTime.mSampleTime)
                for frame in 0 ..< delivery.samples.count / 2 { left[first + UInt64(frame)] = delivery.samples[2 * frame] }
            }
            for note in notes {
                let onset = (note.frame - 256 ..< note.frame + 4_800).first { abs(left[$0] ?? 0) > 1e-3 }
                #expect(onset.map { $0 >= note.frame && $0 < note.frame + 128 } == true, "note at \(note.frame): onset \(onset.map(String.init) ?? "none")")
                print("aqjack host JX10: note at frame \(note.frame), sound from \(onset.map { "+\(Int64($0) - Int64(note.frame))" } ?? "never") frames")
            }
            // Silent (as recorded) from the host's start until the first note.
            #expect((notes[0].frame - 24_000 ..< notes[0].frame).allSatisfy { abs(left[$0] ?? 0) <= 1e-3 })
        }

        @Test("a recording through a live limiter is compensated: the source started at frame S and aqjack record scheduled at S on the host's outputs, the file holds the limiter's offline result from its first frame (BWF TimeReference S, 240 frames taken out)")
        func recordingThroughLiveLimiter() throws {
            let input = try PluginConvertTests.sineFile("hostlat-in", gain: -20)
            let offline = temporaryPath("hostlat-offline.wav"), path = temporaryPath("hostlat-rec.wav")
            defer { for file in [input, offline, path] { try? FileManager.default.removeItem(atPath: file) } }
            let converted = try AQJackCommand.run(["convert", input, offline, "--lv2", PluginConvertTests.limiter])
            #expect(converted.status == 0, "\(converted.standardError)")
            let expected = try SoundFileContents(path: offline).samples
            let clock = try JackClient(name: TestServer.uniqueClientName("latclock"))
            let start = UInt64(clock.estimatedFrameTime) + 144_000
            clock.close()
            let playerName = TestServer.uniqueClientName("latsrc")
            let playerOut = URL(fileURLWithPath: temporaryPath("latsrc.out")), playerErr = URL(fileURLWithPath: temporaryPath("latsrc.err"))
            let player = try AQJackCommand.start(["play", "--no-connect", "--start-at", "\(start)", "--name", playerName, input],
                                                 standardOutput: playerOut, standardError: playerErr)
            // The host connects to the player's ports: they must be there first.
            let watch = try JackClient(name: TestServer.uniqueClientName("latwatch"))
            for _ in 0 ..< 250 where !watch.portNames().contains("\(playerName):out_2") { usleep(20_000) }
            watch.close()
            let hostName = TestServer.uniqueClientName("latlim")
            let (host, out, err) = try Self.startHost([PluginConvertTests.limiter, "-i", "\(playerName):out_*"], name: hostName, expectPort: "out_2")
            defer { for file in [out, err, playerOut, playerErr] { try? FileManager.default.removeItem(at: file) } }
            let result = try AQJackCommand.run(["record", "--json", "-p", "\(hostName):out_*", "--start-at", "\(start)", "-d", "1", "--no-meter",
                                                "--name", TestServer.uniqueClientName("latrec"), path])
            _ = player.exitStatus()
            host.terminate()
            _ = host.exitStatus()
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
            #expect(summary?["latencyCompensationFrames"] as? Int == 240)
            #expect(summary?["startFrameTime"] as? Int == Int(start))
            let file = try SoundFileContents(path: path)
            #expect(file.timeReference.map(UInt64.init) == start)
            #expect(file.samples.count == expected.count)
            #expect(file.samples == expected, "\(zip(file.samples, expected).filter { $0 != $1 }.count) of \(expected.count) samples differ")
        }

        @Test("host fastLookaheadLimiter: JACK shows its 240 frames of latency on the host's outputs (capture) and inputs (playback), as aqjack --ports --json lists them")
        func limiterLatency() throws {
            let name = TestServer.uniqueClientName("hostlim")
            let (host, out, err) = try Self.startHost([PluginConvertTests.limiter], name: name, expectPort: "out_2")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let listing = try AQJackCommand.run(["--ports", "\(name):*", "--json"])
            host.terminate()
            let hostExit = host.exitStatus()
            #expect(hostExit.status == 0)
            let latency = { (port: String, mode: String) in Self.latency(of: "\(name):\(port)", mode, in: listing.standardOutput) }
            #expect(latency("out_1", "capture") == [240, 240], "\(listing.standardOutput)")
            #expect(latency("out_2", "capture") == [240, 240])
            #expect(latency("in_1", "playback") == [240, 240])
            let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
            #expect(summary?["latencyFrames"] as? Int == 240 && summary?["exitReason"] as? String == "terminate")
        }

        @Test("host --state DIR: Ctrl-C saves the plugin's state (an LV2 state bundle); the next start restores it, --set given then overrides it")
        func stateSavedAndRestored() throws {
            let directory = temporaryPath("hoststate")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            func run(_ extra: [String]) throws -> [String: Any]? {
                let name = TestServer.uniqueClientName("hoststate")
                let (host, out, err) = try Self.startHost([PluginConvertTests.amp, "--state", directory] + extra, name: name, expectPort: "output")
                defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
                host.interrupt()
                let hostExit = host.exitStatus()
                #expect(hostExit.status == 0, "\(String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))")
                return try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
            }
            let first = try run(["--set", "gain=-12"])
            #expect((first?["controls"] as? [String: Any])?["gain"] as? Double == -12)
            let saved = try String(contentsOfFile: directory + "/state.ttl", encoding: .utf8)
            #expect(saved.contains("gain") && saved.contains("-12"), "\(saved)")
            let restored = try run([])
            #expect((restored?["controls"] as? [String: Any])?["gain"] as? Double == -12)
            let overridden = try run(["--set", "gain=3"])
            #expect((overridden?["controls"] as? [String: Any])?["gain"] as? Double == 3)
        }

        @Test("host --state DIR refuses a saved value --set would refuse (1e30, 100 dB, 1e400: exit 2 naming it), replaces a planted state.ttl link instead of writing through it, and says at once why a directory cannot be made")
        func hostileState() throws {
            let directory = temporaryPath("hostilestate")
            try? FileManager.default.removeItem(atPath: directory)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            func run(_ extra: [String], state: String = directory) throws -> (exit: ChildExit, errors: String, output: String) {
                let name = TestServer.uniqueClientName("hostilestate")
                let out = URL(fileURLWithPath: temporaryPath("\(name).out")), err = URL(fileURLWithPath: temporaryPath("\(name).err"))
                defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
                let host = try AQJackCommand.start(["host", "--name", name, "--json", PluginConvertTests.amp, "--state", state] + extra,
                                                   standardOutput: out, standardError: err)
                let clock = try JackClient(name: TestServer.uniqueClientName("hostilewatch"))
                defer { clock.close() }
                for _ in 0 ..< 150 where host.isRunning && !clock.portNames().contains("\(name):output") { usleep(20_000) }
                if host.isRunning {
                    usleep(200_000)
                    host.interrupt()
                }
                let exit = host.exitStatus()
                return (exit, String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self),
                        String(decoding: (try? Data(contentsOf: out)) ?? Data(), as: UTF8.self))
            }
            let first = try run(["--set", "gain=-12"])
            #expect(first.exit == .exited(0), "\(first.errors)")
            let saved = try String(contentsOfFile: directory + "/state.ttl", encoding: .utf8)
            let value = try #require(saved.firstMatch(of: /pset:value -12(\.0+)?/), "\(saved)")
            for hostile in ["1.0e30", "100.0", "1.0e400"] {
                try saved.replacingCharacters(in: value.range, with: "pset:value \(hostile)").write(toFile: directory + "/state.ttl", atomically: true, encoding: .utf8)
                let refused = try run([])
                #expect(refused.exit == .exited(2) && refused.errors.contains("sets gain=") && refused.errors.contains("expected a finite value"),
                        "\(hostile): \(refused.exit) \(refused.errors)")
                #expect(refused.output.isEmpty, "\(hostile): \(refused.output)")
            }
            // A link planted where the state goes (to a valid state, read at the start): replaced
            // at the save, its target untouched.
            let victim = temporaryPath("hostilestate-victim")
            try saved.write(toFile: victim, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: victim) }
            try FileManager.default.removeItem(atPath: directory + "/state.ttl")
            try FileManager.default.createSymbolicLink(atPath: directory + "/state.ttl", withDestinationPath: victim)
            let relinked = try run(["--set", "gain=-6"])
            #expect(relinked.exit == .exited(0), "\(relinked.errors)")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == saved)
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/state.ttl")
            #expect(attributes[.type] as? FileAttributeType == .typeRegular)
            #expect(try String(contentsOfFile: directory + "/state.ttl", encoding: .utf8).contains("-6"))
            // A directory that cannot be made: exit 1 at once, with the system's reason.
            let impossible = try run([], state: victim + "/state")
            #expect(impossible.exit == .exited(1) && impossible.errors.contains("cannot make the state directory") && impossible.errors.contains("directory"),
                    "\(impossible.exit) \(impossible.errors)")
        }

        @Test("host: bad input exits 2 naming it (no URI, a chain whose plugins' channels differ (a 1-in, 2-out splitter after a stereo limiter), --state with a chain, an unknown plugin, a control it lacks, a value out of range, --lv2); a port glob matching nothing exits 1")
        func badInput() throws {
            let cases: [([String], Int32, String)] = [
                (["host"], 2, "host needs a plugin URI"),
                (["host", PluginConvertTests.limiter, "http://plugin.org.uk/swh-plugins/split"], 2,
                 "(plugin 2) has 1 audio inputs and 2 outputs: a chain of 2 channels takes plugins with 2 of each, mono ones (one instance per channel), instruments (no input, 2 outputs) or plugins without audio ports"),
                (["host", PluginConvertTests.amp, PluginConvertTests.amp, "--state", "/tmp"], 2, "--state keeps one plugin's state"),
                (["host", PluginConvertTests.amp, PluginConvertTests.amp, "--set", "gain=99"], 2, "expected -70 ... 70"),
                (["host", "http://example.org/none"], 2, "no installed LV2 plugin has the URI 'http://example.org/none'"),
                (["host", PluginConvertTests.amp, "--set", "volume=1"], 2, "no control input 'volume'"),
                (["host", PluginConvertTests.amp, "--set", "gain=99"], 2, "expected -70 ... 70"),
                (["host", PluginConvertTests.amp, "--lv2", PluginConvertTests.amp], 2, "host runs one plugin"),
                (["host", PluginConvertTests.amp, "-i", "nobody:out_*"], 1, "no JACK port matches 'nobody:out_*'"),
            ]
            for (arguments, status, phrase) in cases {
                let result = try AQJackCommand.run(arguments + ["--name", TestServer.uniqueClientName("hostbad")])
                #expect(result.status == status, "\(arguments): \(result.standardError)")
                #expect(result.standardError.contains(phrase), "\(arguments): \(result.standardError)")
            }
        }
    }
}

/// The tests' own LV2 plugins, built with `cc` (Debian has none that needs these features).
enum TestPlugin: String, CaseIterable, Sendable, CustomStringConvertible {
    case worker, hostFeatures

    var description: String { rawValue }
    var uri: String { self == .worker ? WorkerPluginFixture.uri : FeaturePluginFixture.uri }
    /// What makes it halve its input.
    var settings: [String] { self == .worker ? ["--set", "gain=0.5"] : [] }
    func build() throws -> String { self == .worker ? try WorkerPluginFixture.build() : try FeaturePluginFixture.build() }
}
