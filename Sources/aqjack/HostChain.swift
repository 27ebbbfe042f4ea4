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
/// The chain is as wide as its widest plugin; a mono plugin runs once per channel
/// (``LV2Chain``). No console, MIDI or `--state` yet.
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
        let chain: LV2Chain
        do throws(PluginError) {
            chain = try LV2Chain(world: world, plugins: plugins.map { ($0.uri, $0.settings) }, sampleRate: Double(driver.sampleRate),
                                 maximumBlock: max(4096, driver.bufferSize), realtime: true)
        } catch {
            client.close()
            Diagnostics.error(error.message)
            return exitStatus(for: error)
        }
        let graph = chain.graph, nodes = chain.nodes
        let (audioFrom, missingFrom) = PortMatching.select(sources, from: client.portNames(direction: .output, audioOnly: true))
        let (audioTo, missingTo) = PortMatching.select(destinations, from: client.portNames(direction: .input, audioOnly: true))
        if !(missingFrom + missingTo).isEmpty {
            client.close()
            Diagnostics.error("no JACK port matches \((missingFrom + missingTo).map { "'\($0)'" }.joined(separator: ", ")) on server '\(client.serverName)'; `aqjack --ports` lists them")
            return ExitStatus.failure
        }
        let host: GraphHost
        do {
            let runner = try GraphRunner(graph: graph, plan: GraphPlan(graph), kernels: chain.kernels,
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
        let names = plugins.indices.map { index in nodes.first { $0.id == "\(index + 1)" || $0.id == "\(index + 1).1" }?.instance.description.name ?? "" }
        if !json { print("hosting a chain of \(plugins.count) plugins (\(names.joined(separator: " -> "))) as '\(client.name)', latency \(latency) frames") }
        nsm?.confirmOpen(message: "hosting a chain of \(plugins.count) plugins as '\(client.name)'")
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
            "hosted a chain of \(plugins.count) plugins: latency \(latency) frames, xruns \(summary.xruns), stopped by: \(reason)"
        }
        return cause == .serverShutdown ? ExitStatus.failure : ExitStatus.success
    }
}
