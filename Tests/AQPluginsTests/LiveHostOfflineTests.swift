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
}
