import AQCore
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    /// `aqjack host --control PORT`: the graph edited and controlled over its control socket
    /// while JACK runs it, shown by recordings and by JACK's port latencies.
    @Suite("aqjack host --control: the control socket")
    struct HostControlTests {
        /// The port the host noted on standard error ("control socket on 127.0.0.1:PORT").
        static func controlPort(_ err: URL) throws -> Int {
            for _ in 0 ..< 250 {
                let text = String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self)
                if let range = text.range(of: "control socket on 127.0.0.1:") {
                    let digits = text[range.upperBound...].prefix { $0.isNumber }
                    if let port = Int(digits) { return port }
                }
                usleep(20_000)
            }
            throw NSError(domain: "HostControlTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "no control port noted"])
        }

        @Test("set over the socket takes effect within one period: amp at 0 dB between the generator and a recording queue, 'set 1 gain 6' replied ok; every recorded sample is the generator's × 1 before frame S and × powf(10, 0.3) from S on, exactly, S no later than one period after the JACK frame time at the reply; get returns 6")
        func setWithinOnePeriod() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("ctlgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "ctlrec")
            let name = TestServer.uniqueClientName("hostctl")
            let (host, out, err) = try HostCommandTests.startHost([PluginConvertTests.amp, "--control", "0",
                                                                   "-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                                  name: name, expectPort: "out_1")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let socket = try LineClient(port: Self.controlPort(err))
            usleep(500_000)
            let xrunsBefore = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            let sentAt = generator.client.estimatedFrameTime
            #expect(socket.command("set 1 gain 6") == "ok")
            let repliedAt = generator.client.estimatedFrameTime
            #expect(socket.command("get 1 gain") == "ok 6.0")
            usleep(500_000)
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")

            let coefficient = powf(10, 6.0 / 20)
            // The first frame at the new gain: the first sample that is not the generator's own.
            var switchFrame: UInt32?
            var unity = 0, loud = 0, wrong = 0
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for (offset, got) in delivery.samples.enumerated() where got != 0 {
                    let frame = first &+ UInt32(offset)
                    let input = TestSignal.sample(channel: 0, frame: frame)
                    if got == input, switchFrame == nil { unity += 1 } else if got == input * coefficient {
                        if switchFrame == nil { switchFrame = frame }
                        loud += 1
                    } else {
                        wrong += 1
                    }
                }
            }
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(unity > 4_800 && loud > 4_800 && wrong <= xruns * 2 * 128, "\(unity) at 0 dB, \(loud) at +6 dB, \(wrong) wrong, \(xruns) xruns")
            if xruns == 0 { #expect(wrong == 0) }
            let switched = try #require(switchFrame)
            // Queued before the reply; the process thread applies it at its next cycle.
            // A cycle the server skipped around the reply delays the next one by a period each.
            let skipped = generator.client.notifications.xrunCount.load(ordering: .relaxed) - xrunsBefore
            #expect(Int32(bitPattern: switched &- repliedAt) <= Int32(128 * (1 + skipped)), "switched at \(switched), replied at \(repliedAt), \(skipped) xruns")
            #expect(Int32(bitPattern: switched &- sentAt) >= -128, "switched at \(switched), sent at \(sentAt)")
        }

        @Test("a graph built over the socket: add the limiter, connect it, bypass it: latency 240 replied and shown by JACK on out_1; bypassed, every recorded sample is the generator's 240 frames before, exactly; list names the node, its connections and that it is bypassed")
        func bypassKeepsLatency() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("bypgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "byprec")
            let name = TestServer.uniqueClientName("hostbyp")
            let (host, out, err) = try HostCommandTests.startHost(["--control", "0", "--channels", "1",
                                                                   "-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                                  name: name, expectPort: "out_1")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let socket = try LineClient(port: Self.controlPort(err))
            #expect(socket.command("add \(PluginConvertTests.limiter) lim") == "ok lim")
            #expect(socket.command("connect in_1 lim:in_1") == "ok")
            #expect(socket.command("connect lim:out_1 out_1") == "ok")
            #expect(socket.command("bypass lim on") == "ok")
            #expect(socket.command("latency") == "ok 240")
            #expect(socket.command("list") == "ok nodes=1 lim=\(PluginConvertTests.limiter) connections=2 in_1>lim:in_1 lim:out_1>out_1 bypassed=lim")
            let bypassedFrom = generator.client.estimatedFrameTime &+ 256
            let listing = try AQJackCommand.run(["--ports", "\(name):*", "--json"])
            #expect(HostCommandTests.latency(of: "\(name):out_1", "capture", in: listing.standardOutput) == [240, 240], "\(listing.standardOutput)")
            usleep(1_000_000)
            // Until a cycle before the host is stopped (then its ports go silent).
            let stoppedFrom = generator.client.estimatedFrameTime &- 128
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            var checked = 0, wrong = 0
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for offset in delivery.samples.indices {
                    let frame = first &+ UInt32(offset)
                    guard Int32(bitPattern: frame &- bypassedFrom) >= 0, Int32(bitPattern: stoppedFrom &- frame) > 0 else { continue }
                    checked += 1
                    if delivery.samples[offset] != TestSignal.sample(channel: 0, frame: frame &- 240) { wrong += 1 }
                }
            }
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(checked > 24_000 && wrong <= xruns * 2 * 128, "\(checked) samples checked, \(wrong) wrong, \(xruns) xruns")
            if xruns == 0 { #expect(wrong == 0) }
        }

        @Test("graph channels that carry control voltage are marked so on JACK: blop's interpolator (CV out) connected to out_1 makes out_1 signal-type CV; once the amp's audio sums into out_1 too the mark is removed, and back when that connection is cut; out_2 (fed by the amp only) is never marked")
        func controlVoltageOutputsMarked() throws {
            let name = TestServer.uniqueClientName("hostcv")
            let (host, out, err) = try HostCommandTests.startHost(["--control", "0", "--channels", "2"], name: name, expectPort: "out_2")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let watcher = try JackClient(name: TestServer.uniqueClientName("cvwatch"))
            defer { watcher.close() }
            func signalTypes() -> [String?] { ["out_1", "out_2"].map { watcher.portInfo(named: "\(name):\($0)")?.signalType } }
            let socket = try LineClient(port: Self.controlPort(err))
            #expect(signalTypes() == [nil, nil])
            #expect(socket.command("add http://drobilla.net/plugins/blop/interpolator lfo") == "ok lfo")
            #expect(socket.command("add \(PluginConvertTests.amp) amp") == "ok amp")
            #expect(socket.command("connect lfo:out out_1") == "ok")
            #expect(socket.command("connect amp:output out_2") == "ok")
            #expect(signalTypes() == ["CV", nil])
            #expect(socket.command("connect amp:output out_1") == "ok")
            #expect(signalTypes() == [nil, nil])
            #expect(socket.command("disconnect amp:output out_1") == "ok")
            #expect(signalTypes() == ["CV", nil])
            host.interrupt()
            let exit = host.exitStatus()
            #expect(exit.status == 0, "\(String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))")
        }

        @Test("monitor sends the limiter's attenuation as it changes (a 1 kHz sine loud for 50 ms of every 100 ms, the limiter at +20 dB into a -20 dB limit): the first value at once, then at least 5 changing values in a second, at most one a period, each a number the limiter wrote; monitor off stops them")
        func monitorAttenuation() throws {
            // Bursts: the limiter attenuates each and lets go between them.
            let bursts = (0 ..< 4_800).map { frame in Float(sin(2 * Double.pi * Double(frame) / 48)) * (frame < 2_400 ? 0.5 : 0.01) }
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("mongen"), channelCount: 2, wavePeriod: bursts)
            let name = TestServer.uniqueClientName("hostmon")
            let (host, out, err) = try HostCommandTests.startHost([PluginConvertTests.limiter, "--set", "ingain=20", "--set", "limit=-20", "--control", "0",
                                                                   "-i", "\(generator.client.name):out_*"],
                                                                  name: name, expectPort: "out_2")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let socket = try LineClient(port: Self.controlPort(err))
            socket.send("monitor 1 attenuation on")
            #expect(socket.readLine() == "ok")
            let start = Date()
            var values: [Float] = []
            while Date().timeIntervalSince(start) < 1, let line = socket.readLine(timeout: 1) {
                let words = line.split(separator: " ")
                #expect(words.count == 4 && words[0] == "monitor" && words[1] == "1" && words[2] == "attenuation", "\(line)")
                if let value = Float(words.last ?? "") { values.append(value) }
            }
            let elapsed = Date().timeIntervalSince(start)
            #expect(values.count >= 5 && Set(values).count >= 5, "\(values.count) values: \(values.prefix(8))")
            #expect(values.allSatisfy { $0.isFinite && $0 >= 0 }, "\(values.prefix(20))")
            #expect(Double(values.count) <= elapsed * 48_000 / 128 + 2, "\(values.count) values in \(elapsed) s")
            #expect(socket.command("monitor 1 attenuation off") == "ok")
            // What was sent before the reply is read past; then nothing more comes.
            #expect(socket.readLine(timeout: 0.3) == nil)
            host.interrupt()
            #expect(host.exitStatus().status == 0)
        }

        @Test("save over the socket, stop the host, start another with --graph FILE: the same list, and every recorded sample the generator's × powf(10, 6/20), exactly, as the saved graph played it")
        func saveRestartLoad() throws {
            let folder = temporaryPath("graph-\(getpid())-\(UInt32.random(in: 0 ... .max))")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let file = folder + "/rack.json"
            let first = TestServer.uniqueClientName("hostsave")
            let (saver, out1, err1) = try HostCommandTests.startHost(["--control", "0", "--channels", "1"], name: first, expectPort: "out_1")
            defer { for item in [out1, err1] { try? FileManager.default.removeItem(at: item) } }
            var listed: String?
            do {
                let socket = try LineClient(port: Self.controlPort(err1))
                for line in ["add \(PluginConvertTests.amp) amp", "connect in_1 amp:input", "connect amp:output out_1", "set amp gain 6", "save \(file)"] {
                    #expect(socket.command(line) == (line.hasPrefix("add") ? "ok amp" : "ok"), "\(line)")
                }
                listed = socket.command("list")
            }
            saver.interrupt()
            #expect(saver.exitStatus().status == 0)

            let generator = try GeneratorClient(name: TestServer.uniqueClientName("loadgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "loadrec")
            let name = TestServer.uniqueClientName("hostload")
            let (host, out, err) = try HostCommandTests.startHost(["--graph", file, "--control", "0",
                                                                   "-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                                  name: name, expectPort: "out_1")
            defer { for item in [out, err] { try? FileManager.default.removeItem(at: item) } }
            let socket = try LineClient(port: Self.controlPort(err))
            #expect(socket.command("list") == listed)
            #expect(socket.command("get amp gain") == "ok 6.0")
            usleep(1_000_000)
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            HostCommandTests.expectGained(log, by: powf(10, 6.0 / 20), generator: generator)
        }

        @Test("save-preset keeps a plugin's settings as the user's LV2 preset: amp at +6 saved as 'Loud +6' (HOME a scratch folder) is in ~/.lv2/Simple_amplifier_Loud__6.preset.lv2, lv2info lists it, preset brings gain back to 6 after set 0, a second save under the label replaces it (3), 'Loud ?6' gets a folder of its own (-2), and a host started afterwards loads it; an empty label, a LADSPA plugin and an unknown node are refused")
        func savePresetToUserFolder() throws {
            let home = temporaryPath("presethome-\(getpid())-\(UInt32.random(in: 0 ... .max))")
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: home) }
            // LV2_PATH as the default search path, the scratch HOME's ~/.lv2 first.
            let environment = ["HOME": home, "LV2_PATH": "\(home)/.lv2:/usr/lib/lv2"]
            let first = TestServer.uniqueClientName("presetsave")
            let (saver, out1, err1) = try HostCommandTests.startHost(["--control", "0", "--channels", "1"], name: first, expectPort: "out_1",
                                                                     environment: environment)
            defer { for item in [out1, err1] { try? FileManager.default.removeItem(at: item) } }
            let bundle = "\(home)/.lv2/Simple_amplifier_Loud__6.preset.lv2"
            do {
                let socket = try LineClient(port: Self.controlPort(err1))
                #expect(socket.command("add \(PluginConvertTests.amp) amp") == "ok amp")
                #expect(socket.command("set amp gain 6") == "ok")
                #expect(socket.command("save-preset amp \"Loud +6\"") == "ok file://\(bundle)/Loud__6.ttl")
                #expect(FileManager.default.fileExists(atPath: bundle + "/manifest.ttl"))
                #expect(socket.command("set amp gain 0") == "ok")
                #expect(socket.command("preset amp \"Loud +6\"") == "ok")
                #expect(socket.command("get amp gain") == "ok 6.0")
                #expect(socket.command("set amp gain 3") == "ok")
                #expect(socket.command("save-preset amp \"Loud +6\"")?.hasPrefix("ok file://") == true)
                #expect(socket.command("set amp gain 0") == "ok")
                #expect(socket.command("preset amp \"Loud +6\"") == "ok")
                #expect(socket.command("get amp gain") == "ok 3.0")
                // A label whose file name another label has gets names of its own.
                #expect(socket.command("save-preset amp \"Loud ?6\"") == "ok file://\(home)/.lv2/Simple_amplifier_Loud__6-2.preset.lv2/Loud__6-2.ttl")
                #expect(socket.command("preset amp \"Loud +6\"") == "ok")
                #expect(socket.command("get amp gain") == "ok 3.0")
                #expect(socket.command("save-preset amp \"  \"")?.hasPrefix("error invalid '  ' cannot name a preset") == true)
                #expect(socket.command("add \(LADSPATests.amp) flat") == "ok flat")
                #expect(socket.command("save-preset flat Loud")?.hasPrefix("error invalid the LADSPA plugin") == true)
                #expect(socket.command("save-preset 9 Loud")?.hasPrefix("error not-found") == true)
            }
            saver.interrupt()
            #expect(saver.exitStatus().status == 0)
            // Another LV2 host reads it from ~/.lv2.
            let info = try AQJackCommand.runProgram("/usr/bin/lv2info", [PluginConvertTests.amp], environment: environment)
            #expect(info.standardOutput.contains("Loud +6"), "\(info.standardOutput)")
            // So does a later aqjack.
            let second = TestServer.uniqueClientName("presetload")
            let (loader, out2, err2) = try HostCommandTests.startHost(["--control", "0", "--channels", "1"], name: second, expectPort: "out_1",
                                                                      environment: environment)
            defer { for item in [out2, err2] { try? FileManager.default.removeItem(at: item) } }
            do {
                let socket = try LineClient(port: Self.controlPort(err2))
                #expect(socket.command("add \(PluginConvertTests.amp) amp") == "ok amp")
                #expect(socket.command("preset amp \"Loud +6\"") == "ok")
                #expect(socket.command("get amp gain") == "ok 3.0")
            }
            loader.interrupt()
            #expect(loader.exitStatus().status == 0)
        }

        @Test("midi-map then control changes from a JACK MIDI client move the parameter: amp gain mapped to channel 1 CC 7 over 0 to 12 dB, CC 7 = 127 sent at frame F: every recorded sample is the generator's × 1 before the cycle holding F and × powf(10, 0.6) from it, exactly; get returns 12; midi-learn maps the next controller and says so")
        func midiMapMovesParameter() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("ccgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "ccrec")
            let name = TestServer.uniqueClientName("hostcc")
            let changeAt = UInt64(generator.client.estimatedFrameTime) + 48_000
            let learnAt = changeAt + 24_000
            let controller = try MIDINoteClient(name: TestServer.uniqueClientName("cc"), messages: [(changeAt, [0xB0, 7, 127]), (learnAt, [0xB4, 21, 0])])
            let (host, out, err) = try HostCommandTests.startHost([PluginConvertTests.amp, "--control", "0", "-i", controller.portName,
                                                                   "-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                                  name: name, expectPort: "out_1")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let socket = try LineClient(port: Self.controlPort(err))
            #expect(socket.command("midi-map 1 gain 1 7 0 12") == "ok")
            // Learn once CC 7 has come: the next controller is the one at learnAt.
            while UInt64(generator.client.estimatedFrameTime) < changeAt + 4_800 { usleep(10_000) }
            #expect(socket.command("get 1 gain") == "ok 12.0")
            #expect(socket.command("midi-learn 1 gain") == "ok")
            #expect(socket.readLine(timeout: 3) == "learned 1 gain 5 21 -70.0 70.0")
            // The message learned from is not applied: mapped after it came.
            #expect(socket.command("get 1 gain") == "ok 12.0")
            #expect(socket.command("list") == "ok nodes=1 1=\(PluginConvertTests.amp) connections=2 in_1>1:input 1:output>out_1 midi=2 1:gain@1/7 1:gain@5/21")
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            let twelve = powf(10, Float(12) * 0.05)
            var wrong = 0, checked = 0, switched: UInt32?
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for (offset, got) in delivery.samples.enumerated() where got != 0 {
                    let frame = first &+ UInt32(offset)
                    guard UInt64(frame) < learnAt else { continue }
                    let input = TestSignal.sample(channel: 0, frame: frame)
                    checked += 1
                    if got == input * twelve, switched == nil { switched = frame }
                    if got != (UInt64(frame) < changeAt & ~127 || switched == nil ? input : input * twelve) { wrong += 1 }
                }
            }
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(checked > 24_000 && wrong <= xruns * 2 * 128, "\(checked) checked, \(wrong) wrong, \(xruns) xruns")
            let at = try #require(switched)
            #expect(UInt64(at) <= changeAt && changeAt - UInt64(at) < 128, "switched at \(at), the change at \(changeAt)")
        }

        @Test("bad lines never stop the host: each gets its error code and words (syntax, too-long, not-found, invalid, exists, cycle), the graph is unchanged, and the next command works; a connection without the token is refused where one is set, and --control-host beyond loopback without one exits 2")
        func badInput() throws {
            let name = TestServer.uniqueClientName("hostbad")
            let (host, out, err) = try HostCommandTests.startHost([PluginConvertTests.amp, "--control", "0", "--control-token", "s3cret"], name: name, expectPort: "out_1")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let port = try Self.controlPort(err)
            let stranger = try LineClient(port: port)
            #expect(stranger.command("list") == "error auth the first line must be: auth TOKEN (the --control-token)")
            #expect(stranger.readLine(timeout: 1) == nil, "the connection stays open")
            let wrongToken = try LineClient(port: port)
            #expect(wrongToken.command("auth s3cre") == "error auth the first line must be: auth TOKEN (the --control-token)")

            let socket = try LineClient(port: port)
            #expect(socket.command("auth s3cret") == "ok")
            let before = socket.command("list")
            let cases: [(line: [UInt8], reply: String)] = [
                (Array("\n".utf8), "error syntax an empty line; expected a command: add, remove, connect, disconnect, set, get, bypass, preset, save-preset, list, latency, monitor, midi-map, midi-unmap, midi-learn, save, load, help, close"),
                (Array("frobnicate 1\n".utf8), "error syntax unknown command 'frobnicate'; expected one of add, remove, connect, disconnect, set, get, bypass, preset, save-preset, list, latency, monitor, midi-map, midi-unmap, midi-learn, save, load, help, close"),
                (Array("set 1 gain\n".utf8), "error syntax 'set' takes ID SYMBOL VALUE; got 2 arguments"),
                (Array(repeating: UInt8(ascii: "a"), count: 5000) + [10], "error too-long a line of more than 4096 bytes; nothing of it was run"),
                ([0x73, 0x65, 0x74, 0xFF, 0xFE, 10], "error syntax the line is not UTF-8 text"),
                (Array("set 1 gain\u{1}6\n".utf8), "error syntax a control character (byte 1) at column 11; expected printable text"),
                (Array("set 1 gain \"6\n".utf8), "error syntax a quote opened and not closed; expected a closing \""),
                (Array("set 1 gain loud\n".utf8), "error invalid 'loud' is not a number; expected a finite value such as -6 or 0.5"),
                (Array("set 1 gain nan\n".utf8), "error invalid 'nan' is not a number; expected a finite value such as -6 or 0.5"),
                (Array("set 1 gain 1e30\n".utf8), "error invalid gain=1e+30 is out of range for 'Simple amplifier': expected -70 ... 70, default 0"),
                (Array("set 9 gain 1\n".utf8), "error not-found no node '9' in the graph; it has '1'"),
                (Array("add urn:nothing\n".utf8), "error not-found no installed LV2 plugin has the URI 'urn:nothing'; `aqjack plugins` lists the "),
                (Array("add \(PluginConvertTests.amp) 1\n".utf8), "error exists a node '1' is already in the graph; expected a new id"),
                (Array("connect 1:output 1:input\n".utf8), "error cycle connecting 1:output -> 1:input would make a cycle: 1 -> 1; a graph's paths must not loop"),
                (Array("bypass 1 maybe\n".utf8), "error syntax 'maybe' is neither on nor off"),
            ]
            for (line, reply) in cases {
                socket.send(bytes: line)
                let got = socket.readLine() ?? "(no reply)"
                #expect(got.hasPrefix(reply), "sent \(line.prefix(40)): got \(got)")
            }
            #expect(socket.command("list") == before)
            #expect(socket.command("set 1 gain 3") == "ok")
            host.interrupt()
            #expect(host.exitStatus().status == 0)

            let open = try AQJackCommand.run(["host", "--name", TestServer.uniqueClientName("hostopen"), "--control", "0", "--control-host", "0.0.0.0", PluginConvertTests.amp])
            #expect(open.status == 2)
            #expect(open.standardError.contains("--control-host 0.0.0.0 listens beyond this machine: give --control-token TOKEN (or AQJACK_CONTROL_TOKEN) too"), "\(open.standardError)")
        }

        @Test("JACK's transport reaches a plugin that takes time:Position: with jack_transport as timebase master at 140 beats a minute, rolling, the tests' time-position plugin hosted with --control reports speed 1, tempo 140 and the frame it joined at; stopped, speed 0 and the later frame it stopped at")
        func transportToPlugins() throws {
            let folder = try TimePluginFixture.build()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let commands = Pipe()
            let transport = Process()
            transport.executableURL = URL(fileURLWithPath: "/usr/bin/jack_transport")
            transport.standardInput = commands
            transport.standardOutput = FileHandle.nullDevice
            transport.standardError = FileHandle.nullDevice
            try transport.run()
            defer {
                // The server's transport is every test's: stopped, at 0, no timebase master.
                commands.fileHandleForWriting.write(Data("stop\nlocate 0\nrelease\nquit\n".utf8))
                try? commands.fileHandleForWriting.close()
                _ = transport.waitOrKill(timeout: 5)
            }
            commands.fileHandleForWriting.write(Data("master\ntempo 140\nplay\n".utf8))
            let name = TestServer.uniqueClientName("hosttime")
            let out = URL(fileURLWithPath: temporaryPath("\(name).out")), err = URL(fileURLWithPath: temporaryPath("\(name).err"))
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let host = try AQJackCommand.start(["host", "--name", name, "--json", TimePluginFixture.uri, "--control", "0"],
                                               standardOutput: out, standardError: err, environment: ["LV2_PATH": folder])
            defer { if host.isRunning { kill(host.processIdentifier, SIGKILL) } }
            let socket = try LineClient(port: Self.controlPort(err))
            usleep(500_000)
            #expect(socket.command("get 1 speed") == "ok 1.0")
            #expect(socket.command("get 1 bpm") == "ok 140.0")
            let frame = Float(socket.command("get 1 frame")?.dropFirst(3) ?? "") ?? -1
            usleep(300_000)
            #expect(socket.command("get 1 speed") == "ok 1.0")
            commands.fileHandleForWriting.write(Data("stop\n".utf8))
            usleep(300_000)
            #expect(socket.command("get 1 speed") == "ok 0.0")
            let stoppedAt = Float(socket.command("get 1 frame")?.dropFirst(3) ?? "") ?? -1
            #expect(frame >= 0 && stoppedAt > frame, "told \(frame) while rolling, \(stoppedAt) when stopped")
            host.interrupt()
            #expect(host.exitStatus().status == 0)
        }
    }
}
