/// Where a connection of a ``PluginGraph`` starts or ends: one of the graph's own input or
/// output channels (0-based; on JACK, its ports), its MIDI input or output (`midi_in`,
/// `midi_out`), or a port of a plugin node named by the node's id and the port's symbol: an
/// audio or CV port (both carry one float per frame and connect alike), or a MIDI event port.
/// Audio connects to audio, MIDI to MIDI.
public enum GraphEndpoint: Hashable, Sendable, CustomStringConvertible {
    case graphInput(Int)
    case graphOutput(Int)
    case midiInput
    case midiOutput
    case plugin(node: String, port: String)

    public var description: String {
        switch self {
        case .graphInput(let channel): "in_\(channel + 1)"
        case .graphOutput(let channel): "out_\(channel + 1)"
        case .midiInput: "midi_in"
        case .midiOutput: "midi_out"
        case .plugin(let node, let port): "\(node):\(port)"
        }
    }

    /// Reads what ``description`` writes: `in_N` or `out_N` (N from 1), `midi_in`, `midi_out`,
    /// or `NODE:PORT`.
    public init?(_ text: String) {
        if text == "midi_in" || text == "midi_out" {
            self = text == "midi_in" ? .midiInput : .midiOutput
            return
        }
        if let colon = text.firstIndex(of: ":") {
            let node = String(text[..<colon]), port = String(text[text.index(after: colon)...])
            guard !node.isEmpty, !port.isEmpty else { return nil }
            self = .plugin(node: node, port: port)
            return
        }
        for (prefix, make) in [("in_", GraphEndpoint.graphInput), ("out_", GraphEndpoint.graphOutput)] where text.hasPrefix(prefix) {
            guard let number = Int(text.dropFirst(prefix.count)), number >= 1, String(number) == text.dropFirst(prefix.count) else { return nil }
            self = make(number - 1)
            return
        }
        return nil
    }

    /// The plugin node it belongs to, if any.
    public var node: String? {
        if case .plugin(let node, _) = self { node } else { nil }
    }
}

/// A plugin of a graph as the graph sees it: its id, its audio and CV ports' symbols (and which
/// of them are CV), its MIDI event ports' symbols, and the latency it reports (frames from its
/// inputs to its outputs).
public struct GraphNode: Sendable, Equatable {
    public let id: String
    public let inputs: [String]
    public let outputs: [String]
    public let midiInputs: [String]
    public let midiOutputs: [String]
    /// The symbols among ``inputs`` and ``outputs`` of control-voltage ports.
    public let controlVoltage: Set<String>
    public var latency: Int

    public init(id: String, inputs: [String], outputs: [String], midiInputs: [String] = [], midiOutputs: [String] = [],
                controlVoltage: Set<String> = [], latency: Int = 0) {
        self.id = id
        self.inputs = inputs
        self.outputs = outputs
        self.midiInputs = midiInputs
        self.midiOutputs = midiOutputs
        self.controlVoltage = controlVoltage
        self.latency = latency
    }
}

/// One connection: frames from `source` (a graph input or a plugin output) are added into
/// `destination` (a plugin input or a graph output); several sources into one destination sum.
/// Or a MIDI one: the events of `source` (`midi_in` or a plugin's MIDI output) go to
/// `destination` (a plugin's MIDI input or `midi_out`); several sources merge in frame order.
public struct GraphConnection: Hashable, Sendable, CustomStringConvertible {
    public let source: GraphEndpoint
    public let destination: GraphEndpoint

    public init(_ source: GraphEndpoint, _ destination: GraphEndpoint) {
        self.source = source
        self.destination = destination
    }

    public var description: String { "\(source) -> \(destination)" }
}

/// What a graph refused: a kind a client can act on (the control socket's error codes,
/// docs/CONTROL.md), and words naming what was wrong and what was expected. A graph refusing an
/// edit is as it was before it.
public struct GraphError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// A node, port or connection that is not in the graph.
        case notFound = "not-found"
        /// A node id or connection already in it.
        case exists
        /// A connection that would close a loop.
        case cycle
        /// Anything else the graph cannot take (a port facing the wrong way, an empty id, a value
        /// out of range).
        case invalid
        /// A plugin, a file or the driver failed (an instantiation refused, the server gone).
        case failed
    }

    public let kind: Kind
    public let description: String
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// Plugins (nodes) and the connections between them and the graph's own inputs and outputs:
/// chains and parallel paths, split (one source, several destinations) and summed (several
/// sources, one destination); MIDI connections beside the audio ones. Always acyclic (MIDI
/// connections count): a connection that would close a cycle is refused, naming it.
/// ``GraphPlan`` turns it into a run order with every audio path's delay compensated.
///
/// A value type, edited off the process thread (the host builds a new plan from the edited
/// graph and swaps it in).
public struct PluginGraph: Sendable, Equatable {
    public let inputCount: Int
    public let outputCount: Int
    /// The nodes in the order added.
    public private(set) var nodes: [GraphNode] = []
    /// The connections in the order made.
    public private(set) var connections: [GraphConnection] = []

    /// A graph with `inputs` input and `outputs` output channels and no plugin.
    public init(inputs: Int, outputs: Int) {
        precondition(inputs >= 0 && outputs >= 0, "a graph's channel counts are 0 or more")
        inputCount = inputs
        outputCount = outputs
    }

    public func node(_ id: String) -> GraphNode? { nodes.first { $0.id == id } }

    /// Adds a plugin node.
    /// - Throws: an id already in the graph, or an empty one.
    public mutating func add(_ node: GraphNode) throws(GraphError) {
        guard !node.id.isEmpty else { throw GraphError(.invalid, "a node needs an id; got an empty one") }
        guard self.node(node.id) == nil else { throw GraphError(.exists, "a node '\(node.id)' is already in the graph; expected a new id") }
        guard node.latency >= 0 else { throw GraphError(.invalid, "node '\(node.id)' reports a latency of \(node.latency) frames; expected 0 or more") }
        nodes.append(node)
    }

    /// Removes node `id` and every connection to or from it.
    /// - Throws: no such node.
    public mutating func remove(_ id: String) throws(GraphError) {
        guard node(id) != nil else { throw GraphError(.notFound, "no node '\(id)' in the graph; it has \(nodeList)") }
        nodes.removeAll { $0.id == id }
        connections.removeAll { $0.source.node == id || $0.destination.node == id }
    }

    /// Sets the latency node `id` reports now (a plugin's latency can change while it runs).
    public mutating func setLatency(_ frames: Int, of id: String) throws(GraphError) {
        guard let index = nodes.firstIndex(where: { $0.id == id }) else { throw GraphError(.notFound, "no node '\(id)' in the graph; it has \(nodeList)") }
        guard frames >= 0 else { throw GraphError(.invalid, "node '\(id)' reports a latency of \(frames) frames; expected 0 or more") }
        nodes[index].latency = frames
    }

    /// Connects `source` to `destination`.
    /// - Throws: an endpoint that is not in the graph or faces the wrong way, audio to MIDI or
    ///   MIDI to audio, a connection that exists, or one that would make a cycle (named).
    public mutating func connect(_ source: GraphEndpoint, to destination: GraphEndpoint) throws(GraphError) {
        try check(source, isSource: true)
        try check(destination, isSource: false)
        let (fromMIDI, toMIDI) = (carriesMIDI(source), carriesMIDI(destination))
        guard fromMIDI == toMIDI else {
            throw GraphError(.invalid, "\(source) carries \(fromMIDI ? "MIDI" : "audio") and \(destination) \(toMIDI ? "MIDI" : "audio"): connect audio to audio and MIDI to MIDI")
        }
        let connection = GraphConnection(source, destination)
        guard !connections.contains(connection) else { throw GraphError(.exists, "\(connection) is already connected") }
        if let from = source.node, let to = destination.node, let path = self.path(from: to, to: from) {
            throw GraphError(.cycle, "connecting \(connection) would make a cycle: \((path + [to]).joined(separator: " -> ")); a graph's paths must not loop")
        }
        connections.append(connection)
    }

    /// Removes the connection from `source` to `destination`.
    /// - Throws: no such connection.
    public mutating func disconnect(_ source: GraphEndpoint, from destination: GraphEndpoint) throws(GraphError) {
        let connection = GraphConnection(source, destination)
        guard let index = connections.firstIndex(of: connection) else { throw GraphError(.notFound, "\(connection) is not connected") }
        connections.remove(at: index)
    }

    /// Whether `endpoint` (one of this graph's) carries MIDI events rather than frames.
    public func carriesMIDI(_ endpoint: GraphEndpoint) -> Bool {
        switch endpoint {
        case .midiInput, .midiOutput: true
        case .graphInput, .graphOutput: false
        case .plugin(let id, let port): node(id).map { $0.midiInputs.contains(port) || $0.midiOutputs.contains(port) } ?? false
        }
    }

    private var nodeList: String { nodes.isEmpty ? "none" : nodes.map { "'\($0.id)'" }.joined(separator: ", ") }

    private func check(_ endpoint: GraphEndpoint, isSource: Bool) throws(GraphError) {
        let role = isSource ? "a source" : "a destination"
        switch endpoint {
        case .graphInput(let channel):
            guard isSource else { throw GraphError(.invalid, "\(endpoint) is a graph input: it can only be a source; expected a plugin input or a graph output") }
            guard (0 ..< inputCount).contains(channel) else { throw GraphError(.notFound, "\(endpoint): the graph has \(inputCount) inputs") }
        case .graphOutput(let channel):
            guard !isSource else { throw GraphError(.invalid, "\(endpoint) is a graph output: it can only be a destination; expected a graph input or a plugin output") }
            guard (0 ..< outputCount).contains(channel) else { throw GraphError(.notFound, "\(endpoint): the graph has \(outputCount) outputs") }
        case .midiInput:
            guard isSource else { throw GraphError(.invalid, "midi_in is the graph's MIDI input: it can only be a source; expected a plugin's MIDI input or midi_out") }
        case .midiOutput:
            guard !isSource else { throw GraphError(.invalid, "midi_out is the graph's MIDI output: it can only be a destination; expected midi_in or a plugin's MIDI output") }
        case .plugin(let id, let port):
            guard let node = node(id) else { throw GraphError(.notFound, "\(endpoint): no node '\(id)' in the graph; it has \(nodeList)") }
            let ports = isSource ? node.outputs + node.midiOutputs : node.inputs + node.midiInputs
            guard ports.contains(port) else {
                let other = isSource ? node.inputs + node.midiInputs : node.outputs + node.midiOutputs
                if other.contains(port) { throw GraphError(.invalid, "\(endpoint) is an \(isSource ? "input" : "output"), not \(role); expected one of \(ports.joined(separator: ", "))") }
                throw GraphError(.notFound, "\(endpoint): node '\(id)' has no \(isSource ? "output" : "input") '\(port)'; expected one of \(ports.isEmpty ? "none" : ports.joined(separator: ", "))")
            }
        }
    }

    /// The nodes on a path of connections from node `from` to node `to` (both included), if one
    /// exists.
    func path(from: String, to: String) -> [String]? {
        if from == to { return [from] }
        var seen: Set<String> = [from]
        var stack: [[String]] = [[from]]
        while let path = stack.popLast() {
            let last = path[path.count - 1]
            for connection in connections where connection.source.node == last {
                guard let next = connection.destination.node, seen.insert(next).inserted else { continue }
                if next == to { return path + [next] }
                stack.append(path + [next])
            }
        }
        return nil
    }
}
