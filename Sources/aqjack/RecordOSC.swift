import AQControl
import AQSession
import AQWeb

/// `aqjack record --osc PORT`'s messages (``OSCControl``):
///
/// | message | effect | reply (to the sender) |
/// |---|---|---|
/// | `/aqjack/start` | starts a take (with the pre-roll) | `/aqjack/reply ,ss "/aqjack/start" "ok"` |
/// | `/aqjack/stop` | ends the take | same, for `/aqjack/stop` |
/// | `/aqjack/split` | ends the take and starts the next at the next frame, sample continuous | same |
/// | `/aqjack/status` | — | `/aqjack/status ,siisii` state (`recording`/`waiting`), frames (int32, saturating), file, lost frames, xruns, then one float32 peak dBFS per channel |
/// | `/aqjack/quit` | ends the recording as SIGTERM does | `/aqjack/reply` |
/// | `/aqjack/subscribe` | the sender gets the session's events from now on (at most ``subscriberLimit`` senders) | `/aqjack/reply`, then `/aqjack/event ,ss NAME JSON` for each event |
/// | `/aqjack/unsubscribe` | no more events to the sender | `/aqjack/reply` |
///
/// Anything else gets `/aqjack/reply ,ss ADDRESS "error: ..."`. Commands take effect at the
/// next buffer the queue delivers (within 0.1 s); a command repeated within one buffer counts once.
final class RecordOSC: OSCResponder {
    let command: (TriggerController.Request) -> Void
    let quit: () -> Void
    let status: () -> [OSCMessage.Argument]
    /// The session's events (``EventLog``: take started, silence ...), sent to subscribers.
    let events: EventLog?
    /// Who gets the events, and the number of the last event they were sent. The OSC thread's.
    private var subscribers: [OSCPeer] = []
    private var sentThrough = 0
    static let subscriberLimit = 8

    init(command: @escaping (TriggerController.Request) -> Void, quit: @escaping () -> Void, status: @escaping () -> [OSCMessage.Argument],
         events: EventLog?) {
        self.command = command
        self.quit = quit
        self.status = status
        self.events = events
    }

    var hasFeedback: Bool { !subscribers.isEmpty }

    /// The events posted since the last look, each to every subscriber.
    func feedback() -> [(OSCMessage, OSCPeer)] {
        guard let events, let posted = events.wait(after: sentThrough, timeout: 0), let last = posted.last else { return [] }
        sentThrough = last.sequence
        return posted.flatMap { event in
            subscribers.map { (OSCMessage(address: "/aqjack/event", arguments: [.string(event.name), .string(event.json)]), $0) }
        }
    }

    func respond(to message: OSCMessage, from sender: OSCPeer) -> OSCMessage {
        func ok() -> OSCMessage { OSCMessage(address: "/aqjack/reply", arguments: [.string(message.address), .string("ok")]) }
        func error(_ text: String) -> OSCMessage { OSCMessage(address: "/aqjack/reply", arguments: [.string(message.address), .string("error: " + text)]) }
        switch message.address {
        case "/aqjack/start": command(.start); return ok()
        case "/aqjack/stop": command(.stop); return ok()
        case "/aqjack/split": command(.split); return ok()
        case "/aqjack/quit": quit(); return ok()
        case "/aqjack/status": return OSCMessage(address: "/aqjack/status", arguments: status())
        case "/aqjack/subscribe":
            guard events != nil else { return error("this recording keeps no events") }
            if subscribers.contains(sender) { return ok() }
            guard subscribers.count < Self.subscriberLimit else { return error("\(Self.subscriberLimit) senders subscribe already: unsubscribe one first") }
            // From now on: what came before is in /events and --events.
            if subscribers.isEmpty { sentThrough = events?.lastSequence ?? 0 }
            subscribers.append(sender)
            return ok()
        case "/aqjack/unsubscribe":
            subscribers.removeAll { $0 == sender }
            return ok()
        default:
            return error("unknown address: expected /aqjack/start, /stop, /split, /status, /quit, /subscribe or /unsubscribe")
        }
    }
}
