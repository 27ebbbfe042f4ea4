import AQGraph

/// LV2 plugins in a chain, as a plugin graph (what `aqjack host URI URI ...` runs): the chain is
/// as wide as its widest plugin, W channels; a plugin with W audio inputs and W outputs takes
/// them all (node "k" for the k-th plugin), a mono plugin runs once per channel (nodes "k.1" ...
/// "k.W", each with the same settings); an instrument (no audio input, W outputs) starts the
/// channels afresh (what came before it is not passed on), and a plugin with no audio port (a
/// MIDI filter) takes no channel. Channel c goes from the graph's input c through each
/// plugin in order to the graph's output c; the graph's latency is the sum of the plugins'.
/// MIDI flows along the chain too: `midi_in` goes to each plugin's MIDI input (every copy of a
/// mono one) until a plugin with a MIDI output, whose first output (its first copy's) feeds the
/// plugins after it instead; the last such output goes to `midi_out`.
public struct LV2Chain {
    public let graph: PluginGraph
    /// Every instance, in the chain's order (a mono plugin's copies one after another).
    public let nodes: [LV2GraphNode]
    /// The kernels by node id, for a ``GraphRunner``.
    public var kernels: [String: GraphNodeKernel] { Dictionary(uniqueKeysWithValues: nodes.map { ($0.id, $0.kernel) }) }

    /// Instantiates each plugin (`uri` with its `settings`) at `sampleRate`, runs of up to
    /// `maximumBlock` frames (`realtime`: a threaded worker, for the process thread).
    /// - Throws: what ``LV2PluginInstance`` throws; a plugin that has neither the chain's width
    ///   in audio inputs and outputs nor one of each (usage, naming it).
    public init(world: LV2World, plugins: [(uri: String, settings: [LV2Stage.Setting])], sampleRate: Double,
                maximumBlock: Int, realtime: Bool) throws(PluginError) {
        guard !plugins.isEmpty else { throw PluginError(.usage, "a chain needs at least one plugin") }
        func make(_ plugin: (uri: String, settings: [LV2Stage.Setting]), id: String) throws(PluginError) -> LV2GraphNode {
            let instance = try PluginFormat.instantiate(world: world, identifier: plugin.uri, sampleRate: sampleRate, maximumBlock: maximumBlock, realtime: realtime)
            try instance.apply(plugin.settings)
            return try LV2GraphNode(id: id, instance: instance)
        }
        // The ports from each plugin's description, before instantiating any.
        var counts: [(inputs: Int, outputs: Int, name: String)] = []
        for plugin in plugins {
            let description = try world.describe(plugin.uri)
            counts.append((description.audioInputs.count, description.audioOutputs.count, description.name))
        }
        let width = counts.map { max($0.inputs, $0.outputs) }.max() ?? 0
        var stages: [[LV2GraphNode]] = []
        for (index, (plugin, count)) in zip(plugins, counts).enumerated() {
            if count.inputs == width && count.outputs == width || count.inputs == 0 && (count.outputs == width || count.outputs == 0) {
                stages.append([try make(plugin, id: "\(index + 1)")])
            } else if count.inputs == 1, count.outputs == 1 {
                var copies: [LV2GraphNode] = []
                for channel in 1 ... width { copies.append(try make(plugin, id: "\(index + 1).\(channel)")) }
                stages.append(copies)
            } else {
                throw PluginError(.usage, "'\(count.name)' (plugin \(index + 1)) has \(count.inputs) audio inputs and \(count.outputs) outputs: a chain of \(width) channels takes plugins with \(width) of each, mono ones (one instance per channel), instruments (no input, \(width) outputs) or plugins without audio ports")
            }
        }
        var graph = PluginGraph(inputs: width, outputs: width)
        do throws(GraphError) {
            for stage in stages { for member in stage { try graph.add(member.node) } }
            for channel in 0 ..< width {
                var source = GraphEndpoint.graphInput(channel)
                for stage in stages {
                    let member = stage.count == 1 ? stage[0] : stage[channel]
                    let port = stage.count == 1 ? channel : 0
                    let node = member.node
                    let audioInputs = member.instance.description.audioInputs.count, audioOutputs = member.instance.description.audioOutputs.count
                    if audioOutputs == 0 { continue }   // no audio port: not on the channels' path
                    if audioInputs > 0 { try graph.connect(source, to: .plugin(node: member.id, port: node.inputs[port])) }
                    source = .plugin(node: member.id, port: node.outputs[port])
                }
                try graph.connect(source, to: .graphOutput(channel))
            }
            var midiSource = GraphEndpoint.midiInput
            for stage in stages {
                for member in stage {
                    if let input = member.node.midiInputs.first { try graph.connect(midiSource, to: .plugin(node: member.id, port: input)) }
                }
                if let output = stage[0].node.midiOutputs.first { midiSource = .plugin(node: stage[0].id, port: output) }
            }
            if midiSource != .midiInput { try graph.connect(midiSource, to: .midiOutput) }
        } catch {
            throw PluginError(.runtime, "cannot make the chain's graph: \(error)")
        }
        self.graph = graph
        nodes = stages.flatMap { $0 }
    }
}
