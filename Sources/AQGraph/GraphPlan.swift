/// A ``PluginGraph`` made ready to run: the nodes in an order in which every node runs after
/// all that feed it, and for each destination (a plugin input, a graph output) the sources summed
/// into it, each with the delay that compensates its path (plugin delay compensation).
///
/// Latencies, frames: a graph input and `midi_in` arrive at 0; a node's inputs, audio and MIDI,
/// are aligned to the latest of them (each source delayed by the difference), and its outputs
/// carry that plus the node's own latency. Every graph output and `midi_out` is aligned to the
/// latest path to any of them, ``latency``, the graph's total, which the host publishes on its
/// ports. An input or output with no connection carries silence. A MIDI source's delay holds
/// its events back that many frames (``GraphMIDIRouter``), as an audio source's delay line does
/// its samples, so a note reaches a synth with the audio beside it and `midi_out` with the
/// graph's outputs.
///
/// Made off the process thread; the processor that runs it only reads it.
public struct GraphPlan: Sendable, Equatable {
    /// One source summed into a destination, delayed by `delay` frames.
    public struct Feed: Sendable, Equatable, CustomStringConvertible {
        public let source: GraphEndpoint
        public let delay: Int
        public init(source: GraphEndpoint, delay: Int) {
            self.source = source
            self.delay = delay
        }

        public var description: String { delay == 0 ? "\(source)" : "\(source) +\(delay)" }
    }

    /// The node ids in run order.
    public let order: [String]
    /// What each connected destination sums, in the order the connections were made.
    public let feeds: [GraphEndpoint: [Feed]]
    /// What each connected MIDI destination (a plugin's MIDI input, `midi_out`) merges, in the
    /// order the connections were made, each source with its delay.
    public let midiFeeds: [GraphEndpoint: [Feed]]
    /// The graph's latency, frames: the latest path to an output (audio or `midi_out`), to which
    /// every output is aligned.
    public let latency: Int
    /// When each node's outputs carry the graph inputs' frames, frames after them.
    public let outputLatency: [String: Int]
    /// The graph's input channels (0-based) that feed only plugins' CV inputs, and its output
    /// channels fed only from plugins' CV outputs (at least one connection each): the channels
    /// that carry control voltage (on JACK, ports marked signal-type CV).
    public let controlVoltageInputs: Set<Int>
    public let controlVoltageOutputs: Set<Int>

    public init(_ graph: PluginGraph) {
        // Kahn's order, ties kept in the order the nodes were added.
        var waiting = Dictionary(uniqueKeysWithValues: graph.nodes.map { node in
            (node.id, Set(graph.connections.compactMap { $0.destination.node == node.id ? $0.source.node : nil }))
        })
        var order: [String] = []
        while order.count < graph.nodes.count {
            guard let next = graph.nodes.first(where: { waiting[$0.id]?.isEmpty == true }) else {
                preconditionFailure("a PluginGraph is acyclic by construction")
            }
            order.append(next.id)
            waiting[next.id] = nil
            for key in waiting.keys { waiting[key]?.remove(next.id) }
        }

        var outputLatency: [String: Int] = [:]
        func arrival(_ source: GraphEndpoint) -> Int { source.node.map { outputLatency[$0] ?? 0 } ?? 0 }
        var feeds: [GraphEndpoint: [Feed]] = [:]
        var midiFeeds: [GraphEndpoint: [Feed]] = [:]
        // Each connection into a set aligned at `aligned` frames: its source delayed by the rest.
        func feed(_ connections: [GraphConnection], alignedAt aligned: Int) {
            for connection in connections {
                let feed = Feed(source: connection.source, delay: aligned - arrival(connection.source))
                if graph.carriesMIDI(connection.source) {
                    midiFeeds[connection.destination, default: []].append(feed)
                } else {
                    feeds[connection.destination, default: []].append(feed)
                }
            }
        }
        for id in order {
            let node = graph.node(id)!
            let incoming = graph.connections.filter { $0.destination.node == id }
            let aligned = incoming.map { arrival($0.source) }.max() ?? 0
            feed(incoming, alignedAt: aligned)
            outputLatency[id] = aligned + node.latency
        }
        let toOutputs = graph.connections.filter {
            switch $0.destination {
            case .graphOutput, .midiOutput: true
            default: false
            }
        }
        let latency = toOutputs.map { arrival($0.source) }.max() ?? 0
        feed(toOutputs, alignedAt: latency)
        self.midiFeeds = midiFeeds
        self.order = order
        self.feeds = feeds
        self.latency = latency
        self.outputLatency = outputLatency
        func isCV(_ endpoint: GraphEndpoint) -> Bool {
            guard case .plugin(let id, let port) = endpoint else { return false }
            return graph.node(id)?.controlVoltage.contains(port) == true
        }
        var ends: [GraphEndpoint: [Bool]] = [:]
        for connection in graph.connections {
            if case .graphInput = connection.source { ends[connection.source, default: []].append(isCV(connection.destination)) }
            if case .graphOutput = connection.destination { ends[connection.destination, default: []].append(isCV(connection.source)) }
        }
        var cvInputs = Set<Int>(), cvOutputs = Set<Int>()
        for (endpoint, kinds) in ends where kinds.allSatisfy({ $0 }) {
            switch endpoint {
            case .graphInput(let channel): cvInputs.insert(channel)
            case .graphOutput(let channel): cvOutputs.insert(channel)
            default: break
            }
        }
        controlVoltageInputs = cvInputs
        controlVoltageOutputs = cvOutputs
    }
}
