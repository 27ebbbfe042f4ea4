import AQControl
import AQMedia
import AQServerSuite
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack record --silence-alarm, --min-free and the disk's time left")
    struct RecordAlarmTests {
        typealias OSCClient = RecordOSCTests.OSCClient

        /// The events of an NDJSON file (`--events FILE`), as dictionaries.
        static func events(in path: String) -> [[String: Any]] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        @Test("--silence-alarm -40 1 with --osc: a file played at a known JACK frame (sound, 2 s below -74 dBFS, sound, 0.5 s quiet, sound): the 2 s gives one 'silence' event dated to its first frame within one 0.1 s buffer and one 'sound' at the next loud frame within one buffer; the 0.5 s none; the same events in --events, to an OSC subscriber (/aqjack/event) and on standard error; the summary counts the alarms and the disk's time left")
        func silenceAlarm() throws {
            let loud = [0 ..< 24_000, 120_000 ..< 144_000, 168_000 ..< 192_000]
            let frames = 192_000
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-silence-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let source = folder + "/source.wav"
            try RecordTriggerTests.writeSource(source, frames: frames, loud: loud)

            let control = try GeneratorClient(name: TestServer.uniqueClientName("silclock"), channelCount: 1)
            let start = UInt64(control.client.estimatedFrameTime) + 4 * 48000
            let playerName = TestServer.uniqueClientName("silplay")
            let player = try AQJackCommand.start(["play", "--json", "--no-connect", "--start-at", "\(start)", "--name", playerName, source],
                                                 standardOutput: URL(fileURLWithPath: folder + "/play.json"), standardError: URL(fileURLWithPath: folder + "/play.err"))
            defer { if player.isRunning { kill(player.processIdentifier, SIGKILL) } }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, control.client.portInfo(named: "\(playerName):out_2") == nil { usleep(20_000) }
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-p", "\(playerName):out_*", "--silence-alarm", "-40", "1",
                                                    "--osc", "0", "--events", folder + "/events.ndjson", "--name", TestServer.uniqueClientName("silrec"),
                                                    folder + "/take.wav"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: folder + "/rec.err"))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let osc = OSCClient(port: try #require(RecordOSCTests.notedPort(in: folder + "/rec.err"), "no OSC port noted"))
            #expect(osc.send("/aqjack/subscribe")?.arguments == [.string("/aqjack/subscribe"), .string("ok")])
            // Every message until the recorder has gone quiet after the player: replies and events.
            var received: [OSCMessage] = []
            let played = player.exitStatus()
            #expect(played.status == 0)
            let until = Date().addingTimeInterval(1.6)
            while Date() < until, let message = osc.next() { received.append(message) }
            #expect(osc.send("/aqjack/quit")?.arguments == [.string("/aqjack/quit"), .string("ok")])
            let recorderExit = recorder.exitStatus()
            let errors = (try? String(contentsOfFile: folder + "/rec.err", encoding: .utf8)) ?? ""
            #expect(recorderExit.status == 0, "\(errors)")

            let summaryData = try Data(contentsOf: URL(fileURLWithPath: folder + "/rec.json"))
            let summary = try JSONDecoder().decode(RecordSummary.self, from: summaryData)
            let fields = try #require(try JSONSerialization.jsonObject(with: summaryData) as? [String: Any])
            let playSummary = try JSONDecoder().decode(PlaySummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/play.json")))
            // A cycle the server skipped moves the player's later frames a cycle later on the JACK clock.
            let skipped = Double(max(summary.xruns, playSummary.xruns) * 128)
            let buffer = 4800.0
            let events = Self.events(in: folder + "/events.ndjson").filter { ["silence", "sound"].contains($0["event"] as? String) }
            func frame(_ event: [String: Any]) -> Double { (event["frameTime"] as? NSNumber)?.doubleValue ?? -1 }
            let origin = Double(start)
            // Before the player starts its outputs are silent: an alarm, then sound at its first frame.
            let quiet = events.first { $0["event"] as? String == "silence" && frame($0) >= origin + 24_000 && frame($0) <= origin + 24_000 + buffer + skipped }
            let back = events.first { $0["event"] as? String == "sound" && frame($0) >= origin + 120_000 - buffer && frame($0) <= origin + 120_000 + skipped }
            #expect(quiet != nil && back != nil, "events \(events), start \(start)")
            if let back { #expect(abs(((back["silentSeconds"] as? NSNumber)?.doubleValue ?? 0) - 2) <= (buffer + skipped) / 48000 + 1e-9, "\(back)") }
            // The 0.5 s quiet run (frames 144000 ..< 168000) gives no alarm.
            #expect(!events.contains { $0["event"] as? String == "silence" && frame($0) > origin + 100_000 && frame($0) < origin + 168_000 }, "\(events)")
            // Each silence is followed by its sound, in order, up to the silence after the player.
            let names = events.map { $0["event"] as? String ?? "" }
            #expect(zip(names, names.dropFirst()).allSatisfy { $0 != $1 }, "\(names)")
            #expect(names.filter { $0 == "silence" }.count == fields["silenceAlarms"] as? Int, "\(names), summary \(fields)")

            // The subscriber got the same events as /aqjack/event NAME JSON.
            let sent = received.filter { $0.address == "/aqjack/event" }.compactMap { message -> String? in
                guard case .string(let name)? = message.arguments.first else { return nil }
                return name
            }.filter { ["silence", "sound"].contains($0) }
            #expect(sent == names, "OSC \(received)")
            #expect(errors.contains("silence: every channel below -40.0 dBFS for 1.") && errors.contains("sound again at"), "\(errors)")
            #expect(((fields["diskSecondsLeft"] as? NSNumber)?.doubleValue ?? 0) > 0 && ((fields["diskFreeBytes"] as? NSNumber)?.int64Value ?? 0) > 0, "\(fields)")
        }

        @Test("--min-free on a 16 MiB tmpfs with 16 float channels (3 MB/s): 1 minute is refused (exit 1) naming the free space, the time it holds and the minimum; 0.05 minutes records, warns once that the disk is running out as the time left falls under 3 s, posts disk-low, and the summary's time left is what the disk still holds")
        func minimumFree() throws {
            let disk = try SmallDisk(kilobytes: 16 * 1024)
            defer { disk.unmount() }
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("freegen"), channelCount: 16)
            let name = TestServer.uniqueClientName("freerec")
            let refused = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--min-free", "1", "-d", "1",
                                                 "--name", name, disk.path + "/refused.wav"])
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.standardError.contains("16 MiB free: 5 s at this recording's 2.9 MiB/s, less than --min-free 1 min"), "\(refused.standardError)")
            #expect(!FileManager.default.fileExists(atPath: disk.path + "/refused.wav"))

            let events = disk.path + "/events.ndjson"
            let recorded = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--min-free", "0.05", "-d", "3",
                                                  "--events", events, "--name", name, disk.path + "/take.wav"])
            #expect(recorded.status == 0, "\(recorded)")
            #expect(recorded.standardError.components(separatedBy: "the disk is running out").count == 2, "\(recorded.standardError)")
            let lows = Self.events(in: events).filter { $0["event"] as? String == "disk-low" }
            #expect(lows.count == 1 && ((lows.first?["secondsLeft"] as? NSNumber)?.doubleValue ?? 99) < 3, "\(lows)")
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(recorded.standardOutput.utf8)) as? [String: Any])
            let left = (fields["diskSecondsLeft"] as? NSNumber)?.doubleValue ?? -1
            // 16 MiB less the 3 s file (9.2 MB) and the events: about 2.4 s at 3.07 MB/s.
            #expect(left > 1.5 && left < 3, "\(fields)")
        }
    }
}
