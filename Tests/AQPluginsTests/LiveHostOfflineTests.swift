import AQCore
import AQPlugins
import Foundation
import Testing

/// The LV2 live host (what `aqjack host` runs on JACK) on the offline driver: the same plugins,
/// channels and latency, rendered on the test's thread, every sample checked.
@Suite("The LV2 live host on the offline driver (no server needed)")
struct LiveHostOfflineTests {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"
    static let limiter = "http://plugin.org.uk/swh-plugins/fastLookaheadLimiter"
    static let jx10 = "http://drobilla.net/plugins/mda/JX10"

    /// Renders `frames` frames through `host` on `driver`: input channel c's frame f is
    /// `input(c, f)`; returns each output channel's samples.
    static func render(_ driver: OfflineDriver, channels: Int, frames: Int, input: @escaping (Int, Int) -> Float = { _, _ in 0 },
                       midi: [OfflineDriver.MIDIMessage] = []) -> [[Float]] {
        let start = driver.currentFrame
        nonisolated(unsafe) var outputs = Array(repeating: [Float](), count: channels)
        driver.run(frames: frames, input: { channel, first, samples in
            for index in samples.indices { samples[index] = input(channel, Int(first - start) + index) }
        }, output: { channel, _, samples in
            if channel < channels { outputs[channel].append(contentsOf: samples) }
        }, midi: midi)
        return outputs
    }

    @Test("swh amp at +6 dB, then set to 0 dB between two runs: every output sample is the input times the plugin's coefficient (powf(10, dB/20)), exactly; the channels are named by the plugin's port symbols")
    func ampExact() throws {
        let driver = OfflineDriver(name: "host", sampleRate: 48000, bufferSize: 128)
        let host = try LV2LiveHost(world: LV2World(), uri: Self.amp, settings: [.control(symbol: "gain", value: 6)], driver: driver)
        #expect(host.audioInputs == ["host:input"] && host.audioOutputs == ["host:output"] && host.midiInputs.isEmpty)
        try host.activate()
        defer { driver.close() }
        let signal = { (_: Int, frame: Int) -> Float in sin(Float(frame) * 0.01) * 0.25 }
        let loud = Self.render(driver, channels: 1, frames: 4_800, input: signal)[0]
        let coefficient = powf(10, 6 * 0.05)
        #expect(loud.count == 4_800)
        #expect(loud.indices.allSatisfy { loud[$0] == signal(0, $0) * coefficient }, "first wrong at \(String(describing: loud.indices.first { loud[$0] != signal(0, $0) * coefficient }))")
        try host.set("gain", to: 0)
        let unity = Self.render(driver, channels: 1, frames: 4_800, input: signal)[0]
        #expect(unity.indices.allSatisfy { unity[$0] == signal(0, $0) })
    }

    @Test("fastLookaheadLimiter: its 240 frames of latency are published to the driver when the host is made (what JACK shows on the host's ports)")
    func latencyPublished() throws {
        let driver = OfflineDriver(name: "lim", sampleRate: 48000, bufferSize: 256)
        let host = try LV2LiveHost(world: LV2World(), uri: Self.limiter, settings: [], driver: driver)
        defer { driver.close() }
        #expect(host.latencyFrames == 240 && driver.processingLatency == 240)
        #expect(host.audioInputs.count == 2 && host.audioOutputs.count == 2)
    }

    @Test("mda JX10 given two MIDI notes at frames 4837 and 12101 (inside 128-frame cycles): silent before the first, each note's first non-zero sample at its own frame or within the synth's 32-frame control block after it")
    func synthFromMIDI() throws {
        let driver = OfflineDriver(name: "jx", sampleRate: 48000, bufferSize: 128)
        let host = try LV2LiveHost(world: LV2World(), uri: Self.jx10, settings: [.control(symbol: "env_rel", value: 0)], driver: driver)
        #expect(host.midiInputs.count == 1)
        try host.activate()
        defer { driver.close() }
        let notes: [(frame: UInt64, note: UInt8)] = [(4_837, 60), (12_101, 67)]
        var midi: [OfflineDriver.MIDIMessage] = []
        for note in notes {
            midi.append(.init(frame: note.frame, bytes: [0x90, note.note, 100]))
            midi.append(.init(frame: note.frame + 3_000, bytes: [0x80, note.note, 0]))
        }
        let left = Self.render(driver, channels: 2, frames: 24_000, midi: midi)[0]
        #expect(left.count == 24_000)
        #expect(left[..<Int(notes[0].frame)].allSatisfy { $0 == 0 }, "sound before the first note")
        // JX10 starts a voice's envelope at its next 32-frame control block (measured: the first
        // non-zero sample 32 and 1 frames after the two notes). A note given at its cycle's start
        // would sound before its frame (it is 101 and 69 frames into its cycle); one given at the
        // next cycle, at least 27 and 59 frames late, plus up to 32.
        let lags = notes.map { note in (Int(note.frame) - 128 ..< Int(note.frame) + 4_800).first { left[$0] != 0 }.map { $0 - Int(note.frame) } }
        #expect(lags[0].map { $0 >= 0 && $0 <= 32 } == true && lags[1].map { $0 >= 0 && $0 <= 32 } == true, "onsets after the notes: \(lags)")
    }

    static let transpose = "http://gareus.org/oss/lv2/midifilter#miditranspose"
    static let interpolator = "http://drobilla.net/plugins/blop/interpolator"

    @Test("x42 miditranspose (+7) given notes at frames 300, 4837 and 12101 (inside 128-frame cycles): its MIDI output channel 'midiout' gives each event back 7 semitones up at its own frame, nothing else")
    func midiOutputAtItsFrames() throws {
        let driver = OfflineDriver(name: "tr", sampleRate: 48000, bufferSize: 128)
        let host = try LV2LiveHost(world: LV2World(), uri: Self.transpose, settings: [.control(symbol: "transpose", value: 7)], driver: driver)
        #expect(host.midiInputs == ["tr:midiin"] && host.midiOutputs == ["tr:midiout"])
        try host.activate()
        defer { driver.close() }
        let sent: [OfflineDriver.MIDIMessage] = [.init(frame: 300, bytes: [0x90, 60, 100]), .init(frame: 4_837, bytes: [0x80, 60, 0]),
                                                  .init(frame: 12_101, bytes: [0x91, 64, 90])]
        nonisolated(unsafe) var received: [OfflineDriver.MIDIMessage] = []
        driver.run(frames: 24_000, midi: sent, midiOutput: { received.append($0) })
        #expect(received.map(\.frame) == [300, 4_837, 12_101] && received.allSatisfy { $0.channel == 0 })
        #expect(received.map(\.bytes) == [[0x90, 67, 100], [0x80, 67, 0], [0x91, 71, 90]], "\(received.map(\.bytes))")
        #expect(host.processor.droppedMIDIEvents.load(ordering: .relaxed) == 0)
    }

    @Test("blop's interpolator (a control in, a CV out): the host makes the CV port a control-voltage channel 'out' and it carries the control's value, 0.25, then after a set a move to exactly -0.5")
    func controlVoltageOutput() throws {
        let driver = OfflineDriver(name: "cv", sampleRate: 48000, bufferSize: 128)
        let host = try LV2LiveHost(world: LV2World(), uri: Self.interpolator, settings: [.control(symbol: "in", value: 0.25)], driver: driver)
        #expect(host.audioOutputs.isEmpty && host.cvOutputs == ["cv:out"] && host.cvInputs.isEmpty)
        try host.activate()
        defer { driver.close() }
        let first = Self.render(driver, channels: 1, frames: 1_280)[0]
        #expect(first.count == 1_280 && first.suffix(1_024).allSatisfy { $0 == 0.25 }, "\(first.prefix(8)) ... \(first.suffix(4))")
        try host.set("in", to: -0.5)
        let second = Self.render(driver, channels: 1, frames: 1_280)[0]
        // From 0.25 it moves to -0.5 (blop interpolates, overshooting a little), then holds it exactly.
        #expect(second[0] == 0.25 && second.suffix(1_024).allSatisfy { $0 == -0.5 }, "\(second.prefix(4)) ... \(second.suffix(4))")
    }
}
