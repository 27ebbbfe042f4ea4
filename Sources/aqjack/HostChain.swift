import AQCore
import AQGraph
import AQJack
import AQPlugins
import Foundation

/// `aqjack host URI [--set S=V]... URI [--set S=V]...`: the plugins as a chain on the JACK graph,
/// run as a plugin graph (``GraphHost``): `CLIENT:in_1 ...` into the first plugin's audio
/// inputs, each plugin's outputs into the next one's inputs, the last one's into
/// `CLIENT:out_1 ...`; the chain's latency (the sum of the plugins') published to JACK on those
/// ports. Until Ctrl-C or SIGTERM (exit 0) or the server's end (exit 1).
///
/// Adjacent plugins must have as many audio outputs as the next has inputs (a mono plugin on a
/// stereo path comes with the graph's next steps); no console, MIDI or `--state` yet.
struct HostChain {
    let plugins: [PluginChainOptions.Plugin]
    let sources: [String]
    let destinations: [String]
    let json: Bool

    struct Summary: Encodable {
        let plugins: [String]
        let client: String
        let latencyFrames: Int
        let xruns: Int
        let inputs: [String], outputs: [String]
        let exitReason: String
    }

    func run(globals: GlobalOptions, nsm: NSMClient?) throws(JackError) -> Int32 {
        let signals = SignalWatcher()
        let world = LV2World.loadedReporting()
        let client = try JackClient(name: globals.clientName, server: globals.server)
        let driver = JackDriver(client: client)
        let nodes: [LV2GraphNode]
        do throws(PluginError) { nodes = try makeNodes(world: world, driver: driver) } catch {
            client.close()
            Diagnostics.error(error.message)
            return exitStatus(for: error)
        }
        let graph: PluginGraph
        do throws(UsageError) { graph = try Self.chain(nodes) } catch {
            client.close()
            Diagnostics.error(error.message)
            return ExitStatus.usage
        }
        let (audioFrom, missingFrom) = PortMatching.select(sources, from: client.portNames(direction: .output, audioOnly: true))
        let (audioTo, missingTo) = PortMatching.select(destinations, from: client.portNames(direction: .input, audioOnly: true))
        if !(missingFrom + missingTo).isEmpty {
            client.close()
            Diagnostics.error("no JACK port matches \((missingFrom + missingTo).map { "'\($0)'" }.joined(separator: ", ")) on server '\(client.serverName)'; `aqjack --ports` lists them")
            return ExitStatus.failure
        }
        let host: GraphHost
        do {
            let runner = try GraphRunner(graph: graph, plan: GraphPlan(graph), kernels: Dictionary(uniqueKeysWithValues: nodes.map { ($0.id, $0.kernel) }),
                                         maximumFrames: client.bufferSize)
            host = try GraphHost(driver: driver, inputs: graph.inputCount, outputs: graph.outputCount)
            try host.run(runner)
            try host.start()
        } catch {
            client.close()
            Diagnostics.error("cannot start the chain on server '\(client.serverName)': \(error)")
            return ExitStatus.failure
        }
        for (source, port) in zip(audioFrom, host.inputs) { _ = try client.connect(source, to: port) }
        for (port, destination) in zip(host.outputs, audioTo) { _ = try client.connect(port, to: destination) }
        let latency = host.runner?.plan.latency ?? 0
        let names = nodes.map { $0.instance.description.name }
        if !json { print("hosting a chain of \(nodes.count) plugins (\(names.joined(separator: " -> "))) as '\(client.name)', latency \(latency) frames") }
        nsm?.confirmOpen(message: "hosting a chain of \(nodes.count) plugins as '\(client.name)'")
        let cause = SessionLoop.run(client: client, signals: signals, finished: { false }) {}
        let reason = switch cause {
        case .finished: "finished"
        case .serverShutdown: "server-shutdown"
        case .interrupt: "interrupt"
        case .terminate: "terminate"
        }
        let summary = Summary(plugins: plugins.map(\.uri), client: client.name, latencyFrames: latency,
                              xruns: client.notifications.xrunCount.load(ordering: .relaxed),
                              inputs: host.inputs, outputs: host.outputs, exitReason: reason)
        SessionLoop.waitForFreewheelEnd(client: client, signals: signals)
        SessionLoop.leaving(client, afterward: "the chain had stopped") {
            host.stop()
            client.close()
        }
        withExtendedLifetime(nodes) {}
        if cause == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))")
        }
        printSummary(summary, json: json) {
            "hosted a chain of \(nodes.count) plugins: latency \(latency) frames, xruns \(summary.xruns), stopped by: \(reason)"
        }
        return cause == .serverShutdown ? ExitStatus.failure : ExitStatus.success
    }

    /// Each plugin instantiated at the server's rate, its settings applied, as graph node "1", "2" ...
    private func makeNodes(world: LV2World, driver: JackDriver) throws(PluginError) -> [LV2GraphNode] {
        var nodes: [LV2GraphNode] = []
        for (index, plugin) in plugins.enumerated() {
            let instance = try LV2PluginInstance(world: world, uri: plugin.uri, sampleRate: Double(driver.sampleRate),
                                                 maximumBlock: max(4096, driver.bufferSize), realtime: true)
            try instance.apply(plugin.settings)
            nodes.append(try LV2GraphNode(id: "\(index + 1)", instance: instance))
        }
        return nodes
    }

    /// The nodes in a chain: the graph's inputs into the first, each into the next, the last into
    /// the graph's outputs.
    /// - Throws: adjacent plugins whose audio outputs and inputs differ in number.
    static func chain(_ nodes: [LV2GraphNode]) throws(UsageError) -> PluginGraph {
        let described = nodes.map(\.node)
        for (from, to) in zip(zip(nodes, described), zip(nodes, described).dropFirst()) where from.1.outputs.count != to.1.inputs.count {
            throw UsageError(message: "'\(from.0.instance.description.name)' (plugin \(from.1.id)) has \(from.1.outputs.count) audio outputs and '\(to.0.instance.description.name)' (plugin \(to.1.id)) \(to.1.inputs.count) audio inputs: a chain needs them equal")
        }
        var graph = PluginGraph(inputs: described.first?.inputs.count ?? 0, outputs: described.last?.outputs.count ?? 0)
        do throws(GraphError) {
            for node in described { try graph.add(node) }
            for (index, node) in described.enumerated() {
                for (channel, port) in node.inputs.enumerated() {
                    let source: GraphEndpoint = index == 0 ? .graphInput(channel) : .plugin(node: described[index - 1].id, port: described[index - 1].outputs[channel])
                    try graph.connect(source, to: .plugin(node: node.id, port: port))
                }
            }
            if let last = described.last {
                for (channel, port) in last.outputs.enumerated() { try graph.connect(.plugin(node: last.id, port: port), to: .graphOutput(channel)) }
            }
        } catch {
            throw UsageError(message: "cannot make the chain: \(error)")
        }
        return graph
    }
}
