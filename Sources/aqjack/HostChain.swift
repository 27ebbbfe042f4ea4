import AQCore
import AQGraph
import AQJack
import AQPlugins
import AQWeb
import Foundation

/// `aqjack host URI [--set S=V]... URI [--set S=V]... [--control PORT]`: the plugins as a chain
/// on the JACK graph, run as a live plugin graph (``LiveGraph``): `CLIENT:in_1 ...` into the
/// first plugin's audio inputs, each plugin's outputs into the next one's inputs, the last one's
/// into `CLIENT:out_1 ...`; the graph's latency (a chain's: the sum of the plugins') published
/// to JACK on those ports, and published again when a plugin's changes. With `--control`, the
/// graph is edited and controlled over the control socket (``ControlServer``), from an empty
/// graph of `channels` when no URI is given. Until Ctrl-C or SIGTERM (exit 0) or the server's
/// end (exit 1).
///
/// The chain is as wide as its widest plugin; a mono plugin runs once per channel
/// (``LV2Chain``). No console or `--state` yet, and no MIDI to the plugins (the graph's `midi_in`
/// takes controllers mapped over the control socket).
struct HostChain {
    struct ControlOptions {
        var port: Int
        var host: String
        var token: String?
    }

    let plugins: [PluginChainOptions.Plugin]
    /// A saved graph to host instead of a chain (its channels are the file's).
    let graphFile: String?
    let channels: Int
    let control: ControlOptions?
    /// `--osc`: the control socket's verbs over OSC (``GraphOSC``).
    let osc: OSCOptions
    /// `--http` and `--events` (docs/WEB.md): the graph on a page, its commands over POST.
    var http = HTTPOptions()
    let sources: [String]
    let destinations: [String]
    let json: Bool
    /// Under a session manager, the session's folder: the graph is kept there (``sessionGraph``),
    /// loaded at the start when saved there (instead of the command line's plugins or file),
    /// saved on `/nsm/client/save` and at the end; an edit tells the manager of unsaved changes.
    let sessionFolder: String?

    /// The graph file in the session's folder (its plugins' state in `graph.json.state/`).
    var sessionGraph: String? { sessionFolder.map { $0 + "/graph.json" } }

    struct Summary: Encodable {
        let plugins: [String]
        let client: String
        let latencyFrames: Int
        /// Events that found no room in the graph or a MIDI port (``ProcessTiming/midiEventsLost``).
        let droppedMIDIEvents: Int
        let xruns: Int
        let inputs: [String], outputs: [String]
        let exitReason: String
    }

    func run(globals: GlobalOptions, nsm: NSMClient?) throws(JackError) -> Int32 {
        let signals = SignalWatcher()
        let world = LV2World.loadedReporting()
        let client = try JackClient(name: globals.clientName, server: globals.server)
        let driver = JackDriver(client: client)
        // A session's folder is the client's to make (NSM's API); a graph saved in it replaces the
        // command line's.
        if let sessionFolder { try? FileManager.default.createDirectory(atPath: sessionFolder, withIntermediateDirectories: true) }
        let restoring = sessionGraph.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
        let graphFile = restoring ?? self.graphFile
        var chain: LV2Chain?
        if restoring == nil, !plugins.isEmpty {
            do throws(PluginError) {
                chain = try LV2Chain(world: world, plugins: plugins.map { ($0.uri, $0.settings) }, sampleRate: Double(driver.sampleRate),
                                     maximumBlock: max(4096, driver.bufferSize), realtime: true)
            } catch {
                client.close()
                Diagnostics.error(error.message)
                return exitStatus(for: error)
            }
        }
        let live: LiveGraph
        do throws(GraphError) {
            if let chain {
                live = try LiveGraph(chain: chain, world: world, driver: driver)
            } else if let graphFile {
                let document = try GraphDocument(contentsOf: graphFile)
                live = try LiveGraph(world: world, driver: driver, inputs: document.inputs, outputs: document.outputs)
                try live.load(from: graphFile)
            } else {
                live = try LiveGraph(world: world, driver: driver, inputs: channels, outputs: channels)
            }
        } catch {
            client.close()
            Diagnostics.error(graphFile.map { "cannot host the graph '\($0)': \(error)" } ?? "cannot host the graph on server '\(client.serverName)': \(error)")
            return error.kind == .failed ? ExitStatus.failure : ExitStatus.usage
        }
        let selection = HostPortSelection(sources: sources, destinations: destinations, on: client)
        if !selection.unmatched.isEmpty {
            client.close()
            Diagnostics.error(selection.message(server: client.serverName))
            return ExitStatus.failure
        }
        let controller = GraphControl(live: live)
        if let nsm { controller.onEdit = { nsm.markDirty(true) } }
        var server: ControlServer?
        if let control {
            do throws(ControlServerError) {
                server = try ControlServer(host: control.host, port: control.port, token: control.token, control: controller,
                                           monitorInterval: Double(driver.bufferSize) / Double(driver.sampleRate))
            } catch {
                client.close()
                Diagnostics.error(error.message)
                return ExitStatus.failure
            }
        }
        var oscControl: OSCControl?
        if let port = osc.port {
            do throws(OSCControlError) {
                oscControl = try OSCControl(host: osc.host, port: port, token: osc.token,
                                            responder: GraphOSC(control: controller, feedbackInterval: Double(driver.bufferSize) / Double(driver.sampleRate)))
            } catch {
                client.close()
                Diagnostics.error(error.message)
                return ExitStatus.failure
            }
        }
        var events: SessionEvents?
        var web: SessionWeb?
        do {
            events = try SessionEvents.make(http)
            if http.port != nil {
                web = try SessionWeb(options: http, initial: Self.liveStatus(driver: driver, client: client, meter: live.host.outputLevels, finished: false), events: events?.log,
                                     pages: ["/graph": { GraphView.response(controller) }, "/plugins": GraphView.pluginList(controller, world: world)]) { verb, words in
                    GraphView.reply(controller.execute([verb] + words, connection: GraphView.connection).reply)
                }
            }
        } catch {
            client.close()
            Diagnostics.error((error as? UsageError)?.message ?? "\(error)")
            return ExitStatus.failure
        }
        let host = live.host
        do throws(GraphError) {
            try live.start()
        } catch {
            client.close()
            Diagnostics.error("cannot start the graph on server '\(client.serverName)': \(error)")
            return ExitStatus.failure
        }
        for (source, port) in zip(selection.audioFrom, host.inputs) { _ = try client.connect(source, to: port) }
        if let midi = host.midiInput { for source in selection.midiFrom { _ = try client.connect(source, to: midi) } }
        for (port, destination) in zip(host.outputs, selection.audioTo) { _ = try client.connect(port, to: destination) }
        if let midi = host.midiOutput { for destination in selection.midiTo { _ = try client.connect(midi, to: destination) } }
        if let server {
            server.start()
            if control?.port == 0 || !json { Diagnostics.note("control socket on \(control?.host ?? ""):\(server.port) (docs/CONTROL.md)") }
        }
        if let oscControl {
            oscControl.start()
            if osc.port == 0 || !json { Diagnostics.note("listening for OSC on \(osc.host):\(oscControl.port) (/aqjack/VERB: docs/CONTROL.md)") }
        }
        let latency = live.latency
        let names = plugins.indices.map { index in
            (live.nodes["\(index + 1)"] ?? live.nodes["\(index + 1).1"])?.instance.description.name ?? ""
        }
        if !json {
            print(graphFile.map { "hosting the graph '\($0)' (\(live.graph.nodes.count) plugins) as '\(client.name)', latency \(latency) frames" }
                ?? (plugins.isEmpty ? "hosting an empty graph of \(channels) channels as '\(client.name)'"
                : "hosting a chain of \(plugins.count) plugins (\(names.joined(separator: " -> "))) as '\(client.name)', latency \(latency) frames"))
        }
        if let nsm {
            // LV2 lets a plugin save while it runs: on the session manager's thread, under the
            // control's lock (no command edits the graph meanwhile).
            let path = sessionGraph ?? ""
            nsm.confirmOpen(message: "hosting a graph of \(live.graph.nodes.count) plugins as '\(client.name)'") {
                controller.withGraph { graph -> String? in
                    do throws(GraphError) { try graph.save(to: path) } catch { return error.description }
                    return nil
                }
            }
        }
        events?.log.post("started", [("plugins", "\(live.graph.nodes.count)"), ("latency", "\(live.latency)")])
        let cause = SessionLoop.run(client: client, signals: signals, finished: { false }) {
            // A plugin whose latency changed: the graph compensates it and JACK is told.
            controller.withGraph { _ = try? $0.refreshLatency() }
            switch web == nil ? nil : GraphView.completeLearning(controller) {
            case .success(let mapping)?:
                events?.log.post("midi-learned", [("id", JSONText.string(mapping.id)), ("symbol", JSONText.string(mapping.symbol)),
                                                  ("channel", "\(mapping.channel)"), ("controller", "\(mapping.controller)")])
            case .failure(let error)?:
                events?.log.post("midi-learned", [("error", JSONText.string(error.description))])
            case nil: break
            }
            if web != nil || events != nil {
                let status = Self.liveStatus(driver: driver, client: client, meter: live.host.outputLevels, finished: false)
                web?.update(status)
                events?.look(at: status)
            }
        }
        let reason = switch cause {
        case .finished: "finished"
        case .serverShutdown: "server-shutdown"
        case .interrupt: "interrupt"
        case .terminate: "terminate"
        }
        if cause == .serverShutdown {
            events?.log.post("server-shutdown", [("reason", JSONText.string(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))])
        }
        events?.log.post("finished", [("exitReason", JSONText.string(reason))])
        events?.log.close()
        web?.update(Self.liveStatus(driver: driver, client: client, meter: live.host.outputLevels, finished: true))
        web?.stop()
        server?.stop()
        oscControl?.stop()
        if let path = sessionGraph {
            do throws(GraphError) { try controller.withGraph { graph throws(GraphError) in try graph.save(to: path) } } catch {
                Diagnostics.error("the session's graph could not be saved at the end: \(error)")
            }
        }
        let summary = Summary(plugins: plugins.map(\.uri), client: client.name, latencyFrames: live.latency,
                              droppedMIDIEvents: live.host.droppedMIDIEvents + Int(client.processTiming.midiEventsLost),
                              xruns: client.notifications.xrunCount.load(ordering: .relaxed),
                              inputs: host.inputs, outputs: host.outputs, exitReason: reason)
        SessionLoop.waitForFreewheelEnd(client: client, signals: signals)
        SessionLoop.leaving(client, afterward: "the chain had stopped") {
            live.stop()
            client.close()
        }
        if cause == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))")
        }
        printSummary(summary, json: json) {
            "hosted a graph of \(live.graph.nodes.count) plugins: latency \(summary.latencyFrames) frames, xruns \(summary.xruns)\(summary.droppedMIDIEvents > 0 ? ", MIDI events dropped \(summary.droppedMIDIEvents)" : ""), stopped by: \(reason)"
        }
        return cause == .serverShutdown ? ExitStatus.failure : ExitStatus.success
    }

    /// What the web page shows of the host: running, its xruns, its outputs' levels (the latest
    /// window of about 50 ms), the verbs it takes over POST.
    static func liveStatus(driver: JackDriver, client: JackClient, meter: CycleLevelMeter, finished: Bool) -> LiveStatus {
        var status = LiveStatus(command: "host", state: finished ? "stopped" : "running", sampleRate: Double(driver.sampleRate))
        status.xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        status.levels = finished ? [] : meter.levels.map { LiveStatus.Level(peak: $0.peak, rms: $0.rms) }
        status.controls = finished ? [] : GraphView.verbs
        return status
    }
}
