import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

/// Where the first frame of the 2-channel integer test signal (as `writeIntegerSignalWave` writes
/// it) starts in `samples`, when every frame from there on is the file's, bit for bit, and
/// nothing but silence comes before and after; nil otherwise. Frame 0 of the signal is
/// (0, 1/32768): not silent.
private func signalOffset(_ samples: [Float], frames: Int) -> Int? {
    let count = samples.count / 2
    guard let first = (0 ..< count).first(where: { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 }),
          first + frames <= count else { return nil }
    for frame in 0 ..< frames {
        for channel in 0 ..< 2
        where samples[2 * (first + frame) + channel] != TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16) {
            return nil
        }
    }
    guard samples[(2 * (first + frames))...].allSatisfy({ $0 == 0 }) else { return nil }
    return first
}

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
            let recorder = try AQJackCommand.start(["--server", master.name, "record", "--json", "--no-meter", "-c", "2", "-d", "3",
                                                    "--start-at", "\(recordAt)", "-p", "\(slave.netName):from_slave_*", take],
                                                   standardOutput: URL(fileURLWithPath: take + ".out"), standardError: URL(fileURLWithPath: take + ".err"))
            defer { try? FileManager.default.removeItem(atPath: take + ".out"); try? FileManager.default.removeItem(atPath: take + ".err") }
            let played = try AQJackCommand.run(["--server", slave.name, "play", "--json", "--start-at", "\(playAt)", file])
            #expect(played.status == 0, "\(played.standardError)")
            let recorded = recorder.exitStatus(within: 30)
            let recordError = (try? String(contentsOfFile: take + ".err", encoding: .utf8)) ?? ""
            #expect(recorded.succeeded, "\(recordError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: take + ".out")))
            let playSummary = try JSONDecoder().decode(PlaySummary.self, from: Data(played.standardOutput.utf8))
            #expect(playSummary.ports == ["system:playback_1", "system:playback_2"], "the slave's playback ports, by default")
            let contents = try SoundFileContents(path: take)
            #expect(contents.frames == 144_000)
            let offset = signalOffset(contents.samples, frames: 48000)
            print("NetJACK2 slave → master: the file from frame \(offset.map(String.init) ?? "none") of \(contents.frames); recorder lost \(summary.lostFrames), xruns \(summary.xruns) / player underruns \(playSummary.underrunFrames), xruns \(playSummary.xruns)")
            #expect(offset != nil, "the 48,000 played frames are not in the recording bit-exact and contiguous")
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
                try AQJackCommand.start(["--server", master.name, "record", "--json", "--no-meter", "-c", "2", "-d", "1.5",
                                         "--start-at", "\(start)", "-p", "\(slave.netName):from_slave_*"]
                                        + (index == 1 ? ["--no-latency-compensation"] : []) + [take],
                                        standardOutput: URL(fileURLWithPath: take + ".out"), standardError: URL(fileURLWithPath: take + ".err"))
            }
            let played = try AQJackCommand.run(["--server", master.name, "play", "--json", "--start-at", "\(start)",
                                                "-p", "\(slave.netName):to_slave_*", file])
            #expect(played.status == 0, "\(played.standardError)")
            var offsets: [Int?] = []
            for (recorder, take) in zip(recorders, takes) {
                let exit = recorder.exitStatus(within: 30)
                #expect(exit.succeeded, "\((try? String(contentsOfFile: take + ".err", encoding: .utf8)) ?? "")")
                let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: take + ".out")))
                #expect(summary.lostFrames <= Int64(summary.serverSkippedFrames))
                offsets.append(signalOffset(try SoundFileContents(path: take).samples, frames: 24000))
            }
            print("NetJACK2 round trip at period 128, -l 2: signal at file frame \(offsets) (with, without latency compensation)")
            #expect(offsets == [0, 256])
        }
    }
}
