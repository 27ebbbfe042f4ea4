import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack record --split and --on-file")
    struct RecordSplitTests {
        @Test("--split 1 over 10 s: 10 files of exactly 48000 frames, each with its own TimeReference (the frame after the last file's), every frame bit-exact but for cycles a server xrun left stale, none repeated; --on-file ran once per file, in order, with its JSON summary")
        func splitInFreewheel() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("splitgen"), channelCount: 2)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-split-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // Real time: aqjack record does not start in freewheel, and switching the server to
            // freewheel under an in-process generator made jackd loop on "Process error" (40 GB
            // of log): the freewheel data check of the issue is not done here (see the note).
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "-d", "10", "--split", "1",
                                                "--on-file", "cat >> '\(folder)/summaries'; printf '%s\\n' >> '\(folder)/paths'",
                                                "--name", TestServer.uniqueClientName("splitrec"), folder + "/take.wav"])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            let expected = (1 ... 10).map { folder + String(format: "/take-%03d.wav", $0) }
            #expect(summary.files == expected && summary.frames == 480_000)
            let start = try #require(summary.startFrameTime)
            var frames = 0
            for (index, path) in expected.enumerated() {
                let part = try SoundFileContents(path: path)
                #expect(part.frames == 48000, "\(path)")
                // Sample continuous: part k starts on the frame after part k-1's last.
                #expect(part.timeReference.map(UInt64.init) == start + UInt64(index * 48000), "\(path)")
                // Bit-exact but for cycles a server xrun left stale (the generator in this debug
                // test process late: at most one cycle per xrun); silence only for frames counted lost.
                let check = verifyFloatRecording(part, channels: 2)
                #expect(check.wrong <= summary.xruns * 128 * 2 && Int64(check.silent) <= summary.lostFrames, "\(path): \(check), \(summary.xruns) xruns")
                frames += part.frames
            }
            #expect(frames == 480_000)
            // The hook: every file once, in order, each with its JSON summary on stdin.
            let paths = try String(contentsOfFile: folder + "/paths", encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(paths == expected)
            let summaries = try String(contentsOfFile: folder + "/summaries", encoding: .utf8).split(separator: "\n")
            #expect(summaries.count == 10 && summaries.allSatisfy { $0.contains("\"frames\":48000") })
        }

        @Test("--split-size 96000 over 1 s of 2-channel float (8 bytes a frame): 4 files of exactly 12000 frames, sample continuous")
        func splitBySize() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("sizegen"), channelCount: 2)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-splitsize-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "-d", "1", "--split-size", "96000",
                                                "--name", TestServer.uniqueClientName("sizerec"), folder + "/take.wav"])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.files == (1 ... 4).map { folder + String(format: "/take-%03d.wav", $0) })
            let start = try #require(summary.startFrameTime)
            for (index, path) in summary.files.enumerated() {
                let part = try SoundFileContents(path: path)
                #expect(part.frames == 12000 && part.timeReference.map(UInt64.init) == start + UInt64(index * 12000), "\(path)")
            }
            let both = try AQJackCommand.run(["record", "--split", "1", "--split-size", "1000", "-d", "1", folder + "/x.wav"])
            #expect(both.status == 2 && both.standardError.contains("give one"), "\(both.standardError)")
        }

        @Test("--split refuses AAC and ALAC recordings with a message naming what it splits; a failing --on-file is reported, not fatal")
        func splitErrors() throws {
            let aac = try AQJackCommand.run(["record", "--split", "1", "-d", "1", temporaryPath("split.m4a")])
            #expect(aac.status == 2 && aac.standardError.contains("--split splits linear-PCM recordings"), "\(aac.standardError)")
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("hookgen"), channelCount: 1)
            let path = temporaryPath("hook.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let failing = try AQJackCommand.run(["record", "--json", "-p", "\(generator.client.name):out_1", "-d", "0.2", "--on-file", "false",
                                                 "--name", TestServer.uniqueClientName("hookrec"), path])
            #expect(failing.status == 0 && failing.standardError.contains("--on-file 'false' failed for \(path)"), "\(failing.standardError)")
        }
    }
}
