import AQJack
import AQServerSuite
import AQTestSupport
import AudioQueue
import Foundation
import Testing

extension JackServerSuite {
    /// `aqjack host` with plugins whose ports are not audio: CV ports as JACK audio ports marked
    /// control voltage, MIDI event outputs as JACK MIDI output ports.
    @Suite("aqjack host: CV ports and MIDI outputs")
    struct HostPortKindsTests {
        static let interpolator = "http://drobilla.net/plugins/blop/interpolator"
        static let transpose = "http://gareus.org/oss/lv2/midifilter#miditranspose"

        @Test("host blop's interpolator (CV output 'out'): jack_property shows the port's signal-type CV, aqjack ports says so, and a recording from it (-o) holds the control's value, 0.25, exactly from its second cycle")
        func controlVoltagePort() throws {
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "cvrec")
            let name = TestServer.uniqueClientName("hostcv")
            let (host, out, err) = try HostCommandTests.startHost([Self.interpolator, "--set", "in=0.25", "-o", "\(recorder.driver.name):in_1"],
                                                                  name: name, expectPort: "out")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let property = try ExternalTool.run("jack_property", ["--port", "-l", "\(name):out"])
            let ports = try AQJackCommand.run(["ports", "\(name):out"])
            usleep(700_000)
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            #expect(property.standardOutput.contains("key: http://jackaudio.org/metadata/signal-type value: CV"), "\(property.standardOutput)")
            #expect(ports.standardOutput.contains("signal-type: CV"), "\(ports.standardOutput)")
            // While connected the port carries 0.25 in every frame; before and after, the recorder
            // hears silence.
            let samples = log.deliveries.flatMap(\.samples)
            let first = samples.firstIndex { $0 != 0 } ?? 0, last = samples.lastIndex { $0 != 0 } ?? 0
            // (blop moves its output to a new value over one run, overshooting a little: the host's
            // first cycle glides from 0.)
            let carried = samples[first ... last].dropFirst(128)
            #expect(carried.count > 24_000 && carried.allSatisfy { $0 == 0.25 }, "\(carried.count) frames from the second cycle after the first non-zero frame to the last; other values: \(Array(Set(carried.filter { $0 != 0.25 })).prefix(4)) from \(carried.firstIndex { $0 != 0.25 }.map { $0 - first } ?? -1)")
            let summary = (try? JSONSerialization.jsonObject(with: Data(contentsOf: out))) as? [String: Any]
            #expect(summary?["cvOutputs"] as? [String] == ["\(name):out"] && summary?["outputs"] as? [String] == [])
        }

        @Test("host x42 miditranspose (+7) between a JACK MIDI client playing notes at known frames and one recording MIDI: every event comes out 7 semitones up at the frame it went in, nothing dropped")
        func midiOutputPort() throws {
            let clock = try JackClient(name: TestServer.uniqueClientName("trclock"))
            let now = UInt64(clock.estimatedFrameTime)
            clock.close()
            let notes: [(frame: UInt64, note: UInt8)] = [(now + 36_000 + 37, 60), (now + 48_000 + 101, 64), (now + 60_000 + 127, 67)]
            let sender = try MIDINoteClient(name: TestServer.uniqueClientName("trnotes"), notes: notes, lengthFrames: 3_000)
            let capture = try MIDICaptureClient(name: TestServer.uniqueClientName("trcapture"))
            let name = TestServer.uniqueClientName("hosttr")
            let (host, out, err) = try HostCommandTests.startHost([Self.transpose, "--set", "transpose=7", "-i", sender.portName, "-o", capture.portName],
                                                                  name: name, expectPort: "midiout")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            while UInt64(sender.client.estimatedFrameTime) < notes[2].frame + 6_000 { usleep(50_000) }
            host.interrupt()
            let exit = host.exitStatus()
            let errors = String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self)
            #expect(exit.status == 0, "\(errors)")
            #expect(sender.processor.sentCount.load(ordering: .relaxed) == 6)
            var expected: [String] = []
            for note in notes {
                expected.append("\(note.frame): \([0x90, note.note + 7, 100] as [UInt8])")
                expected.append("\(note.frame + 3_000): \([0x80, note.note + 7, 0] as [UInt8])")
            }
            let got = capture.events.map { "\($0.frame): \($0.bytes)" }
            #expect(got == expected, "got \(got)")
            let summary = (try? JSONSerialization.jsonObject(with: Data(contentsOf: out))) as? [String: Any]
            #expect(summary?["midiOutputs"] as? [String] == ["\(name):midiout"] && summary?["droppedMIDIEvents"] as? Int == 0)
        }
    
        @Test("host miditranspose +7 then miditranspose +5 (a chain: a graph whose MIDI flows midi_in -> 1 -> 2 -> midi_out) between a MIDI note client and a MIDI capture client: every event 12 semitones up at the frame it was sent")
        func chainMIDIOutput() throws {
            let clock = try JackClient(name: TestServer.uniqueClientName("chclock"))
            let now = UInt64(clock.estimatedFrameTime)
            clock.close()
            let notes: [(frame: UInt64, note: UInt8)] = [(now + 36_000 + 5, 50), (now + 48_000 + 77, 55)]
            let sender = try MIDINoteClient(name: TestServer.uniqueClientName("chnotes"), notes: notes, lengthFrames: 3_000)
            let capture = try MIDICaptureClient(name: TestServer.uniqueClientName("chcapture"))
            let name = TestServer.uniqueClientName("hostch")
            let (host, out, err) = try HostCommandTests.startHost([Self.transpose, "--set", "transpose=7", Self.transpose, "--set", "transpose=5",
                                                                   "-i", sender.portName, "-o", capture.portName], name: name, expectPort: "midi_out")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            while UInt64(sender.client.estimatedFrameTime) < notes[1].frame + 6_000 { usleep(50_000) }
            host.interrupt()
            let exit = host.exitStatus()
            #expect(exit.status == 0, "\(String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))")
            var expected: [String] = []
            for note in notes {
                expected.append("\(note.frame): \([0x90, note.note + 12, 100] as [UInt8])")
                expected.append("\(note.frame + 3_000): \([0x80, note.note + 12, 0] as [UInt8])")
            }
            #expect(capture.events.map { "\($0.frame): \($0.bytes)" } == expected)
        }
    }
}
