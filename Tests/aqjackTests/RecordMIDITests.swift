import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack record -m: MIDI beside the audio")
    struct RecordMIDITests {
        /// The events of a Standard MIDI File read by mido (python3-mido): per track after the
        /// tempo track, (absolute tick, bytes); and the header's division and the tempo.
        static func readWithMido(_ path: String) throws -> (division: Int, tempo: Int, tracks: [[(tick: Int, bytes: [Int])]]) {
            let script = """
            import json, sys, mido
            f = mido.MidiFile(sys.argv[1])
            tempo = next((m.tempo for m in f.tracks[0] if m.type == 'set_tempo'), 0)
            tracks = []
            for track in f.tracks[1:]:
                tick, events = 0, []
                for m in track:
                    tick += m.time
                    if not m.is_meta: events.append([tick, m.bytes()])
                tracks.append(events)
            print(json.dumps({"division": f.ticks_per_beat, "tempo": tempo, "tracks": tracks}))
            """
            let result = try ExternalTool.run("/usr/bin/python3", ["-c", script, path])
            let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any] ?? [:]
            let tracks = (object["tracks"] as? [[[Any]]] ?? []).map { track in
                track.map { (tick: $0[0] as? Int ?? -1, bytes: $0[1] as? [Int] ?? []) }
            }
            return (object["division"] as? Int ?? 0, object["tempo"] as? Int ?? 0, tracks)
        }

        @Test("-m with --split 0.5 -d 4: notes played at known JACK frames by a MIDI client are in the .mid beside each part at tick = frame - the part's first frame (mido reads them; 24000 ticks a quarter at 500000 us: one tick one frame); a note sounding across a boundary is turned off at the part's last tick and on again at the next part's tick 0; the summary lists the .mid files and counts the events")
        func midiBesideAudio() throws {
            let control = try GeneratorClient(name: TestServer.uniqueClientName("midiclock"), channelCount: 1)
            // 2 s ahead: aqjack's start (a process to launch) comes before the first note.
            let base = UInt64(control.client.estimatedFrameTime) + 96_000
            // A short note, a long one (0.8 s: across at least one 0.5 s boundary), a last one.
            let notes: [(frame: UInt64, bytes: [UInt8])] = [
                (base + 4_801, [0x90, 60, 100]), (base + 7_201, [0x80, 60, 0]),
                (base + 14_407, [0x91, 64, 90]), (base + 52_807, [0x81, 64, 0]),
                (base + 60_013, [0x90, 67, 80]), (base + 61_013, [0x80, 67, 0]),
            ]
            let player = try MIDINoteClient(name: TestServer.uniqueClientName("midiplay"), messages: notes)
            let folder = temporaryPath("midi")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let result = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(control.client.name):out_1", "-m", player.portName,
                                                "--split", "0.5", "-d", "4", "--name", TestServer.uniqueClientName("midirec"), folder + "/take.wav"])
            #expect(result.status == 0, "\(result.standardError)")
            let data = Data(result.standardOutput.utf8)
            let summary = try JSONDecoder().decode(RecordSummary.self, from: data)
            let fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let start = try #require(summary.startFrameTime)
            #expect(start < base, "the recording began at \(start), after the first note's frame \(base + 4801)")
            let midiFiles = fields["midiFiles"] as? [String] ?? []
            #expect(midiFiles == summary.files.map { ($0 as NSString).deletingPathExtension + ".mid" }, "\(midiFiles) for \(summary.files)")
            #expect(fields["midiEvents"] as? Int == 6 && fields["midiLostEvents"] as? Int == 0, "\(fields)")
            var reopened = 0
            for (index, path) in midiFiles.enumerated() {
                let partStart = Int64(start) + Int64(index) * 24_000
                let partEnd = partStart + Int64(try SoundFileContents(path: summary.files[index]).frames)
                let (division, tempo, tracks) = try Self.readWithMido(path)
                #expect(division == 24_000 && tempo == 500_000 && tracks.count == 1, "\(path): division \(division), tempo \(tempo), \(tracks.count) tracks")
                // Expected: the notes in the part at their frames; the long note on at tick 0 when it
                // began before the part, off at the part's end when it goes on past it.
                // Any of the three notes may cross a boundary (the short ones when the recording's
                // start puts a boundary between their frames: CI saw the first one do so).
                var expected: [(tick: Int, bytes: [Int])] = []
                for pair in stride(from: 0, to: notes.count, by: 2) where Int64(notes[pair].frame) < partStart && Int64(notes[pair + 1].frame) >= partStart {
                    expected.append((0, notes[pair].bytes.map(Int.init)))
                    if pair == 2 { reopened += 1 }
                }
                for note in notes where Int64(note.frame) >= partStart && Int64(note.frame) < partEnd {
                    expected.append((Int(Int64(note.frame) - partStart), note.bytes.map(Int.init)))
                }
                for pair in stride(from: 0, to: notes.count, by: 2) where Int64(notes[pair].frame) < partEnd && Int64(notes[pair + 1].frame) >= partEnd {
                    expected.append((Int(partEnd - partStart), notes[pair + 1].bytes.map(Int.init)))
                }
                let got = tracks.first ?? []
                #expect(got.map(\.tick) == expected.map(\.tick) && got.map(\.bytes) == expected.map(\.bytes),
                        "\(path): got \(got), expected \(expected)")
            }
            #expect(reopened >= 1, "the long note crossed no boundary")
        }

        /// The events a recording's `.mid` should hold: those of `notes` in the frames
        /// `start ..< end` at tick = frame - start, a note sounding at `start` turned on at tick
        /// 0 and one sounding at `end` turned off there.
        static func expected(_ notes: [(frame: UInt64, bytes: [UInt8])], start: UInt64, end: UInt64) -> [(tick: Int, bytes: [Int])] {
            var sounding: [UInt8: UInt8] = [:]   // key → velocity (one channel)
            var result: [(tick: Int, bytes: [Int])] = []
            for note in notes where note.frame < start {
                if note.bytes[0] & 0xF0 == 0x90 { sounding[note.bytes[1]] = note.bytes[2] } else { sounding[note.bytes[1]] = nil }
            }
            for (key, velocity) in sounding.sorted(by: { $0.key < $1.key }) { result.append((0, [0x90, Int(key), Int(velocity)])) }
            for note in notes where note.frame >= start && note.frame < end {
                result.append((Int(note.frame - start), note.bytes.map(Int.init)))
                if note.bytes[0] & 0xF0 == 0x90 { sounding[note.bytes[1]] = note.bytes[2] } else { sounding[note.bytes[1]] = nil }
            }
            for key in sounding.keys.sorted() { result.append((Int(end - start), [0x80, Int(key), 0])) }
            return result
        }

        @Test("-m with --transport --stems: one take from the roll's first frame to its stop; stems take.NAME.wav and one take.mid beside them holding the notes of the roll at tick = frame - the roll's first frame, the note sounding at the start on at tick 0, the one sounding at the stop off at the last tick; the notes before the roll not in it")
        func midiWithTransportAndStems() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("mtgen"), channelCount: 2)
            let control = generator.client
            control.stopTransport()
            try control.locateTransport(to: 0)
            let base = UInt64(control.estimatedFrameTime) + 96_000
            // Before the roll (at about base + 36000), across its start, inside it, across its
            // stop (at about base + 108000).
            let notes: [(frame: UInt64, bytes: [UInt8])] = [
                (base, [0x90, 60, 100]), (base + 12_000, [0x80, 60, 0]),
                (base + 24_011, [0x90, 62, 90]), (base + 48_013, [0x80, 62, 0]),
                (base + 60_017, [0x90, 64, 80]), (base + 72_019, [0x80, 64, 0]),
                (base + 96_023, [0x90, 65, 70]), (base + 120_029, [0x80, 65, 0]),
            ]
            let player = try MIDINoteClient(name: TestServer.uniqueClientName("mtplay"), messages: notes)
            let folder = temporaryPath("midi-transport")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let name = TestServer.uniqueClientName("mtrec")
            let recorder = try RecordTransportTests.startRecorder(["--transport", "--stems", "-m", player.portName, folder + "/take.wav"],
                                                                  generator: generator, name: name, folder: folder, control: control)
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            func sleep(untilFrame frame: UInt64) {
                let now = UInt64(control.estimatedFrameTime)
                if frame > now { usleep(UInt32((frame - now) * 1_000_000 / 48_000)) }
            }
            sleep(untilFrame: base + 36_000)
            control.startTransport()
            sleep(untilFrame: base + 108_000)
            control.stopTransport()
            let exit = recorder.exitStatus(within: 30)
            #expect(exit.status == 0, "\((try? String(contentsOfFile: folder + "/err.txt", encoding: .utf8)) ?? "")")
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/out.json"))
            let summary = try JSONDecoder().decode(RecordSummary.self, from: data)
            let fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let stems = [folder + "/take.\(generator.client.name)_out_1.wav", folder + "/take.\(generator.client.name)_out_2.wav"]
            #expect(summary.files == stems)
            #expect(fields["midiFiles"] as? [String] == [folder + "/take.mid"], "\(fields)")
            let start = try #require(summary.startFrameTime)
            let end = start + UInt64(try SoundFileContents(path: stems[0]).frames)
            // The roll and its stop fell where the notes test them (sleeps, not frames).
            #expect(start > base + 12_000 && start < base + 48_000 && end > base + 96_023 && end < base + 120_029, "roll \(start) ..< \(end), base \(base)")
            let want = Self.expected(notes, start: start, end: end)
            let got = try Self.readWithMido(folder + "/take.mid").tracks.first ?? []
            #expect(got.map(\.tick) == want.map(\.tick) && got.map(\.bytes) == want.map(\.bytes), "got \(got), expected \(want)")
        }

        @Test("record -m killed with SIGKILL: the .mid beside the file is already there, checkpointed while recording (every 250 ms when events came), and mido reads the notes played until 0.7 s before the kill at tick = frame - the file's TimeReference, the note still sounding turned off one tick after the last event")
        func midiSurvivesKill() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("mkgen"), channelCount: 2)
            let control = generator.client
            let base = UInt64(control.estimatedFrameTime) + 96_000
            let notes: [(frame: UInt64, bytes: [UInt8])] = [
                (base + 4_801, [0x90, 60, 100]), (base + 7_201, [0x80, 60, 0]), (base + 14_407, [0x90, 64, 90]),
            ]
            let player = try MIDINoteClient(name: TestServer.uniqueClientName("mkplay"), messages: notes)
            let folder = temporaryPath("midi-kill")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let recorder = try RecordTransportTests.startRecorder(["-m", player.portName, folder + "/take.wav"], generator: generator,
                                                                  name: TestServer.uniqueClientName("mkrec"), folder: folder, control: control)
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let killAt = base + 48_000
            let now = UInt64(control.estimatedFrameTime)
            if killAt > now { usleep(UInt32((killAt - now) * 1_000_000 / 48_000)) }
            kill(recorder.processIdentifier, SIGKILL)
            _ = recorder.exitStatus(within: 10)
            let start = try #require(try SoundFileContents(path: folder + "/take.wav").timeReference.map(UInt64.init), "no TimeReference in the killed take")
            #expect(start < base, "the recording began at \(start), after the first note at \(base + 4801)")
            let got = try Self.readWithMido(folder + "/take.mid").tracks.first ?? []
            var want = notes.map { (tick: Int($0.frame - start), bytes: $0.bytes.map(Int.init)) }
            want.append((Int(notes[2].frame - start) + 1, [0x80, 64, 0]))
            #expect(got.map(\.tick) == want.map(\.tick) && got.map(\.bytes) == want.map(\.bytes), "got \(got), expected \(want)")
        }

        @Test("record -m --split 1 killed with SIGKILL in its third or fourth part: every part has its .mid (the finished ones whole, the open one checkpointed), and mido reads in each the notes of its frames at tick = frame - the part's TimeReference, notes sounding across a part's start turned on at tick 0 and at its end (or the open part's last event) turned off there")
        func splitPartsSurviveKill() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("mkgen"), channelCount: 2)
            let control = generator.client
            let base = UInt64(control.estimatedFrameTime) + 96_000
            let notes: [(frame: UInt64, bytes: [UInt8])] = [
                (base + 4_801, [0x90, 60, 100]), (base + 7_201, [0x80, 60, 0]), (base + 50_003, [0x90, 64, 90]),
                (base + 70_005, [0x80, 64, 0]), (base + 100_007, [0x90, 67, 80]),
            ]
            let player = try MIDINoteClient(name: TestServer.uniqueClientName("mkplay"), messages: notes)
            let folder = temporaryPath("midi-split-kill")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let recorder = try RecordTransportTests.startRecorder(["-m", player.portName, "--split", "1", folder + "/take.wav"], generator: generator,
                                                                  name: TestServer.uniqueClientName("mkrec"), folder: folder, control: control)
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            // 0.75 s after the last note: its checkpoint (every 250 ms) is written by then.
            let killAt = base + 136_000
            let now = UInt64(control.estimatedFrameTime)
            if killAt > now { usleep(UInt32((killAt - now) * 1_000_000 / 48_000)) }
            kill(recorder.processIdentifier, SIGKILL)
            _ = recorder.exitStatus(within: 10)
            let parts = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".wav") }.sorted()
            #expect(parts.count >= 3, "parts: \(parts)")
            let last = notes.map(\.frame).max()!
            for (index, part) in parts.enumerated() {
                let audio = folder + "/" + part
                let start = try #require(try SoundFileContents(path: audio).timeReference.map(UInt64.init), "no TimeReference in \(part)")
                // A finished part holds one second; the open one reaches its last event.
                let end = index < parts.count - 1 ? start + 48_000 : max(start, last + 1)
                var sounding: [UInt8: UInt8] = [:]
                for note in notes where note.frame < start { if note.bytes[0] == 0x90 { sounding[note.bytes[1]] = note.bytes[2] } else { sounding[note.bytes[1]] = nil } }
                var want = sounding.keys.sorted().map { (tick: 0, bytes: [0x90, Int($0), Int(sounding[$0]!)]) }
                for note in notes where note.frame >= start && note.frame < end {
                    want.append((Int(note.frame - start), note.bytes.map(Int.init)))
                    if note.bytes[0] == 0x90 { sounding[note.bytes[1]] = note.bytes[2] } else { sounding[note.bytes[1]] = nil }
                }
                want += sounding.keys.sorted().map { (tick: Int(end - start), bytes: [0x80, Int($0), 0]) }
                let midi = (audio as NSString).deletingPathExtension + ".mid"
                #expect(FileManager.default.fileExists(atPath: midi), "no \(midi)")
                let got = try Self.readWithMido(midi).tracks.first ?? []
                #expect(got.map(\.tick) == want.map(\.tick) && got.map(\.bytes) == want.map(\.bytes), "\(part): got \(got), expected \(want)")
            }
        }

        @Test("record -m --trigger -40 --hold 0.25 --pre-roll 0.1: each take's .mid holds the events of the take's frames at tick = frame - its TimeReference (its first JACK frame), a note sounding into a take turned on at tick 0 and one still sounding at its end turned off there; the events between the takes are in neither")
        func triggeredTakes() throws {
            let loud = [24_000 ..< 48_000, 96_000 ..< 108_000]
            let folder = temporaryPath("midi-trigger")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let source = folder + "/source.wav"
            try RecordTriggerTests.writeSource(source, frames: 150_000, loud: loud)
            let control = try GeneratorClient(name: TestServer.uniqueClientName("mtclock"), channelCount: 1)
            let start = UInt64(control.client.estimatedFrameTime) + 3 * 48000
            // Takes: file frames 19,200 ..< 60,000 and 91,200 ..< 120,000 (pre-roll 4,800, hold 12,000).
            let notes: [(frame: UInt64, bytes: [UInt8])] = [
                (start + 10_000, [0x90, 60, 100]), (start + 30_001, [0x80, 60, 0]), (start + 50_003, [0xB0, 7, 99]),
                (start + 70_005, [0x90, 62, 90]), (start + 72_007, [0x80, 62, 0]), (start + 100_009, [0x90, 64, 80]),
            ]
            let notePlayer = try MIDINoteClient(name: TestServer.uniqueClientName("mtnotes"), messages: notes)
            let playerName = TestServer.uniqueClientName("mtplay")
            let player = try AQJackCommand.start(["play", "--json", "--no-connect", "--start-at", "\(start)", "--name", playerName, source],
                                                 standardOutput: URL(fileURLWithPath: folder + "/play.json"), standardError: URL(fileURLWithPath: folder + "/play.err"))
            defer { if player.isRunning { kill(player.processIdentifier, SIGKILL) } }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, control.client.portInfo(named: "\(playerName):out_2") == nil { usleep(20_000) }
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-p", "\(playerName):out_*", "-m", notePlayer.portName,
                                                    "--trigger", "-40", "--hold", "0.25", "--pre-roll", "0.1",
                                                    "--name", TestServer.uniqueClientName("mtrec"), folder + "/take.wav"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: folder + "/rec.err"))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            _ = player.exitStatus()
            usleep(500_000)
            kill(recorder.processIdentifier, SIGTERM)
            #expect(recorder.exitStatus().status == 0, "\((try? String(contentsOfFile: folder + "/rec.err", encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/rec.json")))
            try #require(summary.files == [folder + "/take-001.wav", folder + "/take-002.wav"], "files \(summary.files)")
            for path in summary.files {
                let take = try SoundFileContents(path: path)
                let first = try #require(take.timeReference.map(UInt64.init), "no TimeReference in \(path)")
                let end = first + UInt64(take.frames)
                var sounding: [UInt8: UInt8] = [:]
                func track(_ bytes: [UInt8]) {
                    if bytes[0] == 0x90 { sounding[bytes[1]] = bytes[2] } else if bytes[0] == 0x80 { sounding[bytes[1]] = nil }
                }
                for note in notes where note.frame < first { track(note.bytes) }
                var want = sounding.keys.sorted().map { (tick: 0, bytes: [0x90, Int($0), Int(sounding[$0]!)]) }
                for note in notes where note.frame >= first && note.frame < end {
                    want.append((Int(note.frame - first), note.bytes.map(Int.init)))
                    track(note.bytes)
                }
                want += sounding.keys.sorted().map { (tick: take.frames, bytes: [0x80, Int($0), 0]) }
                let got = try Self.readWithMido((path as NSString).deletingPathExtension + ".mid").tracks.first ?? []
                #expect(got.map(\.tick) == want.map(\.tick) && got.map(\.bytes) == want.map(\.bytes), "\(path) from \(first): got \(got), expected \(want)")
            }
            let fields = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/rec.json"))) as? [String: Any] ?? [:]
            #expect(fields["midiEvents"] as? Int == notes.count && fields["midiLostEvents"] as? Int == 0, "\(fields)")
        }

        @Test("record -m, then play the .mid: a MIDI client hears every recorded event at the play's start + its tick, frame for frame as it was played into the recording (start-relative)")
        func recordThenPlay() throws {
            let control = try GeneratorClient(name: TestServer.uniqueClientName("rtclock"), channelCount: 1)
            let base = UInt64(control.client.estimatedFrameTime) + 96_000
            let notes: [(frame: UInt64, bytes: [UInt8])] = [
                (base + 1_001, [0x90, 60, 100]), (base + 3_003, [0xB0, 7, 99]), (base + 9_005, [0x80, 60, 0]),
                (base + 20_007, [0x90, 72, 64]), (base + 20_008, [0x80, 72, 0]), (base + 40_009, [0xE0, 0, 80]),
            ]
            let player = try MIDINoteClient(name: TestServer.uniqueClientName("rtnotes"), messages: notes)
            let folder = temporaryPath("midi-roundtrip")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let recorded = try AQJackCommand.run(["record", "--json", "--no-meter", "-p", "\(control.client.name):out_1", "-m", player.portName,
                                                  "-d", "3", "--name", TestServer.uniqueClientName("rtrec"), folder + "/take.wav"])
            #expect(recorded.status == 0, "\(recorded.standardError)")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(recorded.standardOutput.utf8))
            let recordStart = try #require(summary.startFrameTime)
            let capture = try MIDICaptureClient(name: TestServer.uniqueClientName("rtcap"))
            let played = try AQJackCommand.run(["play", "--json", "-p", capture.portName, "--name", TestServer.uniqueClientName("rtplay"), folder + "/take.mid"])
            #expect(played.status == 0, "\(played.standardError)")
            let playSummary = try #require(try JSONSerialization.jsonObject(with: Data(played.standardOutput.utf8)) as? [String: Any])
            let playStart = try #require(playSummary["startFrameTime"] as? Int)
            let late = playSummary["lateEvents"] as? Int ?? -1
            #expect(playSummary["events"] as? Int == notes.count, "\(playSummary)")
            let got = capture.events.map { (frame: Int($0.frame) - playStart, bytes: $0.bytes) }
            let want = notes.map { (frame: Int($0.frame - recordStart), bytes: $0.bytes) }
            #expect(got.map(\.bytes) == want.map(\.bytes), "heard \(got), played \(want)")
            // Every event at its frame; one the server's skipped cycles made late is counted so.
            let off = zip(got, want).filter { $0.frame != $1.frame }.count
            #expect(off <= late && late <= (playSummary["xruns"] as? Int ?? 0) * notes.count, "heard \(got.map(\.frame)), played \(want.map(\.frame)), \(late) late")
        }
    }
}
