import AQGraph
import Testing

/// The graph's model and its plan: run order, summing, delay compensation and the refusals.
/// Pure values: no plugin, no server.
@Suite("Plugin graph: order, sums and delay compensation (no server needed)")
struct GraphPlanTests {
    static func limiter(_ id: String, latency: Int = 240) -> GraphNode {
        GraphNode(id: id, inputs: ["in_1", "in_2"], outputs: ["out_1", "out_2"], latency: latency)
    }

    static func mono(_ id: String, latency: Int = 0) -> GraphNode {
        GraphNode(id: id, inputs: ["input"], outputs: ["output"], latency: latency)
    }

    @Test("a dry path in parallel with a 240-frame limiter, summed into one output: the dry path is delayed 240 frames, the graph's latency is 240")
    func dryPathBesideALimiter() throws {
        var graph = PluginGraph(inputs: 1, outputs: 1)
        try graph.add(Self.limiter("lim"))
        try graph.connect(.graphInput(0), to: .plugin(node: "lim", port: "in_1"))
        try graph.connect(.plugin(node: "lim", port: "out_1"), to: .graphOutput(0))
        try graph.connect(.graphInput(0), to: .graphOutput(0))
        let plan = GraphPlan(graph)
        #expect(plan.order == ["lim"] && plan.latency == 240)
        #expect(plan.feeds[.graphOutput(0)] == [GraphPlan.Feed(source: .plugin(node: "lim", port: "out_1"), delay: 0),
                                                GraphPlan.Feed(source: .graphInput(0), delay: 240)])
        #expect(plan.feeds[.plugin(node: "lim", port: "in_1")] == [GraphPlan.Feed(source: .graphInput(0), delay: 0)])
    }

    @Test("MIDI is compensated as audio: a synth taking audio through a 240-frame limiter and notes from midi_in gets the notes 240 frames late; midi_out beside an output path of 240 is delayed 240; a MIDI path of 100 frames into an output raises the graph's latency and delays the audio beside it")
    func midiCompensated() throws {
        var graph = PluginGraph(inputs: 1, outputs: 2)
        try graph.add(Self.mono("lim", latency: 240))
        try graph.add(GraphNode(id: "synth", inputs: ["input"], outputs: ["output"], midiInputs: ["midi"]))
        try graph.connect(.graphInput(0), to: .plugin(node: "lim", port: "input"))
        try graph.connect(.plugin(node: "lim", port: "output"), to: .plugin(node: "synth", port: "input"))
        try graph.connect(.midiInput, to: .plugin(node: "synth", port: "midi"))
        try graph.connect(.plugin(node: "synth", port: "output"), to: .graphOutput(0))
        try graph.connect(.midiInput, to: .midiOutput)
        var plan = GraphPlan(graph)
        #expect(plan.latency == 240)
        #expect(plan.midiFeeds[.plugin(node: "synth", port: "midi")] == [GraphPlan.Feed(source: .midiInput, delay: 240)])
        #expect(plan.midiFeeds[.midiOutput] == [GraphPlan.Feed(source: .midiInput, delay: 240)])
        #expect(plan.feeds[.plugin(node: "synth", port: "input")] == [GraphPlan.Feed(source: .plugin(node: "lim", port: "output"), delay: 0)])
        // A MIDI effect of 300 frames on the way to midi_out: the audio output waits for it.
        try graph.add(GraphNode(id: "arp", inputs: [], outputs: [], midiInputs: ["in"], midiOutputs: ["out"], latency: 300))
        try graph.connect(.midiInput, to: .plugin(node: "arp", port: "in"))
        try graph.connect(.plugin(node: "arp", port: "out"), to: .midiOutput)
        plan = GraphPlan(graph)
        #expect(plan.latency == 300)
        #expect(plan.midiFeeds[.midiOutput] == [GraphPlan.Feed(source: .midiInput, delay: 300), GraphPlan.Feed(source: .plugin(node: "arp", port: "out"), delay: 0)])
        #expect(plan.feeds[.graphOutput(0)] == [GraphPlan.Feed(source: .plugin(node: "synth", port: "output"), delay: 60)])
    }

    @Test("control voltage: a graph output fed only from a plugin's CV output, and an input feeding only CV inputs, are the plan's CV channels; an output that also sums an audio output, an input that also feeds audio, and unconnected channels are not")
    func controlVoltageChannels() throws {
        var graph = PluginGraph(inputs: 3, outputs: 3)
        try graph.add(GraphNode(id: "lfo", inputs: ["rate"], outputs: ["out"], controlVoltage: ["rate", "out"]))
        try graph.add(Self.mono("amp"))
        try graph.connect(.graphInput(0), to: .plugin(node: "lfo", port: "rate"))
        try graph.connect(.plugin(node: "lfo", port: "out"), to: .graphOutput(0))
        try graph.connect(.graphInput(1), to: .plugin(node: "lfo", port: "rate"))
        try graph.connect(.graphInput(1), to: .plugin(node: "amp", port: "input"))
        try graph.connect(.plugin(node: "lfo", port: "out"), to: .graphOutput(1))
        try graph.connect(.plugin(node: "amp", port: "output"), to: .graphOutput(1))
        var plan = GraphPlan(graph)
        #expect(plan.controlVoltageInputs == [0] && plan.controlVoltageOutputs == [0])
        try graph.disconnect(.plugin(node: "amp", port: "output"), from: .graphOutput(1))
        try graph.connect(.plugin(node: "lfo", port: "out"), to: .graphOutput(2))
        plan = GraphPlan(graph)
        #expect(plan.controlVoltageInputs == [0] && plan.controlVoltageOutputs == [0, 1, 2])
    }

    @Test("a chain added out of order runs in the order of its connections; latencies add up along it")
    func chainOrder() throws {
        var graph = PluginGraph(inputs: 1, outputs: 1)
        try graph.add(Self.mono("c", latency: 7))
        try graph.add(Self.mono("a", latency: 64))
        try graph.add(Self.mono("b"))
        try graph.connect(.graphInput(0), to: .plugin(node: "a", port: "input"))
        try graph.connect(.plugin(node: "a", port: "output"), to: .plugin(node: "b", port: "input"))
        try graph.connect(.plugin(node: "b", port: "output"), to: .plugin(node: "c", port: "input"))
        try graph.connect(.plugin(node: "c", port: "output"), to: .graphOutput(0))
        let plan = GraphPlan(graph)
        #expect(plan.order == ["a", "b", "c"])
        #expect(plan.latency == 71 && plan.outputLatency == ["a": 64, "b": 64, "c": 71])
        #expect(plan.feeds.values.allSatisfy { $0.allSatisfy { $0.delay == 0 } })
    }

    @Test("paths of 100 and 30 frames into one stereo plugin: its inputs are aligned (the shorter delayed 70), and two outputs of different paths are aligned to the longest (a dry output delayed 100)")
    func diamondAlignment() throws {
        var graph = try TestGraphs.diamond()
        let plan = GraphPlan(graph)
        #expect(plan.feeds[.plugin(node: "add", port: "a")]?.map(\.delay) == [0])
        #expect(plan.feeds[.plugin(node: "add", port: "b")]?.map(\.delay) == [70])
        #expect(plan.latency == 100)
        #expect(plan.feeds[.graphOutput(1)] == [GraphPlan.Feed(source: .graphInput(0), delay: 100)])
        // A latency that changes at run time: the plan made again follows it.
        try graph.setLatency(200, of: "fast")
        let again = GraphPlan(graph)
        #expect(again.feeds[.plugin(node: "add", port: "a")]?.map(\.delay) == [100])
        #expect(again.feeds[.plugin(node: "add", port: "b")]?.map(\.delay) == [0])
        #expect(again.latency == 200 && again.feeds[.graphOutput(1)]?.map(\.delay) == [200])
    }

    @Test("a connection that would close a loop is refused, naming the cycle; the graph is left as it was")
    func cycleRefused() throws {
        var graph = PluginGraph(inputs: 1, outputs: 1)
        for id in ["a", "b", "c"] { try graph.add(Self.mono(id)) }
        try graph.connect(.plugin(node: "a", port: "output"), to: .plugin(node: "b", port: "input"))
        try graph.connect(.plugin(node: "b", port: "output"), to: .plugin(node: "c", port: "input"))
        let before = graph
        #expect(throws: GraphError(.cycle, "connecting c:output -> a:input would make a cycle: a -> b -> c -> a; a graph's paths must not loop")) {
            try graph.connect(.plugin(node: "c", port: "output"), to: .plugin(node: "a", port: "input"))
        }
        #expect(throws: GraphError(.cycle, "connecting a:output -> a:input would make a cycle: a -> a; a graph's paths must not loop")) {
            try graph.connect(.plugin(node: "a", port: "output"), to: .plugin(node: "a", port: "input"))
        }
        #expect(graph == before)
    }

    @Test("bad edits are refused naming what was wrong and what was expected: a taken or empty id, an unknown node or port, a port facing the wrong way, a channel out of range, a connection twice, a connection or node that is not there")
    func badEdits() throws {
        var graph = PluginGraph(inputs: 2, outputs: 2)
        try graph.add(Self.mono("amp"))
        let refusals: [(String, (inout PluginGraph) throws(GraphError) -> Void)] = [
            ("a node 'amp' is already in the graph; expected a new id", { (graph: inout PluginGraph) throws(GraphError) in try graph.add(Self.mono("amp")) }),
            ("a node needs an id; got an empty one", { (graph: inout PluginGraph) throws(GraphError) in try graph.add(Self.mono("")) }),
            ("node 'neg' reports a latency of -1 frames; expected 0 or more", { (graph: inout PluginGraph) throws(GraphError) in try graph.add(Self.mono("neg", latency: -1)) }),
            ("eq:input: no node 'eq' in the graph; it has 'amp'", { (graph: inout PluginGraph) throws(GraphError) in try graph.connect(.graphInput(0), to: .plugin(node: "eq", port: "input")) }),
            ("amp:gain: node 'amp' has no input 'gain'; expected one of input", { (graph: inout PluginGraph) throws(GraphError) in try graph.connect(.graphInput(0), to: .plugin(node: "amp", port: "gain")) }),
            ("amp:output is an output, not a destination; expected one of input", { (graph: inout PluginGraph) throws(GraphError) in try graph.connect(.graphInput(0), to: .plugin(node: "amp", port: "output")) }),
            ("out_1 is a graph output: it can only be a destination; expected a graph input or a plugin output", { (graph: inout PluginGraph) throws(GraphError) in try graph.connect(.graphOutput(0), to: .graphOutput(1)) }),
            ("in_2 is a graph input: it can only be a source; expected a plugin input or a graph output", { (graph: inout PluginGraph) throws(GraphError) in try graph.connect(.graphInput(0), to: .graphInput(1)) }),
            ("in_3: the graph has 2 inputs", { (graph: inout PluginGraph) throws(GraphError) in try graph.connect(.graphInput(2), to: .graphOutput(0)) }),
            ("in_1 -> out_1 is not connected", { (graph: inout PluginGraph) throws(GraphError) in try graph.disconnect(.graphInput(0), from: .graphOutput(0)) }),
            ("no node 'eq' in the graph; it has 'amp'", { (graph: inout PluginGraph) throws(GraphError) in try graph.remove("eq") }),
        ]
        for (message, edit) in refusals {
            var copy = graph
            do throws(GraphError) {
                try edit(&copy)
                Issue.record("\(message): not refused")
            } catch {
                #expect(error.description == message)
            }
            #expect(copy == graph, "\(message): the graph changed")
        }
        try graph.connect(.graphInput(0), to: .graphOutput(0))
        #expect(throws: GraphError(.exists, "in_1 -> out_1 is already connected")) { try graph.connect(.graphInput(0), to: .graphOutput(0)) }
    }

    @Test("removing a node drops its connections; an output left without one is silent (no feed)")
    func removeNode() throws {
        var graph = PluginGraph(inputs: 1, outputs: 1)
        try graph.add(Self.mono("amp", latency: 10))
        try graph.connect(.graphInput(0), to: .plugin(node: "amp", port: "input"))
        try graph.connect(.plugin(node: "amp", port: "output"), to: .graphOutput(0))
        try graph.remove("amp")
        #expect(graph.nodes.isEmpty && graph.connections.isEmpty)
        let plan = GraphPlan(graph)
        #expect(plan.order.isEmpty && plan.feeds.isEmpty && plan.latency == 0)
    }
}
