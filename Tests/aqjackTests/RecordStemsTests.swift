import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack record --stems")
    struct RecordStemsTests {
        @Test("--stems --split 0.5 -d 1 on 8 generator channels (one with the pretty-name 'Kick / in'): 2 parts of 8 mono files each, named after the ports (take-001.GEN_out_1.wav ..., take-001.Kick_in.wav), every stem of a part the same length and TimeReference, the second part's 24000 frames on, each sample its channel's test signal bit for bit (silence only where frames were lost); iXML names each stem's track")
        func stems() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("stemgen"), channelCount: 8)
            try generator.client.setPrettyName("Kick / in", ofPort: "\(generator.client.name):out_3")
            // Removed at the end: a port's UUID is its slot on the server, and a name left behind
            // (a client the server dropped under load keeps its metadata) shows on a later port.
            defer { try? generator.client.setPrettyName(nil, ofPort: "\(generator.client.name):out_3") }
            let folder = temporaryPath("stems")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--stems", "--split", "0.5", "-d", "1",
                                                "--name", TestServer.uniqueClientName("stemrec"), folder + "/take.wav"])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            let names = (1 ... 8).map { $0 == 3 ? "Kick_in" : "\(generator.client.name):out_\($0)".replacingOccurrences(of: ":", with: "_") }
            let parts = (1 ... 2).map { part in names.map { "\(folder)/take-00\(part).\($0).wav" } }
            #expect(summary.files == parts.flatMap { $0 }, "\(summary.files)")
            var references: [Int64] = []
            var silentFrames = 0
            for part in parts {
                let stems = try part.map { try SoundFileContents(path: $0) }
                #expect(stems.allSatisfy { $0.channels == 1 && $0.frames == 24_000 }, "\(stems.map { ($0.channels, $0.frames) })")
                let reference = try #require(stems[0].timeReference)
                #expect(stems.allSatisfy { $0.timeReference == reference })
                references.append(reference)
                for (channel, stem) in stems.enumerated() {
                    var wrong = 0
                    for frame in 0 ..< stem.frames {
                        let expected = TestSignal.sample(channel: channel, frame: UInt32(truncatingIfNeeded: reference + Int64(frame)))
                        if stem.samples[frame] == 0 && expected != 0 {
                            if channel == 0 { silentFrames += 1 }
                        } else if stem.samples[frame].bitPattern != expected.bitPattern {
                            wrong += 1
                        }
                    }
                    // A cycle the generator missed (a server xrun) reaches the recorder stale.
                    #expect(wrong <= summary.xruns * 128, "\(part[channel]): \(wrong) wrong samples, \(summary.xruns) xruns")
                }
                let xml = String(decoding: try riffChunks(part[2])["iXML"] ?? [], as: UTF8.self)
                #expect(xml.contains("<TRACK_COUNT>1</TRACK_COUNT>") && xml.contains("<NAME>\(generator.client.name):out_3</NAME>"), "\(xml)")
            }
            #expect(references.count == 2 && references[1] == references[0] + 24_000, "\(references)")
            #expect(Int64(silentFrames) <= summary.lostFrames, "\(silentFrames) silent frames, \(summary.lostFrames) lost")
        }

        @Test("--stems --codec alac -b 16 -d 2 on 4 generator channels: 4 mono M4A stems of exactly 96000 frames (their edit lists, ffprobe), each its own channel's 16-bit signal bit-exact from the same first frame; to AAC (--bitrate 64000): 4 mono M4A stems of exactly 96000 frames")
        func compressedStems() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("cstemgen"), channelCount: 4, integerBits: 16)
            // No pretty-name an earlier port of the same UUID left (CI once named out_3's stem
            // after stems()'s 'Kick / in'): the stems are named after the ports.
            for channel in 1 ... 4 { try? generator.client.setPrettyName(nil, ofPort: "\(generator.client.name):out_\(channel)") }
            let folder = temporaryPath("compressed-stems")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let names = (1 ... 4).map { "\(generator.client.name)_out_\($0)" }
            for codec in [["--codec", "alac", "-b", "16"], ["--bitrate", "64000"]] {
                let base = folder + "/take-\(codec[0] == "--codec" ? "alac" : "aac")"
                let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--stems", "-d", "2",
                                                    "--name", TestServer.uniqueClientName("cstemrec")] + codec + [base + ".m4a"])
                #expect(result.status == 0, "\(result.standardError)")
                let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
                let stems = names.map { "\(base).\($0).m4a" }
                #expect(summary.files == stems, "\(summary.files)")
                var starts: Set<UInt32> = []
                for (channel, path) in stems.enumerated() {
                    let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "stream=channels,duration_ts", "-of", "csv=p=0", path])
                    #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "1,96000", "\(path): \(probe.standardOutput)")
                    guard codec[0] == "--codec" else { continue }
                    let decoded = Array(try ExternalTool.decodeWithFFmpeg(path).prefix(96_000))
                    let check = try #require(integerSignalCheck(decoded, channels: 1, bits: 16, firstChannel: channel), "\(path): no signal")
                    starts.insert(check.start)
                    #expect(check.wrongFrames <= summary.xruns * 128 && Int64(check.silentFrames) == summary.lostFrames, "\(path): \(check), \(summary.xruns) xruns, \(summary.lostFrames) lost")
                }
                if codec[0] == "--codec" { #expect(starts.count == 1, "the stems start at \(starts)") }
            }
        }
    }
}
