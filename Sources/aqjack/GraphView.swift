import AQGraph
import AQPlugins
import AQWeb
import Synchronization

/// The host's graph on the web (`host --http`, docs/WEB.md): `GET /graph` as JSON (schema
/// `aqjack.graph-view/3`: the nodes with their controls, each control's MIDI mapping, bypass and
/// presets, the control MIDI learn waits for, the connections and the endpoints a connection may
/// start and end at), `GET /plugins` (the installed plugins one may add), and
/// `POST /control/VERB` answered by the control socket's commands (``GraphControl``), one set of
/// verbs for every surface.
enum GraphView {
    /// The verbs the page and scripts may POST: the control socket's, but those that stream to a
    /// connection (monitor) or belong to a socket (help, close, auth). A `midi-learn` is answered
    /// `ok` when armed; the host's tick completes it (``completeLearning(_:)``) and `/graph` shows it.
    static let verbs = GraphControl.verbs.map(\.verb).filter { !["monitor", "help", "close"].contains($0) }

    /// The connection number web commands run as (the control socket numbers its own from 1).
    static let connection = -1

    /// Completes a MIDI learn armed over the web once a controller has moved (called on the
    /// host's tick): the mapping made, or why none could be; nil while none is armed or waiting.
    static func completeLearning(_ controller: GraphControl) -> Result<GraphDocument.MIDIMapping, GraphError>? {
        controller.learnedMapping(connection: connection)
    }

    /// A control-socket reply as HTTP: `ok ...` is 200; `error CODE ...` 404 for not-found, 400
    /// for a malformed or invalid command, 409 for the rest (exists, cycle, failed).
    static func reply(_ line: String) -> SessionWeb.Reply {
        guard line.hasPrefix("error ") else { return .ok(line) }
        let code = line.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        return .refused(line, status: code == "not-found" ? 404 : ["invalid", "syntax", "usage"].contains(code) ? 400 : 409)
    }

    /// `GET /graph`, read under the control's lock.
    static func response(_ controller: GraphControl) -> HTTPResponse {
        .json(controller.withGraph { live in json(live) })
    }

    static func json(_ live: LiveGraph) -> String {
        func number(_ value: Float?) -> String { value.map { JSONText.number(Double($0)) } ?? "null" }
        let nodes = live.graph.nodes.compactMap { graphNode -> String? in
            guard let node = live.nodes[graphNode.id] else { return nil }
            let description = node.instance.description
            let controls = description.ports.filter { $0.kind == .control }.map { port in
                // The latest mapping of this control (a control may have several: the page shows one).
                let mapping = live.mappings.last { $0.id == node.id && $0.symbol == port.symbol }
                let midi = mapping.map { "{\"channel\":\($0.channel),\"controller\":\($0.controller),\"minimum\":\(number($0.minimum)),\"maximum\":\(number($0.maximum))}" } ?? "null"
                return "{\"symbol\":\(JSONText.string(port.symbol)),\"name\":\(JSONText.string(port.name)),\"output\":\(port.direction == .output),"
                    + "\"minimum\":\(number(port.minimum)),\"maximum\":\(number(port.maximum)),\"integer\":\(port.isInteger),"
                    + "\"toggled\":\(port.isToggled),\"value\":\(number(node.value(of: port.symbol))),\"midi\":\(midi)}"
            }
            return "{\"id\":\(JSONText.string(node.id)),\"uri\":\(JSONText.string(description.uri)),\"name\":\(JSONText.string(description.name)),"
                + "\"bypassed\":\(node.isBypassed),\"latency\":\(graphNode.latency),\"controls\":[\(controls.joined(separator: ","))],"
                + "\"presets\":[\(node.instance.presets.map { JSONText.string($0.label) }.joined(separator: ","))]}"
        }
        let connections = live.graph.connections.map { "[\(JSONText.string("\($0.source)")),\(JSONText.string("\($0.destination)"))]" }
        // What `connect` takes: the graph's channels and MIDI ports, then each node's ports.
        let graph = live.graph
        let midi = live.host.midiInput != nil
        let sources = (0 ..< graph.inputCount).map { GraphEndpoint.graphInput($0) } + (midi ? [.midiInput] : [])
            + graph.nodes.flatMap { node in (node.outputs + node.midiOutputs).map { GraphEndpoint.plugin(node: node.id, port: $0) } }
        let destinations = (0 ..< graph.outputCount).map { GraphEndpoint.graphOutput($0) } + (midi ? [.midiOutput] : [])
            + graph.nodes.flatMap { node in (node.inputs + node.midiInputs).map { GraphEndpoint.plugin(node: node.id, port: $0) } }
        func list(_ endpoints: [GraphEndpoint]) -> String { endpoints.map { JSONText.string("\($0)") }.joined(separator: ",") }
        let learning = live.learningTarget.map { "{\"id\":\(JSONText.string($0.id)),\"symbol\":\(JSONText.string($0.symbol))}" } ?? "null"
        return "{\"schema\":\"aqjack.graph-view/3\",\"latency\":\(live.latency),\"nodes\":[\(nodes.joined(separator: ","))],\"learning\":\(learning),"
            + "\"connections\":[\(connections.joined(separator: ","))],\"sources\":[\(list(sources))],\"destinations\":[\(list(destinations))]}"
    }

    /// `GET /plugins` (schema `aqjack.plugin-list/1`): every installed LV2 and LADSPA plugin's
    /// URI (what `add` takes), name and format, listed once (under the control's lock, which
    /// keeps lilv to one thread) and kept.
    static func pluginList(_ controller: GraphControl, world: LV2World) -> @Sendable () -> HTTPResponse {
        let kept = Mutex<String?>(nil)
        return {
            if let json = kept.withLock({ $0 }) { return .json(json) }
            let plugins = controller.withGraph { _ in world.describeAll() }.sorted { ($0.name.lowercased(), $0.uri) < ($1.name.lowercased(), $1.uri) }
            let items = plugins.map { plugin in
                "{\"uri\":\(JSONText.string(plugin.uri)),\"name\":\(JSONText.string(plugin.name)),\"format\":\(JSONText.string(plugin.format.rawValue))}"
            }
            let json = "{\"schema\":\"aqjack.plugin-list/1\",\"plugins\":[\(items.joined(separator: ","))]}"
            kept.withLock { $0 = json }
            return .json(json)
        }
    }
}
