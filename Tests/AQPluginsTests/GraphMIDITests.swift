import AQCore
import AQGraph
import AQPlugins
import Foundation
import Testing

/// MIDI and CV in a live graph on the offline driver: MIDI connections between `midi_in`, the
/// plugins' MIDI ports and `midi_out`, merged in frame order; CV ports connected as audio. No
/// server.
@Suite("Live plugin graph: MIDI connections and CV ports (offline driver, no server needed)")
struct GraphMIDITests {
    static let transpose = LiveHostOfflineTests.transpose

    /// Runs `frames` with `midi` on the graph's MIDI input; returns what left on `midi_out`.
    static func run(_ driver: OfflineDriver, frames: Int, midi: [OfflineDriver.MIDIMessage]) -> [OfflineDriver.MIDIMessage] {
        nonisolated(unsafe) var received: [OfflineDriver.MIDIMessage] = []
        driver.run(frames: frames, midi: midi, midiOutput: { received.append($0) })
        return received
    }

    @Test("midi_in -> t (miditranspose +7) -> u (+5) -> midi_out, and midi_in -> midi_out beside them: every note leaves twice at its own frame, as sent and 12 up, the sent one first; u bypassed: its input passes (7 up); the saved document keeps the MIDI connections")
    func midiConnections() throws {
        let driver = OfflineDriver(name: "midi", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        #expect(live.host.midiInput == "midi:midi_in" && live.host.midiOutput == "midi:midi_out")
        try live.add(Self.transpose, id: "t", settings: [.control(symbol: "transpose", value: 7)])
        try live.add(Self.transpose, id: "u", settings: [.control(symbol: "transpose", value: 5)])
        try live.connect("midi_in", "midi_out")
        try live.connect("midi_in", "t:midiin")
        try live.connect("t:midiout", "u:midiin")
        try live.connect("u:midiout", "midi_out")
        try live.start()
        let sent: [OfflineDriver.MIDIMessage] = [.init(frame: 300, bytes: [0x90, 60, 100]), .init(frame: 4_837, bytes: [0x80, 60, 0])]
        let received = Self.run(driver, frames: 9_600, midi: sent)
        #expect(received.map(\.frame) == [300, 300, 4_837, 4_837], "\(received.map(\.frame))")
        #expect(received.map(\.bytes) == [[0x90, 60, 100], [0x90, 72, 100], [0x80, 60, 0], [0x80, 72, 0]], "\(received.map(\.bytes))")
        try live.bypass("u", true)
        let start = driver.currentFrame
        let bypassed = Self.run(driver, frames: 4_800, midi: [.init(frame: start + 1_000, bytes: [0x90, 50, 90])])
        #expect(bypassed.map(\.bytes) == [[0x90, 50, 90], [0x90, 57, 90]] && bypassed.allSatisfy { $0.frame == start + 1_000 }, "\(bypassed.map(\.bytes))")
        let pairs = live.document.connections
        #expect(pairs.contains(["midi_in", "t:midiin"]) && pairs.contains(["u:midiout", "midi_out"]) && pairs.contains(["midi_in", "midi_out"]))
    }

    @Test("MIDI connections refused by kind: audio to MIDI (invalid, naming both), midi_out as a source and midi_in as a destination (invalid), a MIDI loop (cycle)")
    func midiRefusals() throws {
        let driver = OfflineDriver(name: "midi", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.add(Self.transpose, id: "t")
        try live.add(Self.transpose, id: "u")
        try live.connect("t:midiout", "u:midiin")
        let cases: [(GraphError.Kind, String, () throws(GraphError) -> Void)] = [
            (.invalid, "in_1 carries audio and t:midiin MIDI: connect audio to audio and MIDI to MIDI", { () throws(GraphError) in try live.connect("in_1", "t:midiin") }),
            (.invalid, "midi_out is the graph's MIDI output: it can only be a destination", { () throws(GraphError) in try live.connect("midi_out", "t:midiin") }),
            (.invalid, "midi_in is the graph's MIDI input: it can only be a source", { () throws(GraphError) in try live.connect("t:midiout", "midi_in") }),
            (.cycle, "would make a cycle: t -> u -> t", { () throws(GraphError) in try live.connect("u:midiout", "t:midiin") }),
        ]
        for (kind, words, edit) in cases {
            do throws(GraphError) {
                try edit()
                Issue.record("accepted; expected \(kind): \(words)")
            } catch {
                #expect(error.kind == kind && error.description.contains(words), "\(error)")
            }
        }
        #expect(live.graph.connections.count == 1)
    }

    @Test("a chain of miditranspose (+12) then mda JX10: notes on midi_in reach the synth transposed (it sounds from each note's frame, within its 32-frame control block), and midi_out carries the transposed notes")
    func chainPassesMIDI() throws {
        let driver = OfflineDriver(name: "chain", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let world = LV2World()
        let chain = try LV2Chain(world: world, plugins: [(Self.transpose, [.control(symbol: "transpose", value: 12)]),
                                                        (LiveHostOfflineTests.jx10, [.control(symbol: "env_rel", value: 0)])],
                                 sampleRate: 48000, maximumBlock: 4096, realtime: false)
        #expect(chain.graph.inputCount == 2 && chain.graph.outputCount == 2)
        let live = try LiveGraph(chain: chain, world: world, driver: driver)
        try live.start()
        nonisolated(unsafe) var left: [Float] = []
        nonisolated(unsafe) var received: [OfflineDriver.MIDIMessage] = []
        driver.run(frames: 24_000, output: { channel, _, samples in if channel == 0 { left.append(contentsOf: samples) } },
                   midi: [.init(frame: 4_837, bytes: [0x90, 48, 100]), .init(frame: 12_101, bytes: [0x80, 48, 0])],
                   midiOutput: { received.append($0) })
        #expect(received.map(\.bytes) == [[0x90, 60, 100], [0x80, 60, 0]] && received.map(\.frame) == [4_837, 12_101])
        let onset = left.firstIndex { $0 != 0 }
        #expect(onset.map { $0 >= 4_837 && $0 <= 4_837 + 32 } == true, "first sound at \(String(describing: onset))")
    }

    @Test("CV ports connect as audio: blop's interpolator (CV out) into the amp's input, the amp to out_1: every frame after the first run is the interpolator's value, 0.25, exactly; the CV port is listed among the node's outputs")
    func controlVoltageInGraph() throws {
        let driver = OfflineDriver(name: "cv", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.add(LiveHostOfflineTests.interpolator, id: "lfo", settings: [.control(symbol: "in", value: 0.25)])
        try live.add(LiveHostOfflineTests.amp, id: "amp")
        #expect(live.graph.node("lfo")?.outputs == ["out"])
        try live.connect("lfo:out", "amp:input")
        try live.connect("amp:output", "out_1")
        try live.start()
        let output = LiveHostOfflineTests.render(driver, channels: 1, frames: 2_560)[0]
        #expect(output.suffix(2_048).allSatisfy { $0 == 0.25 }, "\(output.suffix(4))")
    }
}
