import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack play FILE.mid: a Standard MIDI File to JACK MIDI ports")
    struct PlayMIDITests {
        /// Writes a MIDI file with mido (python3-mido) from a Python expression building `f`, a
        /// `mido.MidiFile`, and returns what mido says it holds: each non-meta message's time in
        /// seconds from the start (through the tempo map) and its bytes.
        static func writeWithMido(_ path: String, _ build: String) throws -> [(seconds: Double, bytes: [Int])] {
            let script = """
            import json, sys, mido
            from mido import MidiFile, MidiTrack, Message, MetaMessage
            \(build)
            f.save(sys.argv[1])
            t, out = 0.0, []
            for m in MidiFile(sys.argv[1]):
                t += m.time
                if not m.is_meta: out.append([t, m.bytes()])
            print(json.dumps(out))
            """
            let result = try ExternalTool.run("/usr/bin/python3", ["-c", script, path])
            let rows = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[Any]] ?? []
            return rows.map { (seconds: ($0[0] as? NSNumber)?.doubleValue ?? -1, bytes: $0[1] as? [Int] ?? []) }
        }

        /// A format 1 file at 480 ticks a quarter with a tempo change (120 then 240 bpm at tick
        /// 960) and two tracks: notes on one; a program change, a SysEx, a controller and a pitch
        /// bend on the other.
        static let tempoMapFile = """
        f = MidiFile(type=1, ticks_per_beat=480)
        t0, t1, t2 = MidiTrack(), MidiTrack(), MidiTrack()
        f.tracks += [t0, t1, t2]
        t0.append(MetaMessage('set_tempo', tempo=500000, time=0))
        t0.append(MetaMessage('set_tempo', tempo=250000, time=960))
        t1.append(Message('note_on', note=60, velocity=100, time=0))
        t1.append(Message('note_off', note=60, velocity=0, time=480))
        t1.append(Message('note_on', channel=3, note=64, velocity=90, time=720))
        t1.append(Message('note_off', channel=3, note=64, velocity=0, time=241))
        t2.append(Message('sysex', data=[0x7E, 0x7F, 0x09, 0x01], time=100))
        t2.append(Message('program_change', program=5, time=140))
        t2.append(Message('control_change', control=7, value=99, time=763))
        t2.append(Message('pitchwheel', pitch=1000, time=997))
        """

        @Test("play a format 1 file with a tempo change to a MIDI capture client: every event (notes, program change, SysEx, controller, pitch bend) at its frame = the summary's start + mido's seconds × 48000, rounded; all sent, none late; exit 0")
        func playsAtFrames() throws {
            let path = temporaryPath("tempo-map.mid")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let expected = try Self.writeWithMido(path, Self.tempoMapFile)
            #expect(expected.count == 8, "mido read \(expected)")
            let capture = try MIDICaptureClient(name: TestServer.uniqueClientName("midicap"))
            let result = try AQJackCommand.run(["play", "--json", "-p", capture.portName, "--name", TestServer.uniqueClientName("midiplay"), path])
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            let start = try #require(summary["startFrameTime"] as? Int)
            let late = summary["lateEvents"] as? Int ?? -1
            #expect(summary["events"] as? Int == 8 && summary["sentEvents"] as? Int == 8 && summary["exitReason"] as? String == "end", "\(summary)")
            #expect(summary["format"] as? Int == 1 && summary["tracks"] as? Int == 3, "\(summary)")
            let got = capture.events
            #expect(got.count == expected.count, "captured \(got)")
            // Each event at its frame; one the server's skipped cycles made late is counted so.
            var wrong = 0
            for (event, want) in zip(got, expected) {
                let frame = Int(event.frame) - start
                let wantFrame = Int((want.seconds * 48000).rounded())
                let prefix = Array(want.bytes.prefix(3))
                #expect(event.bytes.prefix(prefix.count).map(Int.init) == prefix, "\(event) for \(want)")
                if frame != wantFrame { wrong += 1 }
            }
            #expect(wrong <= late && late <= (summary["xruns"] as? Int ?? 0) * 8, "\(wrong) events off their frame, \(late) counted late: \(got.map { Int($0.frame) - start }) for \(expected.map { Int(($0.seconds * 48000).rounded()) })")
        }

        @Test("SIGINT while a note sounds: the note is turned off before the client closes; exit 0, exitReason interrupt, 1 of 2 events sent")
        func interruptTurnsNotesOff() throws {
            let path = temporaryPath("long-note.mid")
            let out = URL(fileURLWithPath: temporaryPath("midiplay.out")), err = URL(fileURLWithPath: temporaryPath("midiplay.err"))
            defer { for file in [path, out.path, err.path] { try? FileManager.default.removeItem(atPath: file) } }
            _ = try Self.writeWithMido(path, """
            f = MidiFile(type=0, ticks_per_beat=96)
            t = MidiTrack()
            f.tracks.append(t)
            t.append(Message('note_on', channel=2, note=50, velocity=70, time=0))
            t.append(Message('note_off', channel=2, note=50, velocity=0, time=96 * 40))
            """)
            let capture = try MIDICaptureClient(name: TestServer.uniqueClientName("midicap"))
            let process = try AQJackCommand.start(["play", "--json", "-p", capture.portName, "--name", TestServer.uniqueClientName("midiplay"), path],
                                                  standardOutput: out, standardError: err)
            for _ in 0 ..< 500 where capture.events.isEmpty { usleep(10_000) }
            #expect(capture.events.count == 1, "no note-on within 5 s")
            kill(process.processIdentifier, SIGINT)
            let exit = process.exitStatus(within: 30)
            #expect(exit.status == 0, "\((try? String(contentsOf: err, encoding: .utf8)) ?? "")")
            let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any] ?? [:]
            #expect(summary["exitReason"] as? String == "interrupt" && summary["sentEvents"] as? Int == 1, "\(summary)")
            #expect(capture.events.map(\.bytes) == [[0x92, 50, 70], [0x82, 50, 0]], "\(capture.events)")
        }

        @Test("a damaged or unplayable MIDI file is refused with what is wrong (exit 1); a MIDI file with another file, or with --loop, is a usage error (exit 2)")
        func refusals() throws {
            let folder = temporaryPath("midi-bad")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let good = folder + "/good.mid"
            _ = try Self.writeWithMido(good, Self.tempoMapFile)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: good)))
            var format2 = bytes
            format2[9] = 2
            var longChunk = bytes
            longChunk[18 ..< 22] = [0x7F, 0, 0, 0]
            let cases: [(name: String, bytes: [UInt8], says: String)] = [
                ("text.mid", Array("hello, not MIDI".utf8), "does not start with a Standard MIDI File header"),
                ("cut.mid", Array(bytes.prefix(bytes.count - 9)), "claims"),
                ("format2.mid", format2, "format 2"),
                ("long.mid", longChunk, "claims 2130706432 bytes"),
            ]
            for bad in cases {
                let path = folder + "/" + bad.name
                FileManager.default.createFile(atPath: path, contents: Data(bad.bytes))
                let result = try AQJackCommand.run(["play", "--no-connect", path])
                #expect(result.status == 1 && result.standardError.contains("cannot play '\(path)'") && result.standardError.contains(bad.says),
                        "\(bad.name): \(result.status) \(result.standardError)")
            }
            let missing = try AQJackCommand.run(["play", folder + "/none.mid"])
            #expect(missing.status == 1 && missing.standardError.contains("No such file"), "\(missing.standardError)")
            let two = try AQJackCommand.run(["play", good, good])
            #expect(two.status == 2 && two.standardError.contains("one MIDI FILE"), "\(two.standardError)")
            let looped = try AQJackCommand.run(["play", "--loop", "2", good])
            #expect(looped.status == 2 && looped.standardError.contains("drop --transport, --loop"), "\(looped.standardError)")
        }
    }
}
