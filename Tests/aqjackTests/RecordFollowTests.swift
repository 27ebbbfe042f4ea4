import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack record --follow, --auto-connect and --latency-offset")
    struct RecordFollowTests {
        /// What each frame of a 2-channel float recording whose first frame is JACK frame
        /// `reference` holds, located by content: silence, the test signal, the 1 kHz sine of
        /// `sine` (both at the frame's JACK time), one channel its signal and the other silent (a
        /// stereo source's two connections take effect a cycle apart: JACK applies each
        /// `jack_connect` at a cycle boundary), or something else.
        enum Kind: Equatable { case silent, signal, sine, oneChannel, other }
        static func kinds(_ file: SoundFileContents, sine: [Float], offset: Int64 = 0) -> [Kind] {
            let reference = (file.timeReference ?? 0) + offset
            return (0 ..< file.frames).map { frame in
                let left = file.samples[2 * frame], right = file.samples[2 * frame + 1]
                let jackFrame = reference + Int64(frame)
                if left == 0 && right == 0 { return .silent }
                let time = UInt32(truncatingIfNeeded: jackFrame)
                if left.bitPattern == TestSignal.sample(channel: 0, frame: time).bitPattern
                    && right.bitPattern == TestSignal.sample(channel: 1, frame: time).bitPattern { return .signal }
                let expected = sine[Int(jackFrame % Int64(sine.count))]
                if left == expected && right == expected { return .sine }
                let leftOwn = left.bitPattern == TestSignal.sample(channel: 0, frame: time).bitPattern || left == expected
                let rightOwn = right.bitPattern == TestSignal.sample(channel: 1, frame: time).bitPattern || right == expected
                if (leftOwn && right == 0) || (left == 0 && rightOwn) { return .oneChannel }
                return .other
            }
        }

        /// Runs for a message: the first 12 and how many more.
        static func describe(_ runs: [(Kind, Int)]) -> String {
            runs.prefix(12).map { "\($0.0):\($0.1)" }.joined(separator: " ") + (runs.count > 12 ? " ... (\(runs.count) runs)" : "")
        }

        /// The kinds as runs, in order: (kind, frames).
        static func runs(_ kinds: [Kind]) -> [(Kind, Int)] {
            kinds.reduce(into: []) { runs, kind in
                if let last = runs.last, last.0 == kind { runs[runs.count - 1].1 += 1 } else { runs.append((kind, 1)) }
            }
        }

        /// What was recorded in order: the runs' kinds, without what an xrun makes (a cycle of
        /// silence or of another's signal per xrun) and with neighbours of one kind merged.
        /// (A sine's zero crossing is a silent frame: a silent run of one frame counts for nothing.)
        static func order(_ runs: [(Kind, Int)], xruns: Int) -> [Kind] {
            let kept = runs.filter { $0.0 != .other && $0.0 != .oneChannel && !($0.0 == .silent && $0.1 <= max(1, 128 * xruns)) }.map(\.0)
            return Self.runs(kept).map(\.0)
        }

        @Test("--follow -c 2: a generator connected by the test after the start, disconnected, a sine generator connected, closed and started again under its name: the file is silence, then the signal bit-exact, silence, the sine bit-exact, silence, the sine again (reconnected by aqjack); nothing else but a cycle per xrun; the reconnection and the frames without a source counted")
        func follow() throws {
            let sine = GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.5, sampleRate: 48000)
            let path = temporaryPath("follow.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let name = TestServer.uniqueClientName("followrec")
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "--follow", "-c", "2", "-d", "5", "--name", name, path],
                                                   standardOutput: URL(fileURLWithPath: path + ".json"), standardError: URL(fileURLWithPath: path + ".err"))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let first = try GeneratorClient(name: TestServer.uniqueClientName("followgen"), channelCount: 2)
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, first.client.portInfo(named: "\(name):in_2") == nil { usleep(20_000) }
            usleep(500_000)
            for channel in 1 ... 2 { try first.client.connect("\(first.client.name):out_\(channel)", to: "\(name):in_\(channel)") }
            usleep(800_000)
            for channel in 1 ... 2 { try first.client.disconnect("\(first.client.name):out_\(channel)", from: "\(name):in_\(channel)") }
            usleep(300_000)
            let sineName = TestServer.uniqueClientName("followsine")
            var second: GeneratorClient? = try GeneratorClient(name: sineName, channelCount: 2, wavePeriod: sine)
            for channel in 1 ... 2 { try second!.client.connect("\(sineName):out_\(channel)", to: "\(name):in_\(channel)") }
            usleep(700_000)
            second?.client.close()
            second = nil
            usleep(400_000)
            let again = try GeneratorClient(name: sineName, channelCount: 2, wavePeriod: sine)
            let exit = recorder.exitStatus()
            withExtendedLifetime(again) {}
            let errors = (try? String(contentsOfFile: path + ".err", encoding: .utf8)) ?? ""
            #expect(exit.status == 0, "\(errors)")
            let data = try Data(contentsOf: URL(fileURLWithPath: path + ".json"))
            let summary = try JSONDecoder().decode(RecordSummary.self, from: data)
            let fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let runs = Self.runs(Self.kinds(try SoundFileContents(path: path), sine: sine))
            // Nothing but a cycle per xrun is neither silence nor its signal; a connection's cycle
            // may have one channel connected before the other (the test's two, aqjack's
            // reconnections): without xruns one cycle each, with them one stretch each (a test
            // thread held up between its two connects, as in a CI run with 3,235 xruns: 256 frames).
            let other = runs.filter { $0.0 == .other }.reduce(0) { $0 + $1.1 }
            let oneChannel = runs.filter { $0.0 == .oneChannel }
            let connections = 2 + (fields["reconnections"] as? Int ?? 0)
            let oneChannelWithin = summary.xruns == 0 ? oneChannel.reduce(0) { $0 + $1.1 } <= connections * 128 : oneChannel.count <= connections
            #expect(other <= summary.xruns * 128 && oneChannelWithin, "runs \(Self.describe(runs))")
            #expect(Self.order(runs, xruns: summary.xruns) == [.silent, .signal, .silent, .sine, .silent, .sine], "runs \(Self.describe(runs))")
            #expect((fields["reconnections"] as? Int ?? 0) >= 1 && (fields["sourcelessFrames"] as? Int ?? 0) >= 9600, "\(fields)")
        }

        @Test("-p 'GEN:out_*' --auto-connect -c 2: a generator started 1 s after aqjack, closed and started again: both runs recorded bit-exact, silence before and between, the frames without a source counted (at least the 1.3 s they were missing)")
        func autoConnect() throws {
            let path = temporaryPath("autoconnect.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let name = TestServer.uniqueClientName("autorec"), generatorName = TestServer.uniqueClientName("autogen")
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-p", "\(generatorName):out_*", "--auto-connect", "-c", "2", "-d", "4",
                                                    "--name", name, path],
                                                   standardOutput: URL(fileURLWithPath: path + ".json"), standardError: URL(fileURLWithPath: path + ".err"))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            usleep(1_000_000)
            var generator: GeneratorClient? = try GeneratorClient(name: generatorName, channelCount: 2)
            usleep(1_000_000)
            generator?.client.close()
            generator = nil
            usleep(500_000)
            generator = try GeneratorClient(name: generatorName, channelCount: 2)
            let exit = recorder.exitStatus()
            generator = nil
            #expect(exit.status == 0, "\((try? String(contentsOfFile: path + ".err", encoding: .utf8)) ?? "")")
            let data = try Data(contentsOf: URL(fileURLWithPath: path + ".json"))
            let summary = try JSONDecoder().decode(RecordSummary.self, from: data)
            let fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let runs = Self.runs(Self.kinds(try SoundFileContents(path: path), sine: [1]))
            // Nothing but a cycle per xrun is neither silence nor its signal; a connection's cycle
            // may have one channel connected before the other.
            let other = runs.filter { $0.0 == .other }.reduce(0) { $0 + $1.1 }
            let oneChannel = runs.filter { $0.0 == .oneChannel }.reduce(0) { $0 + $1.1 }
            let connections = fields["reconnections"] as? Int ?? 0
            #expect(other <= summary.xruns * 128 && oneChannel <= connections * 128, "runs \(Self.describe(runs))")
            #expect(Self.order(runs, xruns: summary.xruns) == [.silent, .signal, .silent, .signal], "runs \(Self.describe(runs))")
            #expect((fields["sourcelessFrames"] as? Int ?? 0) >= 62_400 && (fields["reconnections"] as? Int ?? 0) >= 2, "\(fields)")
        }

        @Test("--latency-offset 480: the file's TimeReference is 480 frames before the JACK frame its first sample was played at (the test signal matches at TimeReference + 480)")
        func latencyOffset() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("offsetgen"), channelCount: 2)
            let path = temporaryPath("offset.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--latency-offset", "480", "-d", "1",
                                                "--name", TestServer.uniqueClientName("offsetrec"), path])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            let kinds = Self.kinds(try SoundFileContents(path: path), sine: [1], offset: 480)
            #expect(kinds.filter { $0 == .signal }.count >= 48_000 - summary.xruns * 128 && !kinds.contains(.other), "\(Self.describe(Self.runs(kinds)))")
        }
    }
}
