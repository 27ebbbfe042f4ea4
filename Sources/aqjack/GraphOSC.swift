import AQControl
import AQGraph

/// `aqjack host --osc PORT`: the control socket's verbs (``GraphControl``, docs/CONTROL.md) as
/// OSC messages (``OSCControl``). `/aqjack/VERB` with the command's words as arguments (strings,
/// or int32 and float32 for numbers): `/aqjack/set ,ssf "amp" "gain" 6.0` is the line
/// `set amp gain 6.0`. The reply, to the sender, is `/aqjack/reply ,ss ADDRESS LINE`, LINE the
/// control socket's reply (`ok ...` or `error CODE message`). Sent unasked, to the sender that
/// asked: `/aqjack/monitor ,ssf ID SYMBOL VALUE` whenever a monitored control output changes (at
/// most every `feedbackInterval`, one period), and `/aqjack/learned ,ssiiff ID SYMBOL CHANNEL CC
/// MIN MAX` (or `,s "error CODE message"`) when a MIDI learn it armed completes.
///
/// Threads: the OSC surface's thread only.
final class GraphOSC: OSCResponder {
    /// The most controls monitored over OSC at once (a sender that goes away leaves its
    /// monitors on: they are bounded, not unbounded).
    static let maximumMonitors = 64
    /// The connection number ``GraphControl`` knows OSC's MIDI learn by (sockets count from 1).
    static let learnConnection = -1

    let control: GraphControl
    let feedbackInterval: Double
    private var monitors: [(peer: OSCPeer, id: String, symbol: String, last: UInt32?)] = []
    /// The sender whose MIDI learn is waiting.
    private var learner: OSCPeer?

    init(control: GraphControl, feedbackInterval: Double) {
        self.control = control
        self.feedbackInterval = max(feedbackInterval, 0.001)
    }

    func respond(to message: OSCMessage, from sender: OSCPeer) -> OSCMessage {
        func reply(_ line: String) -> OSCMessage {
            OSCMessage(address: "/aqjack/reply", arguments: [.string(message.address), .string(line)])
        }
        let prefix = "/aqjack/"
        guard message.address.hasPrefix(prefix), message.address.count > prefix.count else {
            return reply(ControlLine.error("syntax", "'\(message.address.prefix(64))' is not a command's address; expected /aqjack/VERB, VERB one of \(GraphControl.verbs.map(\.verb).joined(separator: ", "))"))
        }
        var words = [String(message.address.dropFirst(prefix.count))]
        for argument in message.arguments {
            switch argument {
            case .string(let text): words.append(text)
            case .int32(let number): words.append(String(number))
            case .float32(let number): words.append(GraphControl.text(number))
            case .blob: return reply(ControlLine.error("syntax", "a blob argument; expected strings, int32 or float32"))
            }
        }
        if words[0] == "monitor", words.count == 4, words[3] == "on", monitors.count >= Self.maximumMonitors,
           !monitors.contains(where: { $0.peer == sender && $0.id == words[1] && $0.symbol == words[2] }) {
            return reply(ControlLine.error("invalid", "\(Self.maximumMonitors) controls are monitored over OSC already; turn one off first"))
        }
        let (line, effect) = control.execute(words, connection: Self.learnConnection)
        if case .monitor(let id, let symbol, let on) = effect {
            monitors.removeAll { $0.peer == sender && $0.id == id && $0.symbol == symbol }
            if on { monitors.append((sender, id, symbol, nil)) }
        }
        if words[0] == "midi-learn", line.hasPrefix("ok") { learner = sender }
        return reply(line)
    }

    var hasFeedback: Bool { !monitors.isEmpty || learner != nil }

    func feedback() -> [(OSCMessage, OSCPeer)] {
        var messages: [(OSCMessage, OSCPeer)] = []
        for index in monitors.indices {
            let monitor = monitors[index]
            guard let value = control.value(monitor.id, monitor.symbol), value.bitPattern != monitor.last else { continue }
            monitors[index].last = value.bitPattern
            messages.append((OSCMessage(address: "/aqjack/monitor", arguments: [.string(monitor.id), .string(monitor.symbol), .float32(value)]), monitor.peer))
        }
        if let learner {
            switch control.learnedMapping(connection: Self.learnConnection) {
            case .success(let mapping)?:
                messages.append((OSCMessage(address: "/aqjack/learned", arguments: [
                    .string(mapping.id), .string(mapping.symbol), .int32(Int32(mapping.channel)), .int32(Int32(mapping.controller)),
                    .float32(mapping.minimum), .float32(mapping.maximum)]), learner))
                self.learner = nil
            case .failure(let error)?:
                messages.append((OSCMessage(address: "/aqjack/learned", arguments: [.string(ControlLine.error(error.kind.rawValue, error.description))]), learner))
                self.learner = nil
            case nil:
                if !control.isLearning(connection: Self.learnConnection) { self.learner = nil }
            }
        }
        return messages
    }
}
