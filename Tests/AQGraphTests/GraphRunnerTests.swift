import AQGraph
import AQTestSupport
import Testing

/// Plugins of the tests' own for the runner: a pure delay of `latency` frames that reports it
/// (what a look-ahead limiter below its threshold is), and a node that adds its two inputs.
final class TestKernel {
    enum Kind { case delay(Int), add }
    let kind: Kind
    var ports: [UnsafeMutablePointer<Float>?] = [nil, nil, nil]
    var history: [Float]
    var position = 0

    init(_ kind: Kind) {
        self.kind = kind
        if case .delay(let frames) = kind { history = [Float](repeating: 0, count: frames) } else { history = [] }
    }

    var kernel: GraphNodeKernel {
        GraphNodeKernel(context: Unmanaged.passUnretained(self).toOpaque(), connect: { context, port, buffer in
            Unmanaged<TestKernel>.fromOpaque(context).takeUnretainedValue().ports[port] = buffer
        }, run: { context, frames in
            let me = Unmanaged<TestKernel>.fromOpaque(context).takeUnretainedValue()
            switch me.kind {
            case .add:
                for frame in 0 ..< frames { me.ports[2]![frame] = me.ports[0]![frame] + me.ports[1]![frame] }
            case .delay(let length):
                for frame in 0 ..< frames {
                    let sample = me.ports[0]![frame]
                    me.ports[1]![frame] = me.history[me.position]
                    me.history[me.position] = sample
                    me.position = (me.position + 1) % length
                }
            }
        })
    }
}

@Suite("Plugin graph runner: sums and delay lines, frame by frame (no server needed)")
struct GraphRunnerTests {
    /// Input frame `frame`'s sample: (frame + 1) / 2^20, exact, so a sample names its frame.
    static func input(_ frame: Int) -> Float { frame < 0 ? 0 : Float(frame + 1) / 1_048_576 }

    /// Runs `runner` over `total` frames in cycles of the given lengths (repeated), one input
    /// channel of ``input(_:)``; returns each output channel's frames.
    static func render(_ runner: GraphRunner, outputs: Int, total: Int, cycles: [Int]) -> [[Float]] {
        renderGraph(runner, inputs: 1, outputs: outputs, total: total, cycles: cycles) { _, frame in input(frame) }
    }

    @Test("a dry path in parallel with a 240-frame delay plugin, summed: every output frame is exactly twice the input 240 frames before (silence before), in cycles of 128, 7 and 64 frames")
    func dryPathCompensated() throws {
        let graph = try TestGraphs.dryBesideDelay()
        let limiter = TestKernel(.delay(240))
        let runner = try GraphRunner(graph: graph, plan: GraphPlan(graph), kernels: ["lim": limiter.kernel], maximumFrames: 128)
        let output = Self.render(runner, outputs: 1, total: 6000, cycles: [128, 7, 64])[0]
        let wrong = (0 ..< 6000).filter { output[$0] != 2 * Self.input($0 - 240) }
        #expect(wrong.isEmpty, "\(wrong.count) frames wrong, the first at \(wrong.first ?? -1)")
    }

    @Test("paths of 100 and 30 frames into an adder, and a dry second output: the adder's inputs are aligned (output 1 is twice the input 100 frames before) and output 2 is the input 100 frames before")
    func diamondCompensated() throws {
        let graph = try TestGraphs.diamond()
        let kernels = ["slow": TestKernel(.delay(100)), "fast": TestKernel(.delay(30)), "add": TestKernel(.add)]
        let runner = try GraphRunner(graph: graph, plan: GraphPlan(graph), kernels: kernels.mapValues(\.kernel), maximumFrames: 256)
        let outputs = Self.render(runner, outputs: 2, total: 5000, cycles: [256, 1, 100])
        #expect((0 ..< 5000).filter { outputs[0][$0] != 2 * Self.input($0 - 100) }.isEmpty)
        #expect((0 ..< 5000).filter { outputs[1][$0] != Self.input($0 - 100) }.isEmpty)
        withExtendedLifetime(kernels) {}
    }

    @Test("a node without a plugin instance is refused, naming it")
    func missingKernel() throws {
        var graph = PluginGraph(inputs: 1, outputs: 1)
        try graph.add(GraphNode(id: "amp", inputs: ["in"], outputs: ["out"]))
        #expect(throws: GraphError(.notFound, "node 'amp' has no plugin instance to run")) {
            _ = try GraphRunner(graph: graph, plan: GraphPlan(graph), kernels: [:], maximumFrames: 64)
        }
    }
}
