import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack record --name-format and --split-at")
    struct RecordWallClockTests {
        @Test("--split-at 2s --name-format 'part-%H%M%S' -d 5: parts cut at every even second of the wall clock (the first part's end within 1 ms of one, from the summary's startWallClock), each later part exactly 96000 frames until the last, named after its first frame's time as its bext OriginationTime says, TimeReferences continuous, every sample the test signal")
        func splitAtWallClock() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("wallgen"), channelCount: 2)
            let folder = temporaryPath("wallclock")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--split-at", "2s",
                                                "--name-format", "part-%H%M%S", "-d", "5", "--name", TestServer.uniqueClientName("wallrec"), folder + "/take.wav"])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let started = try #require((fields["startWallClock"] as? String).flatMap(formatter.date(from:)), "\(fields)")
            #expect(summary.files.count >= 3 && summary.files.count <= 4, "\(summary.files)")
            let parts = try summary.files.map { try SoundFileContents(path: $0) }
            #expect(parts.reduce(0) { $0 + $1.frames } == 240_000)
            // The first part ends on an even second of the local wall clock.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .current
            let end = started.addingTimeInterval(Double(parts[0].frames) / 48000)
            let sinceMidnight = end.timeIntervalSince(calendar.startOfDay(for: end))
            let offBoundary = min(sinceMidnight.truncatingRemainder(dividingBy: 2), 2 - sinceMidnight.truncatingRemainder(dividingBy: 2))
            #expect(offBoundary < 0.001, "first part \(parts[0].frames) frames from \(started): \(offBoundary) s off an even second")
            for (index, part) in parts.enumerated() {
                if index > 0 && index < parts.count - 1 { #expect(part.frames == 96_000, "part \(index + 1): \(part.frames) frames") }
                if index > 0 {
                    #expect(part.timeReference == parts[index - 1].timeReference.map { $0 + Int64(parts[index - 1].frames) })
                    // Named after its first frame: the bext OriginationTime, an even second.
                    // OriginationTime: bytes 330 ..< 338 of bext (after Description 256, Originator 32,
                    // OriginatorReference 32, OriginationDate 10).
                    let bext = try riffChunks(summary.files[index])["bext"] ?? []
                    let time = bext.count >= 338 ? String(decoding: bext[330 ..< 338], as: UTF8.self) : "none"
                    let name = (summary.files[index] as NSString).lastPathComponent
                    #expect(name == "part-" + time.replacingOccurrences(of: ":", with: "") + ".wav", "\(name) vs bext time \(time)")
                    #expect((Int(time.suffix(2)) ?? 1) % 2 == 0, "\(time)")
                }
                let check = verifyFloatRecording(part, channels: 2)
                // A cycle the generator missed (a server xrun) reaches the recorder stale: at most a
                // period of both channels per xrun.
                #expect(check.wrong <= summary.xruns * 128 * 2 && Int64(check.silent) <= summary.lostFrames, "\(summary.files[index]): \(check), \(summary.xruns) xruns")
            }
        }
    }
}
