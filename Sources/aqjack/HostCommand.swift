import AQCore
import AQJack
import AQPlugins
import Foundation
import Glibc

/// `aqjack host URI [--set SYMBOL=VALUE]... [--preset NAME] [-i IN_GLOB]... [-o OUT_GLOB]...
/// [--json]`: an LV2 plugin live on the JACK graph (``LV2LiveHost``), jalv's console mode for
/// scripts: ports named by the plugin's symbols, the plugin's latency reported to JACK, controls
/// changed live by lines `SYMBOL=VALUE` on standard input, until Ctrl-C or SIGTERM (exit 0) or
/// the server's end (exit 1). With several URIs, a chain of them (``HostChain``).
struct HostCommand {
    var uri = ""
    var settings: [LV2Stage.Setting] = []
    /// Every plugin given, in order, each with the `--set` and `--preset` after it.
    var plugins: [PluginChainOptions.Plugin] = []
    /// Ports to connect: `-i` JACK output ports feeding the plugin's inputs (audio, then CV, in
    /// order; MIDI output ports to its MIDI input), `-o` JACK input ports its outputs feed (audio,
    /// then CV, in order; MIDI input ports from its first MIDI output).
    var sources: [String] = []
    var destinations: [String] = []
    var json = false
    /// `--state DIR`: restored at the start when DIR holds a saved state, saved at the end.
    var stateDirectory: String?
    /// `--control PORT [--control-host ADDRESS] [--control-token TOKEN]`: the graph's control
    /// socket (docs/CONTROL.md); the plugins then run as an editable graph.
    var control: HostChain.ControlOptions?
    /// `--channels N`: the graph's channels when no URI is given (with --control).
    var channels: Int?
    /// `--graph FILE`: a saved graph (``GraphDocument``) to host.
    var graphFile: String?
    /// `--osc PORT [--osc-host ADDRESS] [--osc-token TOKEN]`: the control socket's verbs over OSC
    /// (``GraphOSC``); the plugins then run as an editable graph.
    var osc = OSCOptions()
    /// `--http [ADDRESS:]PORT` and `--events FILE|-` (docs/WEB.md); the plugins then run as an
    /// editable graph.
    var http = HTTPOptions()

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        var chain = PluginChainOptions()
        chain.plugins = [.init(uri: "")]
        var uris: [String] = []
        var controlPort: Int?, controlHost = "127.0.0.1", controlToken: String?
        while let argument = cursor.next() {
            switch argument {
            case .option("--control"):
                controlPort = try cursor.integer(for: "--control", in: 0 ... 65535, meaning: "a TCP port for the control socket (0: any free one, printed on standard error)")
            case .option("--control-host"):
                controlHost = try cursor.value(for: "--control-host", expected: "an IPv4 address to listen on, e.g. 127.0.0.1")
            case .option("--control-token"):
                controlToken = try cursor.value(for: "--control-token", expected: "a secret a connection gives first: auth TOKEN")
            case .option("--graph"):
                graphFile = try cursor.value(for: "--graph", expected: "a graph file saved by the control socket's save command")
            case .option("--channels"):
                channels = try cursor.integer(for: "--channels", in: 1 ... 64, meaning: "the graph's input and output channels")
            case .option("-i"), .option("--input"):
                sources.append(try cursor.value(for: "-i", expected: "a JACK output port name or glob to feed the plugin, e.g. -i 'system:capture_*'"))
            case .option("-o"), .option("--output"):
                destinations.append(try cursor.value(for: "-o", expected: "a JACK input port name or glob the plugin feeds, e.g. -o 'system:playback_*'"))
            case .option("--json"): json = true
            case .option("--state"):
                stateDirectory = try cursor.value(for: "--state", expected: "a directory for the plugin's state (restored at the start if saved there, saved at the end)")
            case .option("--lv2"):
                throw UsageError(message: "host runs one plugin, named as its operand: aqjack host URI [--set SYMBOL=VALUE] ...")
            case let .option(option):
                if try chain.parse(option, from: &cursor) { continue }
                if try osc.parse(option, from: &cursor) { continue }
                if try http.parse(option, from: &cursor) { continue }
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for host: expected --set, --preset, --state, --graph, --control, --control-host, --control-token, --osc, --osc-host, --osc-token, --http, --http-token, --http-token-file, --events, --channels, -i, -o, --json, --server or --name")
            case let .operand(word):
                // --set and --preset apply to the URI before them (those before the first URI, to it).
                if uris.isEmpty { chain.plugins[0].uri = word } else { chain.plugins.append(.init(uri: word)) }
                uris.append(word)
            }
        }
        if let controlPort {
            if controlToken == nil, let fromEnvironment = environmentValue("AQJACK_CONTROL_TOKEN"), !fromEnvironment.isEmpty { controlToken = fromEnvironment }
            if controlToken == "" { throw UsageError(message: "--control-token needs a non-empty secret") }
            if controlToken == nil && !LoopbackPeerOwner.isLoopbackHost(controlHost) {
                throw UsageError(message: "--control-host \(controlHost) listens beyond this machine: give --control-token TOKEN (or AQJACK_CONTROL_TOKEN) too, which a connection then gives first (auth TOKEN)")
            }
            control = .init(port: controlPort, host: controlHost, token: controlToken)
        } else if controlToken != nil || controlHost != "127.0.0.1" {
            throw UsageError(message: "--control-host and --control-token belong to the control socket: give --control PORT too")
        }
        try osc.validate()
        try http.validate()
        if graphFile != nil, !uris.isEmpty || channels != nil {
            throw UsageError(message: "--graph hosts a saved graph: give no URI and no --channels with it (the file has its plugins and channels)")
        }
        if channels != nil, control == nil && osc.port == nil && http.port == nil || !uris.isEmpty {
            throw UsageError(message: "--channels sizes an empty graph: give it with --control, --osc or --http and no URI (a chain is as wide as its widest plugin)")
        }
        guard !uris.isEmpty || control != nil || osc.port != nil || http.port != nil || graphFile != nil else {
            throw UsageError(message: "host needs a plugin URI, e.g. aqjack host http://plugin.org.uk/swh-plugins/amp (aqjack plugins lists them), or --control PORT (or --osc PORT) to build a graph over the socket")
        }
        if uris.count != 1 || control != nil || osc.port != nil || http.port != nil || http.events != nil, stateDirectory != nil {
            throw UsageError(message: "--state keeps one plugin's state: host one URI with it, without --control, --osc, --http, --events or --graph")
        }
        uri = uris.first ?? ""
        settings = chain.plugins[0].settings
        plugins = uris.isEmpty ? [] : chain.plugins
    }

    struct Summary: Encodable {
        let plugin: String
        let client: String
        let latencyFrames: Int
        let cycles: Int
        let droppedMIDIEvents: Int
        /// Work the plugin scheduled that its worker's ring had no room for (refused to the plugin).
        let refusedWorkRequests: Int
        let xruns: Int
        let inputs: [String], outputs: [String], midiInputs: [String]
        /// Control-voltage ports (JACK signal-type "CV") and MIDI outputs, as the plugin has them.
        let cvInputs: [String], cvOutputs: [String], midiOutputs: [String]
        /// The control inputs' values at the end (what --state saves).
        var controls: [String: Float] = [:]
        var stateDirectory: String?
        let exitReason: String
    }

    /// Under a session manager (NSM_URL set) the JACK client is named by the session's client
    /// id and the plugin's state lives in the session's folder: restored at the start when saved
    /// there, saved on `/nsm/client/save` and at the end; a control changed on the console marks
    /// the session dirty. Then hosts.
    func run(globals given: GlobalOptions) throws(JackError) -> Int32 {
        var command = self, globals = given
        var nsm: NSMClient?
        do throws(NSMError) {
            if let (manager, session) = try NSMClient.join(as: "aqjack host", capabilities: ":dirty:message:") {
                command.stateDirectory = session.path
                globals.clientName = session.clientID
                nsm = manager
            }
        } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }
        defer { nsm?.stop() }
        return try command.host(globals: globals, nsm: nsm)
    }

    private func host(globals: GlobalOptions, nsm: NSMClient?) throws(JackError) -> Int32 {
        // A LADSPA plugin runs as a one-node graph (the console and --state are LV2's).
        if plugins.count != 1 || control != nil || osc.port != nil || http.port != nil || http.events != nil || PluginFormat(identifier: uri) == .ladspa {
            var chain = HostChain(plugins: plugins, graphFile: graphFile, channels: channels ?? 2, control: control, osc: osc, sources: sources,
                                  destinations: destinations, json: json, sessionFolder: nsm != nil ? stateDirectory : nil)
            chain.http = http
            return try chain.run(globals: globals, nsm: nsm)
        }
        let signals = SignalWatcher()
        // A state directory that cannot be written is said now, with the system's reason, not
        // after the session when the state would be lost.
        if let stateDirectory {
            do throws(PluginError) { try LV2PluginInstance.checkStateDirectory(stateDirectory) } catch {
                Diagnostics.error(error.message)
                return ExitStatus.failure
            }
        }
        // lilv reads every bundle's Turtle while the server opens the client (the second waits
        // on jackd), so the two overlap (docs/MEASUREMENTS.md, "Starts").
        nonisolated(unsafe) var loaded: LV2World?
        let worldReady = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            loaded = LV2World()
            worldReady.signal()
        }
        let client: JackClient
        do {
            client = try JackClient(name: globals.clientName, server: globals.server)
        } catch {
            worldReady.wait()
            throw error
        }
        worldReady.wait()
        let world = loaded!
        world.reportLoadMessages()
        let host: LV2LiveHost
        do throws(PluginError) {
            host = try LV2LiveHost(world: world, uri: uri, settings: settings, driver: JackDriver(client: client))
        } catch {
            client.close()
            Diagnostics.error(error.message)
            return exitStatus(for: error)
        }
        // A saved state comes first; --set and --preset given now override it.
        if let stateDirectory {
            do throws(PluginError) {
                if try host.instance.restoreState(from: stateDirectory) {
                    try host.instance.apply(settings)
                }
            } catch {
                client.close()
                Diagnostics.error(error.message)
                return exitStatus(for: error)
            }
        }
        if !host.instance.description.isHardRealtimeCapable {
            Diagnostics.note("'\(host.instance.description.name)' does not declare lv2:hardRTCapable; it runs on JACK's process thread anyway, as jalv runs it")
        }
        // Which ports to connect, before activating: a glob that matches nothing is an error.
        let selection = HostPortSelection(sources: sources, destinations: destinations, on: client)
        if !selection.unmatched.isEmpty {
            client.close()
            Diagnostics.error(selection.message(server: client.serverName))
            return ExitStatus.failure
        }
        do throws(AudioDriverError) { try host.activate() } catch {
            client.close()
            Diagnostics.error("cannot start '\(host.instance.description.name)' on server '\(client.serverName)': \(error)")
            return ExitStatus.failure
        }
        for (source, port) in zip(selection.audioFrom, host.audioInputs + host.cvInputs) { _ = try client.connect(source, to: port) }
        if let midi = host.midiInputs.first { for source in selection.midiFrom { _ = try client.connect(source, to: midi) } }
        for (port, destination) in zip(host.audioOutputs + host.cvOutputs, selection.audioTo) { _ = try client.connect(port, to: destination) }
        if let midi = host.midiOutputs.first { for destination in selection.midiTo { _ = try client.connect(midi, to: destination) } }
        if !json {
            print("hosting \(host.instance.description.name) (\(uri)) as '\(client.name)', latency \(host.latencyFrames) frames; SYMBOL=VALUE on standard input sets a control")
        }
        let console = ControlConsole(host: host)
        if let nsm {
            // LV2 lets save run beside the plugin's run() (state.h: save is in its own threading
            // class), so it runs on the session manager's thread.
            nonisolated(unsafe) let instance = host.instance
            let folder = stateDirectory ?? ""
            nsm.confirmOpen(message: "hosting \(host.instance.description.name) as '\(client.name)'") {
                do throws(PluginError) { try instance.saveState(to: folder) } catch { return error.message }
                return nil
            }
        }
        // A plugin that needs fixed blocks cannot follow a change of JACK's period (its outputs
        // fall silent): the host ends, saying so.
        let periodChanged = { host.instance.fixedBlock.map { $0 != client.bufferSize } ?? false }
        let cause = SessionLoop.run(client: client, signals: signals, finished: periodChanged) {
            if console.applyPending() { nsm?.markDirty(true) }
            host.refreshLatency()
        }
        let reason = switch cause {
        case .finished: "period-changed"
        case .serverShutdown: "server-shutdown"
        case .interrupt: "interrupt"
        case .terminate: "terminate"
        }
        let summary = Summary(plugin: uri, client: client.name, latencyFrames: host.latencyFrames,
                              cycles: host.processor.cycleCount.load(ordering: .relaxed),
                              droppedMIDIEvents: host.processor.droppedMIDIEvents.load(ordering: .relaxed) + Int(client.processTiming.midiEventsLost),
                              refusedWorkRequests: host.instance.refusedWorkRequests,
                              xruns: client.notifications.xrunCount.load(ordering: .relaxed),
                              inputs: host.audioInputs, outputs: host.audioOutputs, midiInputs: host.midiInputs,
                              cvInputs: host.cvInputs, cvOutputs: host.cvOutputs, midiOutputs: host.midiOutputs,
                              exitReason: reason)
        SessionLoop.waitForFreewheelEnd(client: client, signals: signals)
        SessionLoop.leaving(client, afterward: "the plugin's state was not saved") { _ = try? client.deactivate() }
        var stateFailure: String?
        if let stateDirectory {
            do throws(PluginError) { try host.instance.saveState(to: stateDirectory) } catch { stateFailure = error.message }
        }
        let controls = Dictionary(uniqueKeysWithValues: host.instance.description.controlInputs.map { ($0.symbol, host.instance.control($0.symbol) ?? 0) })
        SessionLoop.leaving(client, afterward: "the plugin's state is saved") { client.close() }
        if cause == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))")
        }
        if cause == .finished, let block = host.instance.fixedBlock {
            Diagnostics.error("JACK's period changed to \(client.bufferSize) frames; '\(host.instance.description.name)' runs fixed blocks of \(block) (its outputs fell silent): start aqjack host again at the new period")
        }
        var report = summary
        report.controls = controls
        report.stateDirectory = stateFailure == nil ? stateDirectory : nil
        if let stateFailure { Diagnostics.error(stateFailure) }
        printSummary(report, json: json) {
            "hosted \(uri): \(summary.cycles) cycles, latency \(summary.latencyFrames) frames, xruns \(summary.xruns)\(summary.refusedWorkRequests > 0 ? ", work requests refused (worker ring full) \(summary.refusedWorkRequests)" : ""), stopped by: \(reason)"
        }
        return cause == .serverShutdown || cause == .finished || stateFailure != nil ? ExitStatus.failure : ExitStatus.success
    }
}

/// Reads `SYMBOL=VALUE` (or `SYMBOL VALUE`) lines from standard input on a thread of its own;
/// the session loop applies them. A bad line is reported on standard error and skipped.
final class ControlConsole: @unchecked Sendable {
    private let host: LV2LiveHost
    private let lock = NSLock()
    private var pending: [(String, Float)] = []

    init(host: LV2LiveHost) {
        self.host = host
        Thread.detachNewThread { [self] in
            while let line = readLine() {
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.isEmpty || text.hasPrefix("#") { continue }
                let parts = text.split(whereSeparator: { $0 == "=" || $0 == " " }).map(String.init)
                guard parts.count == 2, let value = Float(parts[1]), value.isFinite else {
                    Diagnostics.error("console: '\(text)': expected SYMBOL=VALUE with a number, e.g. gain=6")
                    continue
                }
                lock.withLock { pending.append((parts[0], value)) }
            }
        }
    }

    /// Queues the lines read so far for the process thread; true when a control changed. The
    /// session loop's thread.
    @discardableResult
    func applyPending() -> Bool {
        let lines = lock.withLock { () -> [(String, Float)] in
            defer { pending.removeAll() }
            return pending
        }
        var changed = false
        for (symbol, value) in lines {
            do throws(PluginError) {
                try host.set(symbol, to: value)
                changed = true
            } catch { Diagnostics.error("console: \(error.message)") }
        }
        return changed
    }
}
