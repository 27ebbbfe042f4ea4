import AQControl
import AQSession

/// `aqjack record --osc PORT`'s messages (``OSCControl``):
///
/// | message | effect | reply (to the sender) |
/// |---|---|---|
/// | `/aqjack/start` | starts a take (with the pre-roll) | `/aqjack/reply ,ss "/aqjack/start" "ok"` |
/// | `/aqjack/stop` | ends the take | same, for `/aqjack/stop` |
/// | `/aqjack/split` | ends the take and starts the next at the next frame, sample continuous | same |
/// | `/aqjack/status` | — | `/aqjack/status ,siisii` state (`recording`/`waiting`), frames (int32, saturating), file, lost frames, xruns, then one float32 peak dBFS per channel |
/// | `/aqjack/quit` | ends the recording as SIGTERM does | `/aqjack/reply` |
///
/// Anything else gets `/aqjack/reply ,ss ADDRESS "error: ..."`. Commands take effect at the
/// next buffer the queue delivers (within 0.1 s); a command repeated within one buffer counts once.
final class RecordOSC: OSCResponder {
    let command: (TriggerController.Request) -> Void
    let quit: () -> Void
    let status: () -> [OSCMessage.Argument]

    init(command: @escaping (TriggerController.Request) -> Void, quit: @escaping () -> Void, status: @escaping () -> [OSCMessage.Argument]) {
        self.command = command
        self.quit = quit
        self.status = status
    }

    func respond(to message: OSCMessage, from _: OSCPeer) -> OSCMessage {
        func ok() -> OSCMessage { OSCMessage(address: "/aqjack/reply", arguments: [.string(message.address), .string("ok")]) }
        switch message.address {
        case "/aqjack/start": command(.start); return ok()
        case "/aqjack/stop": command(.stop); return ok()
        case "/aqjack/split": command(.split); return ok()
        case "/aqjack/quit": quit(); return ok()
        case "/aqjack/status": return OSCMessage(address: "/aqjack/status", arguments: status())
        default:
            return OSCMessage(address: "/aqjack/reply", arguments: [
                .string(message.address), .string("error: unknown address: expected /aqjack/start, /stop, /split, /status or /quit")])
        }
    }
}
