import AQGraph
import AQPlugins
import AQTestSupport
import Foundation
import Testing

/// Real LV2 plugins (Debian's swh-lv2) in a plugin graph, run by the graph's runner with no
/// server: delay compensation against a plugin's reported latency, every sample checked.
@Suite("LV2 plugins in a plugin graph (no server needed)")
struct LV2GraphTests {
    /// A quiet stereo signal (well below the limiter's 0 dB), each frame's value its own.
    static func input(_ channel: Int, _ frame: Int) -> Float {
        frame < 0 ? 0 : Float(sin(Double(frame) * (channel == 0 ? 0.013 : 0.021)) * 0.25)
    }

    /// Runs `runner` over `total` frames in cycles of `cycle`, 2 input channels of ``input``;
    /// returns the output channels' frames.
    static func render(_ runner: GraphRunner, outputs: Int, total: Int, cycle: Int) -> [[Float]] {
        var result = [[Float]](repeating: [], count: outputs)
        let ins = (0 ..< 2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: cycle) }
        let outs = (0 ..< outputs).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: cycle) }
        defer { (ins + outs).forEach { $0.deallocate() } }
        var done = 0
        while done < total {
            let frames = min(cycle, total - done)
            for channel in 0 ..< 2 { for frame in 0 ..< frames { ins[channel][frame] = input(channel, done + frame) } }
            ins.map { UnsafePointer($0) }.withUnsafeBufferPointer { inputs in
                outs.withUnsafeBufferPointer { outputs in runner.process(inputs: inputs, outputs: outputs, frames: frames) }
            }
            for channel in 0 ..< outputs { result[channel] += UnsafeBufferPointer(start: outs[channel], count: frames) }
            done += frames
        }
        return result
    }

    @Test("a dry path in parallel with swh's fastLookaheadLimiter (not limiting), summed: the limiter reports 240 frames, the graph's latency is 240, and every output sample is the limiter's own output plus the input 240 frames before; below the limit that is exactly twice the input 240 frames before (on silent input, the limiter's denormal guard of 4.6e-26)")
    func dryBesideTheLimiter() throws {
        let world = LV2World()
        let limiter = try LV2GraphNode(id: "lim", instance: LV2PluginInstance(world: world, uri: LiveHostOfflineTests.limiter, sampleRate: 48000, maximumBlock: 256))
        var graph = PluginGraph(inputs: 2, outputs: 2)
        try graph.add(limiter.node)
        #expect(limiter.node.latency == 240)
        for channel in 0 ..< 2 {
            try graph.connect(.graphInput(channel), to: .plugin(node: "lim", port: "in_\(channel + 1)"))
            try graph.connect(.plugin(node: "lim", port: "out_\(channel + 1)"), to: .graphOutput(channel))
            try graph.connect(.graphInput(channel), to: .graphOutput(channel))
        }
        let plan = GraphPlan(graph)
        #expect(plan.latency == 240)
        let summed = Self.render(try GraphRunner(graph: graph, plan: plan, kernels: ["lim": limiter.kernel], maximumFrames: 256),
                                 outputs: 2, total: 24_000, cycle: 256)

        // The limiter alone, from a fresh instance, through the same runner.
        let alone = try LV2GraphNode(id: "lim", instance: LV2PluginInstance(world: world, uri: LiveHostOfflineTests.limiter, sampleRate: 48000, maximumBlock: 256))
        var single = PluginGraph(inputs: 2, outputs: 2)
        try single.add(alone.node)
        for channel in 0 ..< 2 {
            try single.connect(.graphInput(channel), to: .plugin(node: "lim", port: "in_\(channel + 1)"))
            try single.connect(.plugin(node: "lim", port: "out_\(channel + 1)"), to: .graphOutput(channel))
        }
        let limited = Self.render(try GraphRunner(graph: single, plan: GraphPlan(single), kernels: ["lim": alone.kernel], maximumFrames: 256),
                                  outputs: 2, total: 24_000, cycle: 256)
        for channel in 0 ..< 2 {
            let wrong = (0 ..< 24_000).filter { summed[channel][$0] != limited[channel][$0] + Self.input(channel, $0 - 240) }
            #expect(wrong.isEmpty, "channel \(channel): \(wrong.count) frames are not the limiter's plus the dry input, the first at \(wrong.first ?? -1)")
            // Twice the input wherever the input sounds; on silent frames the limiter puts out
            // swh's guard against denormals (4.58e-26, about -507 dBFS) instead of 0.
            let notTwice = (0 ..< 24_000).filter { frame in
                let dry = Self.input(channel, frame - 240)
                return dry == 0 ? abs(summed[channel][frame]) > 1e-20 : summed[channel][frame] != 2 * dry
            }
            #expect(notTwice.isEmpty, "channel \(channel): \(notTwice.count) frames are not twice the input 240 frames before, the first at \(notTwice.first ?? -1)")
        }
        withExtendedLifetime((limiter, alone)) {}
    }
}

extension LV2GraphTests {
    @Test("a chain of swh amp at +6 dB (mono) and the stereo limiter: the amp runs once per channel (nodes 1.1 and 1.2), the graph's latency is 240, and every sample is the input 240 frames before × powf(10, 6/20), exactly, below the limit")
    func monoAmpIntoStereoLimiter() throws {
        let chain = try LV2Chain(world: LV2World(), plugins: [(LiveHostOfflineTests.amp, [.control(symbol: "gain", value: 6)]), (LiveHostOfflineTests.limiter, [])],
                                 sampleRate: 48000, maximumBlock: 256, realtime: false)
        #expect(chain.nodes.map(\.id) == ["1.1", "1.2", "2"])
        let plan = GraphPlan(chain.graph)
        #expect(plan.latency == 240 && chain.graph.inputCount == 2 && chain.graph.outputCount == 2)
        let output = Self.render(try GraphRunner(graph: chain.graph, plan: plan, kernels: chain.kernels, maximumFrames: 256), outputs: 2, total: 24_000, cycle: 256)
        let coefficient = powf(10, 6.0 / 20)
        for channel in 0 ..< 2 {
            let wrong = (0 ..< 24_000).filter { frame in
                let input = Self.input(channel, frame - 240)
                return input == 0 ? abs(output[channel][frame]) > 1e-20 : output[channel][frame] != input * coefficient
            }
            #expect(wrong.isEmpty, "channel \(channel): \(wrong.count) frames wrong, the first at \(wrong.first ?? -1)")
        }
    }
}
