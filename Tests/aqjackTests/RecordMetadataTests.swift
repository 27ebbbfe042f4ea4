import AQServerSuite
import AQTestSupport
import Foundation
import Testing

/// The chunks of a RIFF or RF64 WAVE file, by id (the first of each), read by hand: the test's
/// own reader of what libsndfile wrote, independent of it.
func riffChunks(_ path: String) throws -> [String: [UInt8]] {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    func word(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
    guard bytes.count >= 12, ["RIFF", "RF64"].contains(String(decoding: bytes[0 ..< 4], as: UTF8.self)) else { return [:] }
    var chunks: [String: [UInt8]] = [:]
    var at = 12
    while at + 8 <= bytes.count {
        let id = String(decoding: bytes[at ..< at + 4], as: UTF8.self)
        // RF64's data size is in ds64; the data chunk is last here, so stop at it.
        if id == "data" { break }
        let size = word(at + 4)
        if chunks[id] == nil { chunks[id] = Array(bytes[at + 8 ..< min(bytes.count, at + 8 + size)]) }
        at += 8 + size + (size & 1)
    }
    return chunks
}

extension JackServerSuite {
    @Suite("aqjack record: Broadcast Wave bext and iXML")
    struct RecordMetadataTests {
        /// The text of an XML element in `xml` (the first).
        static func element(_ name: String, in xml: String) -> String? {
            guard let start = xml.range(of: "<\(name)>"), let end = xml.range(of: "</\(name)>", range: start.upperBound ..< xml.endIndex) else { return nil }
            return String(xml[start.upperBound ..< end.lowerBound])
        }

        @Test("--description --originator --project --scene --take --loudness to WAVE: ffprobe shows the bext fields (description, originator, a 32-character reference, the first frame's local date and time as in the summary's startWallClock, TimeReference); the test's RIFF reader finds bext version 2 whose loudness matches ffmpeg's ebur128 (integrated within 0.1 LU, true peak within 0.3 dB) and whose range, like ffmpeg's, is the signal's 13.98 LU step within 0.5 LU; iXML with project, scene, take and a track per source port; sox reads the file; --loudness to AIFF is refused (exit 2)")
        func bextAndIXML() throws {
            // A 1 kHz sine, 6 s at -6.02 dBFS then 6 s at -20 dBFS, over and over: 16 s of it hold
            // at least 3 s of 3-second windows wholly on each level, so the loudness range (the
            // 10th to the 95th percentile of short-term loudness) is the step, 20 log10(5) =
            // 13.98 LU, whether a meter takes short-term values every second (libebur128, which
            // writes the bext) or ten times a second (ffmpeg). Silence a skipped cycle leaves in a
            // window lowers it by less than 0.2 LU per 100 ms.
            let plateau = 288_000
            let wave = (0 ..< 2 * plateau).map { frame in Float(frame < plateau ? 0.5 : 0.1) * Float(sin(2 * Double.pi * Double(frame) / 48)) }
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("metagen"), channelCount: 2, wavePeriod: wave)
            let path = temporaryPath("metadata.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let before = Date()
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "-d", "16",
                                                "--description", "Gig at the hall", "--originator", "FOH desk", "--project", "Tour <2026>",
                                                "--scene", "S1", "--take", "7", "--loudness", "--name", TestServer.uniqueClientName("metarec"), path])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            let wallClock = try #require(fields["startWallClock"] as? String, "\(fields)")
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let started = try #require(formatter.date(from: wallClock))
            #expect(started.timeIntervalSince(before) > -0.5 && started.timeIntervalSince(before) < 3, "first frame at \(wallClock), command started \(before)")

            let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "json", path])
            let tags = ((try JSONSerialization.jsonObject(with: Data(probe.standardOutput.utf8)) as? [String: Any])?["format"] as? [String: Any])?["tags"] as? [String: String] ?? [:]
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .current
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: started)
            #expect(tags["comment"] == "Gig at the hall" && tags["encoded_by"] == "FOH desk", "\(tags)")
            #expect(tags["date"] == String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!), "\(tags)")
            #expect(tags["creation_time"] == String(format: "%02d:%02d:%02d", parts.hour!, parts.minute!, parts.second!), "\(tags)")
            #expect(tags["time_reference"] == summary.startFrameTime.map(String.init), "\(tags) vs \(String(describing: summary.startFrameTime))")
            #expect(tags["originator_reference"]?.count == 32 && tags["originator_reference"]?.hasPrefix("ZZAQJ") == true, "\(tags)")

            let chunks = try riffChunks(path)
            let bext = try #require(chunks["bext"])
            func int16(_ at: Int) -> Double { Double(Int16(bitPattern: UInt16(bext[at]) | UInt16(bext[at + 1]) << 8)) / 100 }
            #expect(bext.count >= 602 && bext[346] == 2, "bext version \(bext.count > 346 ? Int(bext[346]) : -1)")
            let integrated = int16(412), range = int16(414), truePeak = int16(416)
            let ebur = try ExternalTool.run("ffmpeg", ["-hide_banner", "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"])
            func summaryValue(_ label: String) -> Double? {
                guard let summaryStart = ebur.standardError.range(of: "Summary:") else { return nil }
                let text = ebur.standardError[summaryStart.upperBound...]
                guard let line = text.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }) else { return nil }
                return line.split(separator: " ").compactMap { Double($0) }.first
            }
            let ffmpegIntegrated = try #require(summaryValue("I:"), "\(ebur.standardError.suffix(600))")
            let ffmpegRange = try #require(summaryValue("LRA:")), ffmpegPeak = try #require(summaryValue("Peak:"))
            print("loudness: bext I \(integrated) LRA \(range) TP \(truePeak); ffmpeg I \(ffmpegIntegrated) LRA \(ffmpegRange) TP \(ffmpegPeak)")
            // Integrated loudness is one gated mean in both: within 0.1 LU. The range is the step in
            // both (ffmpeg's histogram has 0.1 LU bins, the bext field hundredths).
            let step = 20 * log10(5.0)
            #expect(abs(integrated - ffmpegIntegrated) <= 0.1 && abs(range - step) <= 0.5 && abs(ffmpegRange - step) <= 0.5 && abs(truePeak - ffmpegPeak) <= 0.3,
                    "bext I \(integrated) LRA \(range) TP \(truePeak); ffmpeg I \(ffmpegIntegrated) LRA \(ffmpegRange) TP \(ffmpegPeak); step \(step)")

            let xml = String(decoding: try #require(chunks["iXML"], "chunks \(chunks.keys.sorted())"), as: UTF8.self)
            #expect(Self.element("PROJECT", in: xml) == "Tour &lt;2026&gt;" && Self.element("SCENE", in: xml) == "S1" && Self.element("TAKE", in: xml) == "7", "\(xml)")
            #expect(Self.element("TRACK_COUNT", in: xml) == "2" && Self.element("FILE_SAMPLE_RATE", in: xml) == "48000", "\(xml)")
            let names = xml.components(separatedBy: "<NAME>").dropFirst().map { $0.components(separatedBy: "</NAME>")[0] }
            #expect(names == summary.ports && names == ["\(generator.client.name):out_1", "\(generator.client.name):out_2"], "\(names)")
            #expect(Self.element("TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO", in: xml) == summary.startFrameTime.map { String($0 & 0xFFFF_FFFF) }, "\(xml)")
            let sox = try ExternalTool.run("soxi", ["-s", path])
            #expect(sox.status == 0 && Int64(sox.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) == summary.frames, "\(sox)")

            let refused = try AQJackCommand.run(["record", "--loudness", "-d", "1", temporaryPath("loud.aiff")])
            #expect(refused.status == 2 && refused.standardError.contains("--loudness writes Broadcast Wave"), "\(refused.standardError)")
        }

        /// ffprobe's format tags of a file.
        static func tags(_ path: String) throws -> [String: String] {
            let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "json", path])
            return ((try JSONSerialization.jsonObject(with: Data(probe.standardOutput.utf8)) as? [String: Any])?["format"] as? [String: Any])?["tags"] as? [String: String] ?? [:]
        }

        @Test("the same names in CAF and MPEG-4: a linear PCM .caf and an AAC .caf split in two parts carry an 'info' chunk (title = take, album = project, artist = originator, comments = description, recorded date = the first frame's local time, scene, time reference = the part's first frame, a track per source port), an AAC .m4a iTunes tags (title, album, artist, comment, grouping = scene, date = the first frame in UTC), as ffprobe reads them; sox reads the PCM .caf")
        func cafAndMPEG4() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("tagsgen"), channelCount: 2)
            let folder = temporaryPath("container-tags")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let names = ["--description", "Desk feed", "--originator", "Studio B", "--project", "Film", "--scene", "12A", "--take", "3"]
            let sources = generator.portNames
            for (file, extra) in [("pcm.caf", []), ("aac.m4a", []), ("parts.caf", ["--codec", "aac", "--split", "0.5"])] {
                let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "-d", "1"] + extra + names
                                                   + ["--name", TestServer.uniqueClientName("tagsrec"), folder + "/" + file])
                #expect(result.status == 0, "\(file): \(result.standardError)")
                let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
                let fields = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                let started = try #require((fields["startWallClock"] as? String).flatMap(formatter.date(from:)), "\(fields)")
                let start = try #require(summary.startFrameTime)
                for (index, path) in summary.files.enumerated() {
                    let tags = try Self.tags(path)
                    #expect(tags["title"] == "3" && tags["album"] == "Film" && tags["artist"] == "Studio B", "\(path): \(tags)")
                    if path.hasSuffix(".caf") {
                        let local = DateFormatter()
                        local.locale = Locale(identifier: "en_US_POSIX")
                        local.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
                        #expect(tags["comments"] == "Desk feed" && tags["scene"] == "12A" && tags["encoding application"] == "aqjack", "\(path): \(tags)")
                        if index == 0 { #expect(tags["recorded date"] == local.string(from: started), "\(path): \(tags), first frame at \(started)") }
                        #expect(tags["time reference"] == String(start + UInt64(index) * 24_000), "\(path): \(tags), first frame \(start)")
                        #expect(tags["track 1"] == sources[0] && tags["track 2"] == sources[1], "\(path): \(tags)")
                        #expect(tags["originator reference"]?.hasPrefix("ZZAQJ") == true, "\(path): \(tags)")
                    } else {
                        let utc = ISO8601DateFormatter()
                        #expect(tags["comment"] == "Desk feed" && tags["grouping"] == "12A" && tags["date"] == utc.string(from: started), "\(path): \(tags), first frame at \(started)")
                    }
                }
                if file == "pcm.caf" { #expect(soxFrames(folder + "/" + file) == 48_000) }
                if file == "parts.caf" { #expect(summary.files.count == 2) }
            }
        }
    }
}
