import AQControl
import AQGraph
import AQPlugins
import Foundation

/// The control socket's commands (docs/CONTROL.md) on a live graph: one line in, one reply out,
/// `ok ...` or `error CODE message`. Every caller (each connection's thread, the command's own
/// tick) goes through one lock, so the graph sees one command at a time.
///
/// Threads: any; never the process thread.
final class GraphControl: @unchecked Sendable {
    let live: LiveGraph
    private let lock = NSLock()
    /// The connection that armed MIDI learn, told when it completes.
    private var learner: Int?
    /// Called (under the lock) after each command that changed the graph: what a session
    /// manager is told as unsaved changes. Set before any command comes.
    var onEdit: (() -> Void)?
    /// The verbs that change the graph (or what a save would write) when they succeed.
    static let edits: Set<String> = ["add", "remove", "connect", "disconnect", "set", "bypass", "preset", "midi-map", "midi-unmap", "load"]

    init(live: LiveGraph) { self.live = live }

    /// The verbs with their arguments, as `help` lists them and a syntax error names them.
    static let verbs: [(verb: String, arguments: [String])] = [
        ("add", ["URI", "[ID]"]), ("remove", ["ID"]), ("connect", ["SOURCE", "DESTINATION"]),
        ("disconnect", ["SOURCE", "DESTINATION"]), ("set", ["ID", "SYMBOL", "VALUE"]), ("get", ["ID", "SYMBOL"]),
        ("bypass", ["ID", "on|off"]), ("preset", ["ID", "NAME"]), ("save-preset", ["ID", "NAME"]), ("list", []), ("latency", []),
        ("monitor", ["ID", "SYMBOL", "on|off"]), ("midi-map", ["ID", "SYMBOL", "CHANNEL", "CC", "[MIN", "MAX]"]),
        ("midi-unmap", ["ID", "SYMBOL"]), ("midi-learn", ["ID", "SYMBOL"]), ("save", ["FILE"]), ("load", ["FILE"]),
        ("help", []), ("close", []),
    ]

    /// What a line asks of the connection besides its reply.
    enum Effect: Equatable {
        case none
        case monitor(id: String, symbol: String, on: Bool)
        case close
    }

    /// Runs the command in `words` (a line's words, ``ControlLine/words(_:)``) for connection
    /// `connection` (a number its server gives it).
    func execute(_ words: [String], connection: Int = 0) -> (reply: String, effect: Effect) {
        lock.lock()
        defer { lock.unlock() }
        let result = perform(words, connection: connection)
        if let verb = words.first, Self.edits.contains(verb), result.reply.hasPrefix("ok") { onEdit?() }
        return result
    }

    private func perform(_ words: [String], connection: Int) -> (reply: String, effect: Effect) {
        guard let verb = words.first else { return (ControlLine.error("syntax", "an empty line; expected a command: \(Self.verbList)"), .none) }
        guard let usage = Self.verbs.first(where: { $0.verb == verb }) else {
            return (ControlLine.error("syntax", "unknown command '\(verb)'; expected one of \(Self.verbList)"), .none)
        }
        let arguments = Array(words.dropFirst())
        let required = usage.arguments.filter { !$0.hasPrefix("[") }.count
        guard (required ... usage.arguments.count).contains(arguments.count), verb != "midi-map" || arguments.count != 5 else {
            return (ControlLine.error("syntax", "'\(verb)' takes \(usage.arguments.isEmpty ? "no arguments" : usage.arguments.joined(separator: " ")); got \(arguments.count) argument\(arguments.count == 1 ? "" : "s")"), .none)
        }
        do throws(GraphError) {
            switch verb {
            case "add":
                let node = try live.add(arguments[0], id: arguments.count > 1 ? arguments[1] : nil)
                return (ControlLine.ok([node.id]), .none)
            case "remove":
                try live.remove(arguments[0])
            case "connect":
                try live.connect(arguments[0], arguments[1])
            case "disconnect":
                try live.disconnect(arguments[0], arguments[1])
            case "set":
                guard let value = Float(arguments[2]), value.isFinite else {
                    return (ControlLine.error("invalid", "'\(arguments[2])' is not a number; expected a finite value such as -6 or 0.5"), .none)
                }
                try live.set(arguments[0], arguments[1], to: value)
            case "get":
                return (ControlLine.ok([Self.text(try live.value(arguments[0], arguments[1]))]), .none)
            case "bypass":
                guard let on = Self.onOff(arguments[1]) else { return (Self.notOnOff(arguments[1]), .none) }
                try live.bypass(arguments[0], on)
            case "preset":
                try live.applyPreset(arguments[0], arguments[1])
            case "save-preset":
                return (ControlLine.ok([try live.savePreset(arguments[0], arguments[1]).uri]), .none)
            case "midi-map":
                guard let channel = Int(arguments[2]), let controller = Int(arguments[3]) else {
                    return (ControlLine.error("invalid", "'\(arguments[2])' '\(arguments[3])': expected a MIDI channel 1 to 16 and a controller 0 to 127"), .none)
                }
                var bounds: [Float] = []
                for word in arguments.dropFirst(4) {
                    guard let bound = Float(word), bound.isFinite else {
                        return (ControlLine.error("invalid", "'\(word)' is not a number; expected a finite value such as -6 or 0.5"), .none)
                    }
                    bounds.append(bound)
                }
                try live.mapMIDI(arguments[0], arguments[1], channel: channel, controller: controller, minimum: bounds.first, maximum: bounds.last)
            case "midi-unmap":
                return (ControlLine.ok([String(try live.unmapMIDI(arguments[0], arguments[1]))]), .none)
            case "midi-learn":
                try live.learnMIDI(arguments[0], arguments[1])
                learner = connection
            case "save":
                try live.save(to: arguments[0])
            case "load":
                try live.load(from: arguments[0])
            case "list":
                return (ControlLine.ok(listing), .none)
            case "latency":
                return (ControlLine.ok([String(live.latency)]), .none)
            case "monitor":
                guard let on = Self.onOff(arguments[2]) else { return (Self.notOnOff(arguments[2]), .none) }
                _ = try live.value(arguments[0], arguments[1])
                return (ControlLine.ok(), .monitor(id: arguments[0], symbol: arguments[1], on: on))
            case "help":
                return (ControlLine.ok(Self.verbs.map { ([$0.verb] + $0.arguments).joined(separator: " ") }), .none)
            default:
                return (ControlLine.ok(), .close)
            }
        } catch {
            return (ControlLine.error(error.kind.rawValue, error.description), .none)
        }
        return (ControlLine.ok(), .none)
    }

    /// For connection `connection`, when it armed MIDI learn and a controller has moved since:
    /// the line that tells it, `learned ID SYMBOL CHANNEL CC MIN MAX` (or `learned error CODE
    /// MESSAGE`); nil otherwise.
    func learned(connection: Int) -> String? {
        switch learnedMapping(connection: connection) {
        case nil: return nil
        case .success(let mapping)?:
            return (["learned", mapping.id, mapping.symbol, String(mapping.channel), String(mapping.controller),
                     Self.text(mapping.minimum), Self.text(mapping.maximum)]).map(ControlLine.quoted).joined(separator: " ")
        case .failure(let error)?:
            return "learned " + ControlLine.error(error.kind.rawValue, error.description)
        }
    }

    /// For connection `connection`, when it armed MIDI learn and a controller has moved since:
    /// the mapping made, or why none could be; nil otherwise (still waiting, or not its learn).
    func learnedMapping(connection: Int) -> Result<GraphDocument.MIDIMapping, GraphError>? {
        lock.lock()
        defer { lock.unlock() }
        guard learner == connection else { return nil }
        guard live.isLearning else {
            learner = nil
            return nil
        }
        do throws(GraphError) {
            guard let mapping = try live.completeLearning() else { return nil }
            learner = nil
            onEdit?()
            return .success(mapping)
        } catch {
            learner = nil
            return .failure(error)
        }
    }

    /// Whether connection `connection` armed the MIDI learn still waiting for a controller.
    func isLearning(connection: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return learner == connection && live.isLearning
    }

    /// Connection `connection` has closed: a MIDI learn it armed is called off.
    func closed(connection: Int) {
        lock.lock()
        defer { lock.unlock() }
        if learner == connection {
            live.cancelLearning()
            learner = nil
        }
    }

    /// The value of a monitored control now, or nil when its node or control is gone.
    func value(_ id: String, _ symbol: String) -> Float? {
        lock.lock()
        defer { lock.unlock() }
        return try? live.value(id, symbol)
    }

    /// Runs `body` on the graph under the lock (the command's tick: latency re-reads).
    func withGraph<Result, Failure: Error>(_ body: (LiveGraph) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(live)
    }

    /// `nodes=N ID=URI ... connections=M SOURCE>DESTINATION ...`, with `bypassed=ID,...` when
    /// any is and `midi=N ID:SYMBOL@CHANNEL/CC ...` when any controller is mapped.
    private var listing: [String] {
        let nodes = live.graph.nodes.map { "\($0.id)=\(live.nodes[$0.id]?.instance.description.uri ?? "")" }
        let bypassed = live.graph.nodes.filter { live.nodes[$0.id]?.isBypassed == true }.map(\.id)
        return ["nodes=\(nodes.count)"] + nodes + ["connections=\(live.graph.connections.count)"]
            + live.graph.connections.map { "\($0.source)>\($0.destination)" }
            + (bypassed.isEmpty ? [] : ["bypassed=" + bypassed.joined(separator: ",")])
            + (live.mappings.isEmpty ? [] : ["midi=\(live.mappings.count)"] + live.mappings.map { "\($0.id):\($0.symbol)@\($0.channel)/\($0.controller)" })
    }

    /// A value as replies write it: the shortest text that reads back as the same float.
    static func text(_ value: Float) -> String { "\(value)" }

    private static var verbList: String { verbs.map(\.verb).joined(separator: ", ") }

    private static func onOff(_ word: String) -> Bool? { word == "on" ? true : word == "off" ? false : nil }

    private static func notOnOff(_ word: String) -> String {
        ControlLine.error("syntax", "'\(word)' is neither on nor off")
    }
}
