import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    /// JackTrip (`jacktrip` 1.7.0, peer to peer) between two private servers on 127.0.0.1, both
    /// 48 kHz, period 128 (a JackTrip packet is a period): `aqjack play` on one server into the
    /// client end's `send_*`, `aqjack record` on the other from the server end's `receive_*`.
    /// How a studio records a player at another site (docs/JACK.md, "Remote machines: JackTrip").
    @Suite("JackTrip: aqjack across a peer-to-peer link", .serialized)
    struct JackTripTests {
        /// What one take across the link gave: the recording followed, the two summaries, and
        /// the statistics of the receiving end after the take.
        struct Take {
            let following: SignalFollowing
            let record: RecordSummary
            let play: PlaySummary
            let statistics: JackTripLink.Statistics
            /// Events that may each drop, repeat or spoil a period on the way: the servers'
            /// xruns and JackTrip's own receive-buffer underruns and overflows, less the
            /// underruns that were lost packets (JackTrip counts each lost packet as one).
            var glitches: Int {
                record.xruns + play.xruns + max(0, statistics.underruns - statistics.lostPackets) + statistics.overflows
            }
        }

        /// Plays 1 s of the integer test signal on one server into the link, recording 3 s on
        /// the other: each command starts on its own server's clock, the recorder 0.5 s and the
        /// player 1.5 s from now.
        func takeAcross(simulatedLoss: Double?) throws -> Take {
            let receiving = try PrivateJackServer(period: 128, portMaximum: 64, realtime: true)
            defer { receiving.stop() }
            let sending = try PrivateJackServer(period: 128, portMaximum: 64, realtime: true)
            defer { sending.stop() }
            let link = try JackTripLink(serverSide: receiving.name, clientSide: sending.name, simulatedLoss: simulatedLoss)
            defer { link.stop() }
            let file = temporaryPath("jacktrip-play.wav")
            let take = temporaryPath("jacktrip-rec.wav")
            defer { for path in [file, take, take + ".out", take + ".err"] { try? FileManager.default.removeItem(atPath: path) } }
            try writeIntegerSignalWave(file, frames: 48000)
            let receivingClock = try JackClient(name: TestServer.uniqueClientName("jtclock"), server: receiving.name)
            let sendingClock = try JackClient(name: TestServer.uniqueClientName("jtclock"), server: sending.name)
            let recordAt = receivingClock.estimatedFrameTime &+ 24000
            let playAt = sendingClock.estimatedFrameTime &+ 72000
            receivingClock.close()
            sendingClock.close()
            let recorder = try AQJackCommand.start(["--server", receiving.name, "--name", TestServer.uniqueClientName("jtrec"),
                                                    "record", "--json", "--no-meter", "-c", "2", "-d", "3",
                                                    "--start-at", "\(recordAt)", "-p", "\(link.serverClient):receive_*", take],
                                                   standardOutput: URL(fileURLWithPath: take + ".out"), standardError: URL(fileURLWithPath: take + ".err"))
            let player = try AQJackCommand.start(["--server", sending.name, "--name", TestServer.uniqueClientName("jtplay"),
                                                  "play", "--json", "--start-at", "\(playAt)", "-p", "\(link.clientClient):send_*", file],
                                                 standardOutput: URL(fileURLWithPath: file + ".out"), standardError: URL(fileURLWithPath: file + ".err"))
            defer { for path in [file + ".out", file + ".err"] { try? FileManager.default.removeItem(atPath: path) } }
            let played = player.exitStatus(within: 30)
            #expect(played.succeeded, "\((try? String(contentsOfFile: file + ".err", encoding: .utf8)) ?? "")")
            let recorded = recorder.exitStatus(within: 30)
            #expect(recorded.succeeded, "\((try? String(contentsOfFile: take + ".err", encoding: .utf8)) ?? "")")
            // JackTrip writes its statistics once a second: wait for a line from after the take.
            usleep(1_500_000)
            let statistics = try #require(link.serverStatistics(), "no statistics from the JackTrip server end")
            let record = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: take + ".out")))
            let play = try JSONDecoder().decode(PlaySummary.self, from: Data(contentsOf: URL(fileURLWithPath: file + ".out")))
            #expect(record.ports == ["\(link.serverClient):receive_1", "\(link.serverClient):receive_2"])
            let contents = try SoundFileContents(path: take)
            #expect(contents.frames == 144_000)
            let offset = try #require(signalStart(contents.samples), "nothing of the file came across the link")
            let following = followSignal(contents.samples, frames: 48000, from: offset)
            print("JackTrip \(simulatedLoss.map { "with \($0 * 100) % simulated loss" } ?? "without loss"): the file from frame \(offset), "
                + "\(following.wrong) frames wrong (silent runs \(following.silentRuns.map(\.length))), jumps \(following.jumps); "
                + "JackTrip: \(statistics.lostPackets) packets lost of \(statistics.totalPackets), \(statistics.underruns) underruns, "
                + "\(statistics.overflows) overflows; xruns \(record.xruns) + \(play.xruns), recorder lost \(record.lostFrames)")
            // Nothing lost by the commands themselves.
            #expect(record.lostFrames <= Int64(record.serverSkippedFrames) && play.underrunFrames == 0)
            return Take(following: following, record: record, play: play, statistics: statistics)
        }

        @Test("no loss: every frame of the signal bit-exact, once, silence around (24-bit packets)")
        func bitExact() throws {
            let take = try takeAcross(simulatedLoss: nil)
            // Where a server or JackTrip's buffer glitched: at most a jump and a period wrong each.
            #expect(take.following.jumps.count <= take.glitches)
            #expect(take.following.wrong <= 128 * take.glitches + Int(take.record.lostFrames), "\(take.following.wrong) frames wrong")
            if take.glitches == 0 {
                #expect(take.following.wrong == 0 && take.following.jumps.isEmpty && take.statistics.lostPackets == 0)
            }
        }

        @Test("5 % simulated loss (--simloss, -z): each lost packet a run of silence a period long in place, counted by JackTrip; every other frame bit-exact")
        func simulatedLoss() throws {
            let take = try takeAcross(simulatedLoss: 0.05)
            let lostInSignal = take.following.silentRuns.reduce(0) { $0 + $1.length }
            // 375 packets carry the signal: with 5 % loss, none lost has a chance of 0.95^375.
            #expect(lostInSignal > 0, "no packet of the signal was lost")
            // Whole packets (periods) of silence in place: the signal goes on where it should.
            #expect(take.following.silentRuns.allSatisfy { $0.length % 128 == 0 }, "\(take.following.silentRuns)")
            #expect(lostInSignal / 128 <= take.statistics.lostPackets, "more periods silent than JackTrip counted lost")
            #expect(take.following.jumps.count <= take.glitches)
            #expect(take.following.wrongNotSilent <= 128 * take.glitches + Int(take.record.lostFrames))
        }
    }
}
