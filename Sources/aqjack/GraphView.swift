import AQPlugins
import AQWeb

/// The host's graph on the web (`host --http`, docs/WEB.md): `GET /graph` as JSON (schema
/// `aqjack.graph-view/1`: the nodes with their controls, bypass and presets, the connections),
/// and `POST /control/VERB` answered by the control socket's commands (``GraphControl``), one
/// set of verbs for every surface.
enum GraphView {
    /// The verbs the page and scripts may POST: the control socket's, but those that answer a
    /// connection later (monitor, midi-learn) or belong to a socket (help, close, auth).
    static let verbs = GraphControl.verbs.map(\.verb).filter { !["monitor", "midi-learn", "help", "close"].contains($0) }

    /// The connection number web commands run as (the control socket numbers its own from 1).
    static let connection = -1

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
                "{\"symbol\":\(JSONText.string(port.symbol)),\"name\":\(JSONText.string(port.name)),\"output\":\(port.direction == .output),"
                    + "\"minimum\":\(number(port.minimum)),\"maximum\":\(number(port.maximum)),\"integer\":\(port.isInteger),"
                    + "\"toggled\":\(port.isToggled),\"value\":\(number(node.value(of: port.symbol)))}"
            }
            return "{\"id\":\(JSONText.string(node.id)),\"uri\":\(JSONText.string(description.uri)),\"name\":\(JSONText.string(description.name)),"
                + "\"bypassed\":\(node.isBypassed),\"latency\":\(graphNode.latency),\"controls\":[\(controls.joined(separator: ","))],"
                + "\"presets\":[\(description.presets.map { JSONText.string($0.label) }.joined(separator: ","))]}"
        }
        let connections = live.graph.connections.map { "[\(JSONText.string("\($0.source)")),\(JSONText.string("\($0.destination)"))]" }
        return "{\"schema\":\"aqjack.graph-view/1\",\"latency\":\(live.latency),\"nodes\":[\(nodes.joined(separator: ","))],"
            + "\"connections\":[\(connections.joined(separator: ","))]}"
    }
}
