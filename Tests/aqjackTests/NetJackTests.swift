import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    /// NetJACK2 on 127.0.0.1: a master of the test's own (dummy backend, period 128, real time)
    /// with JACK's netmanager, and a slave jackd on the net backend (`-l 2`: two cycles of
    /// network latency). How a studio records a remote machine's ports (README, "Remote
    /// machines").
    @Suite("NetJACK2: aqjack across a master and a slave", .serialized)
    struct NetJackTests {
        @Test("aqjack play on the slave (its system:playback ports), aqjack record on the master (SLAVE:from_slave_*): every frame bit-exact, once, silence around")
        func slavePlaysMasterRecords() throws {
            let master = try PrivateJackServer(period: 128, portMaximum: 64, realtime: true)
            defer { master.stop() }
            let slave = try NetJackSlave(master: master.name)
            defer { slave.stop() }
            let file = temporaryPath("netplay.wav")
            let take = temporaryPath("netrec.wav")
            defer { for path in [file, take] { try? FileManager.default.removeItem(atPath: path) } }
            try writeIntegerSignalWave(file, frames: 48000)
            // Each side starts on its own clock: the recorder 0.5 s from now on the master's, the
            // player 1.5 s from now on the slave's, so the whole file falls inside the 3 s taken.
            let masterNow = try JackClient(name: TestServer.uniqueClientName("netclock"), server: master.name)
            let slaveNow = try JackClient(name: TestServer.uniqueClientName("netclock"), server: slave.name)
            let recordAt = masterNow.estimatedFrameTime &+ 24000
            let playAt = slaveNow.estimatedFrameTime &+ 72000
            masterNow.close()
            slaveNow.close()
            // Every client named apart: JACK2 names a client's socket by the client's name alone,
            // so two clients called "aqjack" on the two servers at once break each other
            // (README, "Remote machines: NetJACK2").
            let recorder = try AQJackCommand.start(["--server", master.name, "--name", TestServer.uniqueClientName("netrec"),
                                                    "record", "--json", "--no-meter", "-c", "2", "-d", "3",
                                                    "--start-at", "\(recordAt)", "-p", "\(slave.netName):from_slave_*", take],
                                                   standardOutput: URL(fileURLWithPath: take + ".out"), standardError: URL(fileURLWithPath: take + ".err"))
            defer { try? FileManager.default.removeItem(atPath: take + ".out"); try? FileManager.default.removeItem(atPath: take + ".err") }
            let played = try AQJackCommand.run(["--server", slave.name, "--name", TestServer.uniqueClientName("netplay"),
                                                "play", "--json", "--start-at", "\(playAt)", file])
            #expect(played.status == 0, "\(played.standardError)")
            let recorded = recorder.exitStatus(within: 30)
            let recordError = (try? String(contentsOfFile: take + ".err", encoding: .utf8)) ?? ""
            #expect(recorded.succeeded, "\(recordError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: take + ".out")))
            let playSummary = try JSONDecoder().decode(PlaySummary.self, from: Data(played.standardOutput.utf8))
            #expect(playSummary.ports == ["system:playback_1", "system:playback_2"], "the slave's playback ports, by default")
            let contents = try SoundFileContents(path: take)
            #expect(contents.frames == 144_000)
            let offset = try #require(signalStart(contents.samples), "nothing of the file reached the master")
            let (wrong, jumps) = followSignal(contents.samples, frames: 48000, from: offset).counts
            let xruns = summary.xruns + playSummary.xruns
            print("NetJACK2 slave → master: the file from frame \(offset) of \(contents.frames), \(wrong) frames wrong, \(jumps) jumps; recorder lost \(summary.lostFrames), xruns \(summary.xruns) / player underruns \(playSummary.underrunFrames), xruns \(playSummary.xruns)")
            // Every frame the file's, once, with silence around. When the servers reported xruns
            // (the slave's late cycles: see the README), a cycle may be dropped or repeated
            // between the servers: at most one jump, and one cycle lost or stale, per xrun.
            #expect(jumps <= xruns && wrong <= (xruns == 0 ? 0 : Int(summary.lostFrames) + 128 * xruns), "\(wrong) frames wrong, \(jumps) jumps, \(xruns) xruns")
            // Frames lost only where the master skipped them (a client joining the slave can make
            // the slave's cycle, and so the master's, late): none of aqjack's own.
            #expect(summary.lostFrames <= Int64(summary.serverSkippedFrames) && playSummary.underrunFrames == 0)
        }

        @Test("round trip master → slave → master on one clock: a file played at frame F is recorded from F + 256 (two 128-frame cycles of network latency) without latency compensation, and from F exactly with it (the latency JACK reports on the slave's ports is the measured one), bit-exact")
        func roundTripLatency() throws {
            let master = try PrivateJackServer(period: 128, portMaximum: 64, realtime: true)
            defer { master.stop() }
            let slave = try NetJackSlave(master: master.name, latency: 2)
            defer { slave.stop() }
            // The slave loops what it captures (from the master) back to the master.
            let patch = try JackClient(name: TestServer.uniqueClientName("netloop"), server: slave.name)
            for channel in 1 ... 2 { _ = try patch.connect("system:capture_\(channel)", to: "system:playback_\(channel)") }
            patch.close()
            let file = temporaryPath("netloop.wav")
            let takes = [temporaryPath("netloop-comp.wav"), temporaryPath("netloop-raw.wav")]
            defer { for path in [file] + takes + takes.map({ $0 + ".out" }) + takes.map({ $0 + ".err" }) { try? FileManager.default.removeItem(atPath: path) } }
            try writeIntegerSignalWave(file, frames: 24000)
            let clock = try JackClient(name: TestServer.uniqueClientName("netclock"), server: master.name)
            let start = clock.estimatedFrameTime &+ 48000
            clock.close()
            let recorders = try takes.enumerated().map { index, take in
                try AQJackCommand.start(["--server", master.name, "--name", TestServer.uniqueClientName("netrec"),
                                         "record", "--json", "--no-meter", "-c", "2", "-d", "1.5",
                                         "--start-at", "\(start)", "-p", "\(slave.netName):from_slave_*"]
                                        + (index == 1 ? ["--no-latency-compensation"] : []) + [take],
                                        standardOutput: URL(fileURLWithPath: take + ".out"), standardError: URL(fileURLWithPath: take + ".err"))
            }
            let played = try AQJackCommand.run(["--server", master.name, "--name", TestServer.uniqueClientName("netplay"),
                                                "play", "--json", "--start-at", "\(start)",
                                                "-p", "\(slave.netName):to_slave_*", file])
            #expect(played.status == 0, "\(played.standardError)")
            var offsets: [Int?] = []
            for (index, (recorder, take)) in zip(recorders, takes).enumerated() {
                let exit = recorder.exitStatus(within: 30)
                #expect(exit.succeeded, "\((try? String(contentsOfFile: take + ".err", encoding: .utf8)) ?? "")")
                let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: take + ".out")))
                #expect(summary.lostFrames <= Int64(summary.serverSkippedFrames))
                let samples = try SoundFileContents(path: take).samples
                // At exactly 0 (compensated) and 256 frames (not): every frame the file's, with
                // xruns at most the frames lost and one stale cycle per xrun.
                let (wrong, jumps) = followSignal(samples, frames: 24000, from: [0, 256][index]).counts
                let xruns = summary.xruns + (try JSONDecoder().decode(PlaySummary.self, from: Data(played.standardOutput.utf8))).xruns
                #expect(jumps <= xruns && wrong <= (xruns == 0 ? 0 : Int(summary.lostFrames) + 128 * xruns), "\(take): \(wrong) frames wrong, \(jumps) jumps, \(xruns) xruns")
                offsets.append(signalStart(samples))
            }
            print("NetJACK2 round trip at period 128, -l 2: signal at file frame \(offsets) (with, without latency compensation)")
            #expect(offsets == [0, 256])
        }
    }
}
