import AQCore
import AQGraph

extension GraphError {
    /// A plugin's refusal as a graph's: usage (a value out of range, a preset it lacks) is
    /// invalid, anything else failed.
    init(_ error: PluginError) {
        self.init(error.kind == .usage ? .invalid : .failed, error.message)
    }
}

/// LV2 plugins in a plugin graph that runs on a driver while it is edited, what `aqjack host`
/// runs and its control socket changes: nodes added and removed, connections made and broken
/// (each edit builds a new ``GraphRunner`` here and swaps it in at a cycle boundary, so the audio
/// never stops), controls set, presets applied and nodes bypassed while they run (no swap).
///
/// ```swift
/// let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 2, outputs: 2)
/// try live.add("http://plugin.org.uk/swh-plugins/fastLookaheadLimiter", id: "lim")
/// try live.connect("in_1", "lim:in_1"); try live.connect("lim:out_1", "out_1")
/// try live.start()
/// try live.set("lim", "ingain", to: -3)
/// ```
///
/// Threads: one thread at a time (the owner serializes its callers), never the process thread.
public final class LiveGraph {
    public let world: LV2World
    public let host: GraphHost
    /// The graph as it runs now (nodes' latencies as last read).
    public private(set) var graph: PluginGraph
    /// The nodes by id.
    public private(set) var nodes: [String: LV2GraphNode] = [:]
    /// MIDI controllers mapped to controls, in the order mapped.
    public private(set) var mappings: [GraphDocument.MIDIMapping] = []
    /// The control MIDI learn will map the next controller to, and the count of control changes
    /// seen when it was asked.
    private var learning: (id: String, symbol: String, seen: Int)?
    /// Nodes removed whose runner the process thread had not yet let go of: freed at the next swap.
    private var removed: [LV2GraphNode] = []
    private var nextNumber = 1

    /// A graph of `inputs` and `outputs` channels on `driver` (channels `in_N`, `out_N`, the
    /// MIDI input `midi_in`, whose events go where it is connected and whose controllers
    /// ``mapMIDI(_:_:channel:controller:minimum:maximum:)`` binds, and the MIDI output
    /// `midi_out`), with no plugin; nothing runs before ``start()``.
    /// - Throws: channels the driver refuses (failed).
    public init(world: LV2World, driver: any AudioDriver, inputs: Int, outputs: Int) throws(GraphError) {
        self.world = world
        graph = PluginGraph(inputs: inputs, outputs: outputs)
        do {
            host = try GraphHost(driver: driver, inputs: inputs, outputs: outputs, midi: true)
        } catch {
            throw GraphError(.failed, "cannot make the graph's channels: \(error)")
        }
    }

    /// A chain's graph and instances (``LV2Chain``) on `driver`.
    public convenience init(chain: LV2Chain, world: LV2World, driver: any AudioDriver) throws(GraphError) {
        try self.init(world: world, driver: driver, inputs: chain.graph.inputCount, outputs: chain.graph.outputCount)
        graph = chain.graph
        for node in chain.nodes {
            node.follow(host.transport)
            nodes[node.id] = node
        }
        nextNumber = chain.nodes.count + 1
        try swap()
    }

    /// Starts the cycles.
    public func start() throws(GraphError) {
        do { try host.start() } catch { throw GraphError(.failed, "cannot start the graph: \(error)") }
        if host.runner == nil { try swap() }
    }

    /// Stops the cycles. Idempotent.
    public func stop() { host.stop() }

    /// The graph's latency as published, frames.
    public var latency: Int { host.runner?.plan.latency ?? 0 }

    /// The maximum frames a plugin runs at once: the driver's period, at least 4096.
    private var maximumBlock: Int { max(4096, host.driver.bufferSize) }

    // MARK: Edits (each swaps in a new runner)

    /// Instantiates plugin `uri` as node `id` (default: the next free number), with `settings`
    /// applied before it runs; it runs from the next cycle, its ports unconnected (silence in).
    /// - Throws: not-found for an unknown URI or a control or preset it lacks; exists for an id
    ///   in use; invalid for a value out of range or an id with other than letters, digits, `.`,
    ///   `_` and `-`; failed when the plugin cannot be instantiated.
    @discardableResult
    public func add(_ uri: String, id: String? = nil, settings: [LV2Stage.Setting] = []) throws(GraphError) -> LV2GraphNode {
        let id = id ?? freeID()
        try Self.check(id: id)
        guard nodes[id] == nil else { throw GraphError(.exists, "a node '\(id)' is already in the graph; expected a new id") }
        let node = try instantiate(uri, id: id, settings: settings, state: nil)
        var edited = graph
        try edited.add(node.node)
        nodes[id] = node
        do { try swap(to: edited) } catch {
            nodes[id] = nil
            throw error
        }
        return node
    }

    /// Removes node `id` and its connections.
    /// - Throws: not-found.
    public func remove(_ id: String) throws(GraphError) {
        var edited = graph
        try edited.remove(id)
        // Kept until a runner without it is known to run (the process thread may run the old one).
        if let node = nodes[id] { removed.append(node) }
        nodes[id] = nil
        let mapped = mappings
        mappings.removeAll { $0.id == id }
        do { try swap(to: edited) } catch {
            nodes[id] = removed.popLast()
            mappings = mapped
            throw error
        }
        if learning?.id == id { learning = nil }
    }

    /// Connects `source` to `destination`, endpoints as ``GraphEndpoint`` writes them: `in_N`,
    /// `out_N` or `ID:SYMBOL` (a plugin's audio port).
    /// - Throws: invalid for an endpoint that is none of those or faces the wrong way;
    ///   not-found, exists, cycle (naming the loop).
    public func connect(_ source: String, _ destination: String) throws(GraphError) {
        let (from, to) = (try Self.endpoint(source), try Self.endpoint(destination))
        var edited = graph
        try edited.connect(from, to: to)
        try swap(to: edited)
    }

    /// Removes the connection from `source` to `destination`.
    /// - Throws: invalid for an endpoint that is not one; not-found.
    public func disconnect(_ source: String, _ destination: String) throws(GraphError) {
        let (from, to) = (try Self.endpoint(source), try Self.endpoint(destination))
        var edited = graph
        try edited.disconnect(from, from: to)
        try swap(to: edited)
    }

    /// Reads every node's latency and, when one changed, swaps in a runner compensating the new
    /// latencies (its latency published to the driver). Returns whether one changed.
    @discardableResult
    public func refreshLatency() throws(GraphError) -> Bool {
        var edited = graph
        for node in graph.nodes {
            let now = nodes[node.id]?.instance.latencyFrames ?? node.latency
            if now != node.latency { try? edited.setLatency(now, of: node.id) }
        }
        guard edited != graph else { return false }
        try swap(to: edited)
        return true
    }

    // MARK: MIDI controllers

    /// Maps control change `controller` (0 ... 127) on MIDI `channel` (1 ... 16) of the graph's
    /// MIDI input to control input `symbol` of node `id`, from `minimum` (value 0) to `maximum`
    /// (value 127), by default the control's range; replaces a mapping of the same controller to
    /// the same control.
    /// - Throws: not-found (node, control); invalid (a channel, controller or bound out of range).
    public func mapMIDI(_ id: String, _ symbol: String, channel: Int, controller: Int, minimum: Float? = nil, maximum: Float? = nil) throws(GraphError) {
        let node = try self.node(id)
        try Self.checkInput(symbol, of: node.instance.description, node: id)
        guard (1 ... 16).contains(channel) else { throw GraphError(.invalid, "MIDI channel \(channel): expected 1 to 16") }
        guard (0 ... 127).contains(controller) else { throw GraphError(.invalid, "controller \(controller): expected 0 to 127") }
        let port = node.instance.description.controlInputs.first { $0.symbol == symbol }!
        guard let low = minimum ?? port.minimum, let high = maximum ?? port.maximum else {
            throw GraphError(.invalid, "\(symbol) of node '\(id)' declares no range: give MIN and MAX")
        }
        for bound in [low, high] {
            do { _ = try node.instance.checkedControlPort(symbol, value: bound) } catch { throw GraphError(error) }
            guard bound.isFinite else { throw GraphError(.invalid, "\(bound) cannot bound \(symbol): expected a finite value") }
        }
        let mapping = GraphDocument.MIDIMapping(id: id, symbol: symbol, channel: channel, controller: controller, minimum: low, maximum: high)
        let previous = mappings
        mappings.removeAll { $0.id == id && $0.symbol == symbol && $0.channel == channel && $0.controller == controller }
        mappings.append(mapping)
        do { try swap() } catch {
            mappings = previous
            throw error
        }
    }

    /// Removes every MIDI mapping to control `symbol` of node `id`; returns how many there were.
    /// - Throws: not-found (node).
    @discardableResult
    public func unmapMIDI(_ id: String, _ symbol: String) throws(GraphError) -> Int {
        _ = try node(id)
        let previous = mappings
        mappings.removeAll { $0.id == id && $0.symbol == symbol }
        guard mappings.count != previous.count else { return 0 }
        do { try swap() } catch {
            mappings = previous
            throw error
        }
        return previous.count - mappings.count
    }

    /// Arms MIDI learn: the next control change on the graph's MIDI input is mapped to control
    /// input `symbol` of node `id` over its whole range (``completeLearning()`` makes the
    /// mapping). Replaces a learn not yet completed.
    /// - Throws: not-found (node, control); invalid (a control without a declared range).
    public func learnMIDI(_ id: String, _ symbol: String) throws(GraphError) {
        let node = try self.node(id)
        try Self.checkInput(symbol, of: node.instance.description, node: id)
        let port = node.instance.description.controlInputs.first { $0.symbol == symbol }!
        guard port.minimum != nil, port.maximum != nil else {
            throw GraphError(.invalid, "\(symbol) of node '\(id)' declares no range to learn a controller over: map it with MIN and MAX")
        }
        learning = (id, symbol, host.latestControlChange.count)
    }

    /// Whether MIDI learn is armed.
    public var isLearning: Bool { learning != nil }

    /// The control MIDI learn is armed for (node id, control symbol), or nil.
    public var learningTarget: (id: String, symbol: String)? { learning.map { ($0.id, $0.symbol) } }

    /// Disarms MIDI learn.
    public func cancelLearning() { learning = nil }

    /// When MIDI learn is armed and a control change has come since, maps that controller and
    /// returns the mapping; nil while none has come.
    /// - Throws: what ``mapMIDI(_:_:channel:controller:minimum:maximum:)`` throws (the learn ends).
    public func completeLearning() throws(GraphError) -> GraphDocument.MIDIMapping? {
        guard let learning else { return nil }
        let latest = host.latestControlChange
        guard latest.count != learning.seen else { return nil }
        self.learning = nil
        try mapMIDI(learning.id, learning.symbol, channel: latest.channel + 1, controller: latest.controller)
        return mappings.last
    }

    // MARK: Files

    /// The graph as a document: nodes in the order added, each control input's value (as last
    /// set, else as the plugin has it), bypass, and the connections in the order made.
    public var document: GraphDocument {
        let saved = graph.nodes.compactMap { graphNode -> GraphDocument.Node? in
            guard let node = nodes[graphNode.id] else { return nil }
            let symbols = node.instance.description.controlInputs.map(\.symbol)
            let controls = Dictionary(uniqueKeysWithValues: symbols.compactMap { symbol in node.value(of: symbol).map { (symbol, $0) } })
            return GraphDocument.Node(id: node.id, uri: node.instance.description.uri, controls: controls, bypass: node.isBypassed)
        }
        return GraphDocument(inputs: graph.inputCount, outputs: graph.outputCount, nodes: saved,
                             connections: graph.connections.map { ["\($0.source)", "\($0.destination)"] }, midi: mappings)
    }

    /// Saves the graph to `path` (``GraphDocument``), each node's LV2 state in
    /// `path.state/ID/`. The plugins keep running (LV2 lets a plugin save while it runs).
    /// - Throws: failed, naming what could not be written.
    public func save(to path: String) throws(GraphError) {
        let document = self.document
        for node in document.nodes {
            do { try nodes[node.id]?.instance.saveState(to: GraphDocument.stateDirectory(of: node.id, beside: path)) } catch {
                throw GraphError(.failed, error.message)
            }
        }
        try document.write(to: path)
    }

    /// Replaces the whole graph with the one saved at `path`: every plugin instantiated, its
    /// saved LV2 state restored and its controls set before it runs, then the new graph swapped
    /// in at one cycle boundary. Nothing changes when anything of it is refused.
    /// - Throws: failed (the file, an instantiation); invalid (not a graph file, other channel
    ///   counts than this graph's, a value out of range, a connection the graph refuses,
    ///   naming it); not-found (a plugin, control or port that is not there).
    public func load(from path: String) throws(GraphError) {
        let document = try GraphDocument(contentsOf: path)
        guard document.inputs == graph.inputCount, document.outputs == graph.outputCount else {
            throw GraphError(.invalid, "'\(path)' is a graph of \(document.inputs) inputs and \(document.outputs) outputs; this one has \(graph.inputCount) and \(graph.outputCount)")
        }
        var loaded: [String: LV2GraphNode] = [:]
        var edited = PluginGraph(inputs: document.inputs, outputs: document.outputs)
        for saved in document.nodes {
            try Self.check(id: saved.id)
            guard loaded[saved.id] == nil else { throw GraphError(.invalid, "'\(path)' has two nodes '\(saved.id)'; ids are unique") }
            let node = try instantiate(saved.uri, id: saved.id, settings: saved.controls.sorted { $0.key < $1.key }.map { .control(symbol: $0.key, value: $0.value) },
                                       state: GraphDocument.stateDirectory(of: saved.id, beside: path))
            do { try node.setBypassed(saved.bypass) } catch { throw GraphError(error) }
            loaded[saved.id] = node
            try edited.add(node.node)
        }
        for (index, pair) in document.connections.enumerated() {
            do {
                try edited.connect(try Self.endpoint(pair[0]), to: try Self.endpoint(pair[1]))
            } catch {
                throw GraphError(error.kind, "'\(path)', connection \(index + 1): \(error.description)")
            }
        }
        for mapping in document.midi ?? [] {
            guard let node = loaded[mapping.id] else {
                throw GraphError(.notFound, "'\(path)' maps MIDI to node '\(mapping.id)', which it does not have")
            }
            try Self.checkInput(mapping.symbol, of: node.instance.description, node: mapping.id)
            guard (1 ... 16).contains(mapping.channel), (0 ... 127).contains(mapping.controller) else {
                throw GraphError(.invalid, "'\(path)' maps channel \(mapping.channel) controller \(mapping.controller); expected channels 1 to 16 and controllers 0 to 127")
            }
            for bound in [mapping.minimum, mapping.maximum] {
                do { _ = try node.instance.checkedControlPort(mapping.symbol, value: bound) } catch { throw GraphError(error) }
            }
        }
        let previous = (nodes, mappings)
        removed += previous.0.values
        nodes = loaded
        mappings = document.midi ?? []
        do { try swap(to: edited) } catch {
            (nodes, mappings) = previous
            throw error
        }
        learning = nil
        nextNumber = 1
    }

    // MARK: Controls (no swap)

    /// Sets control input `symbol` of node `id` to `value`, from the node's next run.
    /// - Throws: not-found (node, control), invalid (out of range), failed (the queue is full).
    public func set(_ id: String, _ symbol: String, to value: Float) throws(GraphError) {
        let node = try self.node(id)
        try Self.checkInput(symbol, of: node.instance.description, node: id)
        do { try node.set(symbol, to: value) } catch { throw GraphError(error) }
    }

    /// Control `symbol` of node `id` (input: the value last set; output: as last written).
    /// - Throws: not-found.
    public func value(_ id: String, _ symbol: String) throws(GraphError) -> Float {
        let node = try self.node(id)
        guard let value = node.value(of: symbol) else {
            let controls = node.instance.description.ports.filter { $0.kind == .control }.map(\.symbol)
            throw GraphError(.notFound, "node '\(id)' ('\(node.instance.description.name)') has no control '\(symbol)'; expected one of \(controls.isEmpty ? "none" : controls.joined(separator: ", "))")
        }
        return value
    }

    /// Applies the control values of preset `name` (URI or label) to node `id`, from its next
    /// run. Only the preset's port values: a running plugin's own state is not restored.
    /// - Throws: not-found (node, preset), invalid (a value out of range: nothing applied).
    public func applyPreset(_ id: String, _ name: String) throws(GraphError) {
        let node = try self.node(id)
        let values: [(symbol: String, value: Float)]
        do { values = try node.instance.presetValues(name) } catch {
            throw GraphError(error.message.contains("has no preset") ? .notFound : GraphError(error).kind, error.message)
        }
        for (symbol, value) in values {
            do { try node.set(symbol, to: value) } catch { throw GraphError(error) }
        }
    }

    /// Saves node `id`'s control values and state as the user's preset `label`
    /// (``LV2PluginInstance/savePreset(_:)``), which ``applyPreset(_:_:)`` then finds.
    /// - Throws: not-found (node); invalid (a label that cannot name a preset, a LADSPA
    ///   plugin); failed (the preset folder cannot be written).
    public func savePreset(_ id: String, _ label: String) throws(GraphError) -> LV2Preset {
        let node = try self.node(id)
        // The values as set: a `set` just before is saved though the plugin has it only from its next run.
        let values = Dictionary(node.instance.description.controlInputs.compactMap { port in node.value(of: port.symbol).map { (port.symbol, $0) } }) { first, _ in first }
        do { return try node.instance.savePreset(label, values: values) } catch {
            throw GraphError(error.kind == .usage ? .invalid : .failed, error.message)
        }
    }

    /// Bypasses node `id` (on) or runs it again (off): its inputs go to its outputs delayed by
    /// its latency while bypassed, so every path stays compensated; by the plugin itself through
    /// its `lv2:enabled` port when it has one (``LV2GraphNode/setBypassed(_:)``). From the next cycle.
    /// - Throws: not-found; failed when the change cannot be queued.
    public func bypass(_ id: String, _ on: Bool) throws(GraphError) {
        let node = try self.node(id)
        do { try node.setBypassed(on) } catch { throw GraphError(error) }
    }

    public func node(_ id: String) throws(GraphError) -> LV2GraphNode {
        guard let node = nodes[id] else {
            throw GraphError(.notFound, "no node '\(id)' in the graph; it has \(graph.nodes.isEmpty ? "none" : graph.nodes.map { "'\($0.id)'" }.joined(separator: ", "))")
        }
        return node
    }

    // MARK: Helpers

    /// Builds a runner for `edited` (every node's kernel) and swaps it in; `graph` becomes
    /// `edited`. The runner it replaces is released once the process thread has let go of it,
    /// and with it the nodes removed before.
    private func swap(to edited: PluginGraph? = nil) throws(GraphError) {
        let next = edited ?? graph
        let runner: GraphRunner
        do {
            let bindings = mappings.compactMap { mapping in
                nodes[mapping.id]?.instance.controlInputValue(mapping.symbol).map {
                    GraphControlBinding(channel: UInt8(mapping.channel - 1), controller: UInt8(mapping.controller),
                                        minimum: mapping.minimum, maximum: mapping.maximum, target: $0)
                }
            }
            runner = try GraphRunner(graph: next, plan: GraphPlan(next), kernels: nodes.mapValues(\.kernel),
                                     maximumFrames: max(host.driver.bufferSize, 1), bindings: bindings)
            if try host.run(runner) { removed.removeAll() }
        } catch let error as GraphError {
            throw error
        } catch {
            throw GraphError(.failed, "cannot run the edited graph: \(error)")
        }
        graph = next
    }

    /// Plugin `uri` as node `id`: its saved state in `state` restored when one is there, then
    /// `settings` applied, primed; not yet in any runner.
    private func instantiate(_ uri: String, id: String, settings: [LV2Stage.Setting], state: String?) throws(GraphError) -> LV2GraphNode {
        let description: LV2PluginDescription
        do { description = try world.describe(uri) } catch {
            throw GraphError(.notFound, error.message)
        }
        for case .control(let symbol, _) in settings { try Self.checkInput(symbol, of: description, node: id) }
        do {
            let instance = try PluginFormat.instantiate(world: world, identifier: uri, sampleRate: Double(host.driver.sampleRate),
                                                        maximumBlock: maximumBlock, realtime: true)
            if let state { _ = try instance.restoreState(from: state) }
            try instance.apply(settings)
            let node = try LV2GraphNode(id: id, instance: instance)
            node.follow(host.transport)
            return node
        } catch {
            throw GraphError(error)
        }
    }

    private func freeID() -> String {
        while nodes["\(nextNumber)"] != nil { nextNumber += 1 }
        defer { nextNumber += 1 }
        return "\(nextNumber)"
    }

    private static func check(id: String) throws(GraphError) {
        let allowed = id.unicodeScalars.allSatisfy { ("a" ... "z").contains($0) || ("A" ... "Z").contains($0) || ("0" ... "9").contains($0) || "._-".unicodeScalars.contains($0) }
        guard !id.isEmpty, id.utf8.count <= 64, allowed else {
            throw GraphError(.invalid, "'\(id)' cannot be a node id: expected 1 to 64 letters, digits, '.', '_' or '-'")
        }
    }

    private static func checkInput(_ symbol: String, of description: LV2PluginDescription, node id: String) throws(GraphError) {
        guard description.controlInputs.contains(where: { $0.symbol == symbol }) else {
            let known = description.controlInputs.map(\.symbol)
            throw GraphError(.notFound, "node '\(id)' ('\(description.name)') has no control input '\(symbol)'; expected one of \(known.isEmpty ? "none" : known.joined(separator: ", "))")
        }
    }

    /// `in_N`, `out_N` (N from 1) or `ID:SYMBOL`.
    static func endpoint(_ text: String) throws(GraphError) -> GraphEndpoint {
        if let endpoint = GraphEndpoint(text) { return endpoint }
        throw GraphError(.invalid, "'\(text)' is not an endpoint: expected in_N or out_N (N from 1) or NODE:PORT")
    }
}
