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
                var expected: [(tick: Int, bytes: [Int])] = []
                let on = notes[2].frame, off = notes[3].frame
                if Int64(on) < partStart && Int64(off) >= partStart { expected.append((0, [0x91, 64, 90])); reopened += 1 }
                for note in notes where Int64(note.frame) >= partStart && Int64(note.frame) < partEnd {
                    expected.append((Int(Int64(note.frame) - partStart), note.bytes.map(Int.init)))
                }
                if Int64(on) < partEnd && Int64(off) >= partEnd { expected.append((Int(partEnd - partStart), [0x81, 64, 0])) }
                let got = tracks.first ?? []
                #expect(got.map(\.tick) == expected.map(\.tick) && got.map(\.bytes) == expected.map(\.bytes),
                        "\(path): got \(got), expected \(expected)")
            }
            #expect(reopened >= 1, "the long note crossed no boundary")
        }
    }
}
