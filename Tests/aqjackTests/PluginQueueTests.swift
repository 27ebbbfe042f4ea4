import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    /// The same LV2 chain offline (`convert`), in a playback queue (`play`) and in a recording
    /// queue (`record`), on the private server: the frames agree bit for bit, aligned by JACK
    /// frame times (`--start-at`), the chain's 240-frame latency compensated in each.
    @Suite("LV2 plugins in the queues")
    struct PluginQueueTests {
        static let chain = ["--lv2", PluginConvertTests.amp, "--set", "gain=6", "--lv2", PluginConvertTests.limiter]

        /// The offline result: the chain over a 1 s stereo float sine at -20 dBFS (so +6 dB stays
        /// under the limiter's 0 dB).
        static func offline() throws -> (input: String, output: [Float]) {
            let input = try PluginConvertTests.sineFile("lv2q-in", gain: -20)
            let output = temporaryPath("lv2q-offline.wav")
            defer { try? FileManager.default.removeItem(atPath: output) }
            let result = try AQJackCommand.run(["convert", input, output] + chain)
            #expect(result.status == 0, "\(result.standardError)")
            return (input, try SoundFileContents(path: output).samples)
        }

        @Test("play --lv2 amp gain=6 → limiter into a recording queue: the frames from the start frame on are the offline result, bit-exact")
        func playThroughChain() throws {
            let (input, expected) = try Self.offline()
            defer { try? FileManager.default.removeItem(atPath: input) }
            #expect(expected.count == 96_000)
            let (recorder, log) = try startFloatRecorder(channels: 2, role: "lv2qrec")
            let clock = try JackClient(name: TestServer.uniqueClientName("lv2qclock"))
            let start = UInt64(clock.estimatedFrameTime) + 96_000
            clock.close()
            let result = try AQJackCommand.run(["play", "--json", "--start-at", "\(start)", "-p", "\(recorder.driver.name):in_*",
                                                "--name", TestServer.uniqueClientName("lv2qplay"), input] + Self.chain)
            usleep(200_000)
            recorder.stop()
            recorder.dispose()
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(PlaySummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.startFrameTime == start && summary.underrunFrames == 0)
            // Frame time → sample, from the deliveries' timestamps.
            var played: [Float] = []
            for delivery in log.deliveries {
                let first = Int64(delivery.startTime.mSampleTime) - Int64(start)
                for frame in 0 ..< delivery.samples.count / 2 where (0 ..< 48_000).contains(first + Int64(frame)) {
                    played.append(contentsOf: delivery.samples[2 * frame ... 2 * frame + 1])
                }
            }
            #expect(played.count == expected.count)
            #expect(played == expected, "\(zip(played, expected).filter { $0 != $1 }.count) samples differ")
        }

        @Test("record --lv2 amp gain=6 → limiter from a player started at the same frame: the file is the offline result, bit-exact, from its first frame")
        func recordThroughChain() throws {
            let (input, expected) = try Self.offline()
            let path = temporaryPath("lv2q-rec.wav")
            let playerOut = URL(fileURLWithPath: temporaryPath("lv2q-player.out")), playerErr = URL(fileURLWithPath: temporaryPath("lv2q-player.err"))
            defer { for file in [input, path, playerOut.path, playerErr.path] { try? FileManager.default.removeItem(atPath: file) } }
            let clock = try JackClient(name: TestServer.uniqueClientName("lv2qclock"))
            let start = UInt64(clock.estimatedFrameTime) + 96_000
            let playerName = TestServer.uniqueClientName("lv2qsrc")
            let player = try AQJackCommand.start(["play", "--json", "--no-connect", "--start-at", "\(start)", "--name", playerName, input],
                                                 standardOutput: playerOut, standardError: playerErr)
            // Its ports exist once it is waiting for the start frame.
            for _ in 0 ..< 100 where !clock.portNames(direction: .output, audioOnly: true).contains("\(playerName):out_2") { usleep(20_000) }
            clock.close()
            let result = try AQJackCommand.run(["record", "--json", "-p", "\(playerName):out_*", "--start-at", "\(start)", "-d", "1", "--no-meter",
                                                "--name", TestServer.uniqueClientName("lv2qrecord"), path] + Self.chain)
            _ = player.exitStatus()
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.startFrameTime == start && summary.lostFrames == 0)
            let file = try SoundFileContents(path: path)
            #expect(file.timeReference.map(UInt64.init) == start)
            #expect(file.samples.count == expected.count)
            #expect(file.samples == expected, "\(zip(file.samples, expected).filter { $0 != $1 }.count) samples differ")
        }
    }
}
