import AQCore
import AQGraph

/// What `aqjack plugins --check` does to one plugin, in the child process it runs it in (so a
/// plugin that crashes or hangs takes only that process): the plugin instantiated as the one node
/// of a graph on the offline driver, as `aqjack host` runs it (every audio input fed from the
/// graph's inputs, every output to its outputs), then run for `seconds` of white noise in cycles
/// of 1024 frames, every output sample checked to be finite.
///
/// Threads: the caller's (the offline driver's cycles run on it).
public enum PluginCheck {
    /// One plugin's outcome: passed, or the reason it failed, as `plugins --check --json` lists it.
    public struct Outcome: Codable, Equatable, Sendable {
        public var uri: String
        public var passed: Bool
        /// Why it failed (nil when it passed).
        public var reason: String?
        /// The latency it reported after the run, frames (nil when it never ran).
        public var latency: Int?

        public init(uri: String, passed: Bool, reason: String? = nil, latency: Int? = nil) {
            self.uri = uri
            self.passed = passed
            self.reason = reason
            self.latency = latency
        }
    }

    /// Runs plugin `uri` of `world` for `seconds` of noise at `sampleRate` Hz.
    public static func run(world: LV2World, uri: String, seconds: Double = 1, sampleRate: Int = 48000) -> Outcome {
        func failed(_ reason: String) -> Outcome { Outcome(uri: uri, passed: false, reason: reason) }
        let description: LV2PluginDescription
        do { description = try world.describe(uri) } catch { return failed(error.message) }
        let inputs = description.audioInputs.map(\.symbol), outputs = description.audioOutputs.map(\.symbol)
        let driver = OfflineDriver(name: "check", sampleRate: sampleRate, bufferSize: 1024)
        defer { driver.close() }
        let live: LiveGraph
        do {
            live = try LiveGraph(world: world, driver: driver, inputs: inputs.count, outputs: outputs.count)
            try live.add(uri, id: "plugin")
            for (index, symbol) in inputs.enumerated() { try live.connect("in_\(index + 1)", "plugin:\(symbol)") }
            for (index, symbol) in outputs.enumerated() { try live.connect("plugin:\(symbol)", "out_\(index + 1)") }
            try live.start()
        } catch {
            return failed(error.description)
        }
        defer { live.stop() }
        // White noise in [-0.5, 0.5), a xorshift generator per channel: the same every run.
        var states = (0 ..< max(1, inputs.count)).map { UInt32(0x9E37_79B9) &+ UInt32($0) &* 2_654_435_761 }
        var firstBad: (channel: Int, frame: UInt64, value: Float)?
        driver.run(frames: Int(seconds * Double(sampleRate)), input: { channel, _, samples in
            var state = states[channel]
            for index in samples.indices {
                state ^= state << 13
                state ^= state >> 17
                state ^= state << 5
                samples[index] = Float(state) / Float(UInt32.max) - 0.5
            }
            states[channel] = state
        }, output: { channel, first, samples in
            guard firstBad == nil, let index = samples.firstIndex(where: { !$0.isFinite }) else { return }
            firstBad = (channel, first + UInt64(index), samples[index])
        })
        let latency = live.nodes["plugin"]?.instance.latencyFrames
        if let bad = firstBad {
            let name = outputs.indices.contains(bad.channel) ? outputs[bad.channel] : "out_\(bad.channel + 1)"
            return Outcome(uri: uri, passed: false, reason: "its output '\(name)' is \(bad.value) at frame \(bad.frame) of white noise; expected finite samples", latency: latency)
        }
        return Outcome(uri: uri, passed: true, latency: latency)
    }
}
