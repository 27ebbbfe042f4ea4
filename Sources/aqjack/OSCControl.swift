import AQSession
import AQControl
import Foundation
import Glibc
import Synchronization

/// `aqjack record --osc PORT [--osc-host ADDRESS]`: OSC 1.0 over UDP, on its own thread.
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
///
/// Who is obeyed: with a token (`--osc-token`, `AQJACK_OSC_TOKEN`; required for any address but
/// loopback) every message carries it as its first argument, a string, and others are dropped;
/// without one (loopback only) only datagrams from sockets of this process's user are taken
/// (``LoopbackPeerOwner``), since any local user can send to loopback. Dropped messages get no
/// reply, and the first is reported on standard error. Replies are at most
/// ``repliesPerSecond`` a second, so a flood cannot turn the socket into an amplifier.
final class OSCControl: @unchecked Sendable {
    /// What a command does; the status's fields.
    struct Handlers {
        var command: (TriggerController.Request) -> Void
        var quit: () -> Void
        var status: () -> [OSCMessage.Argument]
    }

    /// The most replies sent in one second; past that, requests are still served, not answered.
    static let repliesPerSecond = 100

    private let socket: Int32
    private let handlers: Handlers
    private let token: String?
    private let ownUser = getuid()
    private var refusedCount = 0
    private var replyWindow = (second: 0, count: 0)
    private let running = Atomic<Bool>(true)
    private var thread: Thread?

    /// Binds the UDP port (0: any free one, see ``port``).
    /// - Throws: a message naming the address and the system's reason.
    init(host: String, port: Int, token: String?, handlers: Handlers) throws(OSCControlError) {
        self.handlers = handlers
        self.token = token
        do throws(IPv4Listening.Failure) {
            socket = try IPv4Listening.open(type: Int32(SOCK_DGRAM.rawValue), host: host, port: port, option: "--osc")
        } catch {
            throw OSCControlError(message: error.message)
        }
        // Wake up every 100 ms to notice ``stop()``.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// The UDP port listened on.
    var port: Int { IPv4Listening.port(of: socket) }

    func start() {
        let thread = Thread { [self] in serve() }
        thread.name = "aqjack-osc"
        self.thread = thread
        thread.start()
    }

    /// Stops listening and closes the socket.
    func stop() {
        running.store(false, ordering: .releasing)
        while let thread, !thread.isFinished { usleep(1000) }
        close(socket)
    }

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while running.load(ordering: .acquiring) {
            var sender = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &sender) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(socket, bytes.baseAddress, bytes.count, 0, $0, &length) }
                }
            }
            guard count > 0 else { continue }
            // Without a token the sender decides, before anything of the datagram is read.
            if token == nil, !admitsWithoutToken(sender) {
                refuse("a message from a socket of another user")
                continue
            }
            let reply: OSCMessage
            do throws(OSCMessage.DecodingError) {
                let message = try OSCMessage(decoding: Array(buffer[0 ..< count]))
                guard let accepted = admit(message) else { continue }
                reply = respond(to: accepted)
            } catch {
                // Undecodable: with a token nobody is told why (it could not carry the token).
                guard token == nil else {
                    refuse("a datagram that is not an OSC message")
                    continue
                }
                reply = OSCMessage(address: "/aqjack/reply", arguments: [.string(""), .string("error: \(error.message)")])
            }
            guard mayReply() else { continue }
            let bytes = reply.encoded
            _ = bytes.withUnsafeBytes { data in
                withUnsafePointer(to: &sender) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket, data.baseAddress, data.count, 0, $0, length) }
                }
            }
        }
    }

    /// `message` without its token when there is one and it carries it, the message itself
    /// when there is none, else nil (the first refusal is reported).
    private func admit(_ message: OSCMessage) -> OSCMessage? {
        guard let token else { return message }
        if case .string(let given) = message.arguments.first, AccessToken.matches(given, token) {
            return OSCMessage(address: message.address, arguments: Array(message.arguments.dropFirst()))
        }
        refuse("a message without the --osc-token as its first argument")
        return nil
    }

    /// Without a token: a loopback sender whose socket is this user's.
    private func admitsWithoutToken(_ sender: sockaddr_storage) -> Bool {
        LoopbackPeerOwner.isLoopback(sender) && LoopbackPeerOwner.uid(ofLocalPort: LoopbackPeerOwner.port(of: sender)) == ownUser
    }

    private func refuse(_ what: String) {
        refusedCount += 1
        if refusedCount == 1 { Diagnostics.warning("--osc ignored \(what) (further ones are dropped silently)") }
    }

    /// Whether one more reply fits in this second's budget.
    private func mayReply() -> Bool {
        let now = Int(Date().timeIntervalSince1970)
        if replyWindow.second != now { replyWindow = (now, 0) }
        replyWindow.count += 1
        return replyWindow.count <= Self.repliesPerSecond
    }

    private func respond(to message: OSCMessage) -> OSCMessage {
        func ok() -> OSCMessage { OSCMessage(address: "/aqjack/reply", arguments: [.string(message.address), .string("ok")]) }
        switch message.address {
        case "/aqjack/start": handlers.command(.start); return ok()
        case "/aqjack/stop": handlers.command(.stop); return ok()
        case "/aqjack/split": handlers.command(.split); return ok()
        case "/aqjack/quit": handlers.quit(); return ok()
        case "/aqjack/status": return OSCMessage(address: "/aqjack/status", arguments: handlers.status())
        default:
            return OSCMessage(address: "/aqjack/reply", arguments: [
                .string(message.address), .string("error: unknown address: expected /aqjack/start, /stop, /split, /status or /quit")])
        }
    }
}

struct OSCControlError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
