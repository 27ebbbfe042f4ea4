import AQCore
import AQGraph
import Testing

/// A graph live on the offline driver: channels, the latency published, and a new graph swapped
/// in at a cycle boundary while it runs, every sample checked. No server.
@Suite("Plugin graph host on the offline driver (no server needed)")
struct GraphHostTests {
    /// Runs `frames` through the driver's one input, its frame f holding
    /// ``GraphRunnerTests/input(_:)`` of f (the clock starts at 0); returns its one output.
    static func render(_ driver: OfflineDriver, frames: Int) -> [Float] {
        nonisolated(unsafe) var output: [Float] = []
        driver.run(frames: frames, input: { _, start, samples in
            for index in samples.indices { samples[index] = GraphRunnerTests.input(Int(start) + index) }
        }, output: { _, _, samples in output += samples })
        return output
    }

    @Test("a dry path beside a 240-frame delay plugin: 'graph:in_1'/'graph:out_1', 240 frames published, twice the input 240 frames late; a dry-only graph swapped in after 4800 frames plays the input itself from the next cycle, latency 0 published, and the first runner is released")
    func swapWhileRunning() throws {
        let driver = OfflineDriver(name: "graph", sampleRate: 48000, bufferSize: 128)
        let host = try GraphHost(driver: driver, inputs: 1, outputs: 1)
        #expect(host.inputs == ["graph:in_1"] && host.outputs == ["graph:out_1"])
        let graph = try TestGraphs.dryBesideDelay()
        let limiter = TestKernel(.delay(240))
        weak var firstRunner: GraphRunner?
        do {
            let runner = try GraphRunner(graph: graph, plan: GraphPlan(graph), kernels: ["lim": limiter.kernel], maximumFrames: 128)
            firstRunner = runner
            try host.run(runner)
        }
        try host.start()
        #expect(driver.processingLatency == 240)
        let before = Self.render(driver, frames: 4800)
        #expect((0 ..< 4800).filter { before[$0] != 2 * GraphRunnerTests.input($0 - 240) }.isEmpty)

        var dry = PluginGraph(inputs: 1, outputs: 1)
        try dry.connect(.graphInput(0), to: .graphOutput(0))
        #expect(try host.run(GraphRunner(graph: dry, plan: GraphPlan(dry), kernels: [:], maximumFrames: 128)))
        #expect(driver.processingLatency == 0)
        #expect(firstRunner == nil, "the replaced runner is still alive")
        let after = Self.render(driver, frames: 4800)
        #expect((0 ..< 4800).filter { after[$0] != GraphRunnerTests.input(4800 + $0) }.isEmpty)
        host.stop()
        withExtendedLifetime(limiter) {}
    }

    @Test("a runner with shorter cycles than the driver's is refused, naming both")
    func shortRunnerRefused() throws {
        let driver = OfflineDriver(name: "graph", sampleRate: 48000, bufferSize: 256)
        let host = try GraphHost(driver: driver, inputs: 1, outputs: 1)
        let graph = PluginGraph(inputs: 1, outputs: 1)
        do {
            try host.run(GraphRunner(graph: graph, plan: GraphPlan(graph), kernels: [:], maximumFrames: 128))
            Issue.record("a 128-frame runner was taken by a 256-frame driver")
        } catch let error as AudioDriverError {
            #expect(error.description == "the graph runs at most 128 frames a cycle; graph runs 256")
        }
    }
}
