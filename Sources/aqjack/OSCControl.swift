import AQSession
import AQControl
import Foundation
import Glibc
import Synchronization

/// An OSC 1.0 surface over UDP, on its own thread: `aqjack record --osc` (``RecordOSC``: takes)
/// and `aqjack host --osc` (``GraphOSC``: the control socket's verbs). Each admitted message gets
/// the responder's reply, sent to its sender; a responder may also send messages unasked
/// (monitored values), polled every ``OSCResponder/feedbackInterval`` while it has any to send.
///
/// Who is obeyed: with a token (`--osc-token`, `AQJACK_OSC_TOKEN`; required for any address but
/// loopback) every message carries it as its first argument, a string, and others are dropped;
/// without one (loopback only) only datagrams from sockets of this process's user are taken
/// (``LoopbackPeerOwner``), since any local user can send to loopback. Dropped messages get no
/// reply, and the first is reported on standard error. Replies are at most
/// ``repliesPerSecond`` a second, so a flood cannot turn the socket into an amplifier (messages
/// sent unasked go only to senders that were admitted and asked for them).
final class OSCControl: @unchecked Sendable {
    /// The most replies sent in one second; past that, requests are still served, not answered.
    static let repliesPerSecond = 100

    private let socket: Int32
    private let responder: any OSCResponder
    private let token: String?
    private let ownUser = getuid()
    private var refusedCount = 0
    private var replyWindow = (second: 0, count: 0)
    private let running = Atomic<Bool>(true)
    private var thread: Thread?

    /// Binds the UDP port (0: any free one, see ``port``).
    /// - Throws: a message naming the address and the system's reason.
    init(host: String, port: Int, token: String?, responder: any OSCResponder) throws(OSCControlError) {
        self.responder = responder
        self.token = token
        do throws(IPv4Listening.Failure) {
            socket = try IPv4Listening.open(type: Int32(SOCK_DGRAM.rawValue), host: host, port: port, option: "--osc")
        } catch {
            throw OSCControlError(message: error.message)
        }
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
        var nextFeedback = Date()
        while running.load(ordering: .acquiring) {
            // Waits for a datagram: 100 ms (to notice ``stop()``), or until the next feedback is due.
            let pending = responder.hasFeedback
            let wait = pending ? max(1, min(100, Int((nextFeedback.timeIntervalSinceNow * 1000).rounded(.up)))) : 100
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, Int32(wait)) > 0 { receive(into: &buffer) }
            if pending, nextFeedback.timeIntervalSinceNow <= 0 {
                nextFeedback = Date(timeIntervalSinceNow: responder.feedbackInterval)
                for (message, peer) in responder.feedback() { send(message, to: peer) }
            }
        }
    }

    /// Reads one datagram and answers it.
    private func receive(into buffer: inout [UInt8]) {
        var sender = OSCPeer()
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &sender.address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(socket, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &sender.length) }
            }
        }
        guard count > 0 else { return }
        // Without a token the sender decides, before anything of the datagram is read.
        if token == nil, !admitsWithoutToken(sender.address) {
            refuse("a message from a socket of another user")
            return
        }
        let reply: OSCMessage
        do throws(OSCMessage.DecodingError) {
            let message = try OSCMessage(decoding: Array(buffer[0 ..< count]))
            guard let accepted = admit(message) else { return }
            reply = responder.respond(to: accepted, from: sender)
        } catch {
            // Undecodable: with a token nobody is told why (it could not carry the token).
            guard token == nil else {
                refuse("a datagram that is not an OSC message")
                return
            }
            reply = OSCMessage(address: "/aqjack/reply", arguments: [.string(""), .string("error: \(error.message)")])
        }
        guard mayReply() else { return }
        send(reply, to: sender)
    }

    private func send(_ message: OSCMessage, to peer: OSCPeer) {
        var peer = peer
        let bytes = message.encoded
        _ = bytes.withUnsafeBytes { data in
            withUnsafePointer(to: &peer.address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket, data.baseAddress, data.count, 0, $0, peer.length) }
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

}

struct OSCControlError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A sender's address, as `recvfrom` gave it: replies and feedback go back to it.
struct OSCPeer: Equatable, @unchecked Sendable {
    var address = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)

    static func == (left: OSCPeer, right: OSCPeer) -> Bool {
        guard left.length == right.length else { return false }
        var a = left.address, b = right.address
        return memcmp(&a, &b, Int(left.length)) == 0
    }
}

/// What an OSC surface does with the messages it admits (``OSCControl``). Called on the surface's
/// thread only.
protocol OSCResponder: AnyObject {
    /// The reply to `message` (its token already taken off) from `sender`.
    func respond(to message: OSCMessage, from sender: OSCPeer) -> OSCMessage
    /// Whether ``feedback()`` may have messages to send (something is monitored).
    var hasFeedback: Bool { get }
    /// Seconds between two calls of ``feedback()``.
    var feedbackInterval: Double { get }
    /// Messages to send now unasked, each to its peer.
    func feedback() -> [(OSCMessage, OSCPeer)]
}

extension OSCResponder {
    var hasFeedback: Bool { false }
    var feedbackInterval: Double { 0.1 }
    func feedback() -> [(OSCMessage, OSCPeer)] { [] }
}
