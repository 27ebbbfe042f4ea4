import AQControl
import Foundation
import Glibc
import Synchronization

/// A Non Session Manager client (NSM API 1.1.2), for `aqjack record`, `play` and `host` when
/// `NSM_URL` is set.
///
/// The protocol as nsmd, RaySession and Agordejo speak it: the client sends
/// `/nsm/server/announce ,sssiii` (its name, capabilities, executable, API 1.2, pid) to `NSM_URL`;
/// the server answers `/reply ,ssss` ("/nsm/server/announce", a message, its name, its
/// capabilities), then `/nsm/client/open ,sss` (the path to keep files under, the display name,
/// the client id). The client opens its JACK client named by the id, puts its files under the
/// path, and answers `/reply ,ss` ("/nsm/client/open", "..."). Later `/nsm/client/save` is
/// answered the same way (or with `/error ,sis`: "/nsm/client/save", -1, why, when saving failed);
/// the session closes the client with SIGTERM, which ends a recording cleanly anyway.
/// Capabilities declared: `:message:` (we send `/nsm/client/message` notes), and for `host`
/// `:dirty:` (`/nsm/client/is_dirty` when a control changed since the last save,
/// `/nsm/client/is_clean` after a save). All on one UDP socket (``UDPPeer``: bound to the
/// address that reaches the server, loopback for a server on this machine), read by its own
/// thread once open; only the server's messages are obeyed, anyone else's are dropped and the
/// first of them reported. The open's client id must be a valid JACK client name and its path
/// absolute without `..`, or the session is refused.
final class NSMClient: @unchecked Sendable {
    /// What `/nsm/client/open` gave.
    struct Session: Equatable {
        /// The path prefix to keep files under (aqjack makes it a directory).
        let path: String
        let displayName: String
        /// The client id: aqjack's JACK client name.
        let clientID: String
    }

    private let server: UDPPeer
    private let running = Atomic<Bool>(true)
    private var thread: Thread?

    /// Under a session manager (`NSM_URL` set and not empty): announces `name` with
    /// `capabilities`, waits (10 s at most) for the open and makes its folder; nil otherwise.
    static func join(as name: String, capabilities: String = ":message:") throws(NSMError) -> (client: NSMClient, session: Session)? {
        guard let url = environmentValue("NSM_URL"), !url.isEmpty else { return nil }
        let manager = try NSMClient(url: url, name: name, capabilities: capabilities)
        let session = try manager.waitForOpen(seconds: 10)
        do {
            try FileManager.default.createDirectory(atPath: session.path, withIntermediateDirectories: true)
        } catch {
            throw NSMError(message: "cannot make the session folder '\(session.path)': \(error.localizedDescription)")
        }
        return (manager, session)
    }

    /// Opens the socket and sends the announce to `url` (`osc.udp://HOST:PORT/`).
    init(url: String, name: String, capabilities: String = ":message:") throws(NSMError) {
        do throws(UDPPeerError) {
            let (host, port) = try parseOSCURL(url)
            server = try UDPPeer(host: host, port: port)
        } catch {
            throw NSMError(message: "NSM_URL: \(error.message)")
        }
        send(OSCMessage(address: "/nsm/server/announce", arguments: [
            .string(name), .string(capabilities), .string("aqjack"), .int32(1), .int32(2), .int32(getpid())]))
    }

    /// Waits (up to `seconds`) for the server's `/nsm/client/open`.
    /// - Throws: when the server answers with `/error`, or says nothing in time.
    func waitForOpen(seconds: Double) throws(NSMError) -> Session {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard let message = receive() else { continue }
            switch message.address {
            case "/error":
                throw NSMError(message: "the NSM server refused the announce: \(message.arguments.map(Self.text).joined(separator: " "))")
            case "/nsm/client/open":
                guard message.arguments.count >= 3, case .string(let path) = message.arguments[0],
                      case .string(let display) = message.arguments[1], case .string(let id) = message.arguments[2] else {
                    throw NSMError(message: "/nsm/client/open without its path, display name and client id")
                }
                guard !id.isEmpty, !id.contains(":"), id.utf8.count < 64, !id.contains(where: { $0.asciiValue.map { $0 < 0x20 } ?? false }) else {
                    throw NSMError(message: "/nsm/client/open client id \(Diagnostics.quoted(id)) is not a valid JACK client name: expected 1 ... 63 bytes without ':' or control characters")
                }
                guard path.hasPrefix("/"), !path.split(separator: "/").contains(".."), !path.contains("\0") else {
                    throw NSMError(message: "/nsm/client/open path \(Diagnostics.quoted(path)) is not an absolute path without '..'")
                }
                return Session(path: path, displayName: display, clientID: id)
            default:
                continue   // the announce's /reply, and anything else before the open
            }
        }
        throw NSMError(message: "no /nsm/client/open from the NSM server at NSM_URL within \(Int(seconds)) s")
    }

    /// Answers the open, then serves `/nsm/client/save` until ``stop()``: runs `save` (on this
    /// client's thread; it returns nil when saved, else why not) and answers `/reply`, or
    /// `/error` when it failed. Without `save` the answer is that the files are valid as they
    /// stand (a recording's are finalized on a schedule; a player keeps none).
    func confirmOpen(message: String, save: (@Sendable () -> String?)? = nil) {
        send(OSCMessage(address: "/reply", arguments: [.string("/nsm/client/open"), .string(message)]))
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                guard let request = receive() else { continue }
                guard request.address == "/nsm/client/save" else { continue }
                if let failure = save?() {
                    // ERR_GENERAL, as nsmd's API document numbers it.
                    send(OSCMessage(address: "/error", arguments: [.string("/nsm/client/save"), .int32(-1), .string(failure)]))
                } else {
                    send(OSCMessage(address: "/reply", arguments: [.string("/nsm/client/save"), .string(save == nil ? "the files are valid as they stand" : "saved")]))
                    if save != nil { markDirty(false) }
                }
            }
        }
        thread.name = "aqjack-nsm"
        self.thread = thread
        thread.start()
    }

    /// Tells the session manager whether there are unsaved changes (`:dirty:`).
    func markDirty(_ dirty: Bool) {
        send(OSCMessage(address: dirty ? "/nsm/client/is_dirty" : "/nsm/client/is_clean"))
    }

    /// A note for the session manager's GUI (`:message:`), priority 0 ... 3.
    func note(_ text: String, priority: Int32 = 0) {
        send(OSCMessage(address: "/nsm/client/message", arguments: [.int32(priority), .string(text)]))
    }

    func stop() {
        running.store(false, ordering: .releasing)
        while let thread, !thread.isFinished { usleep(1000) }
    }

    private func send(_ message: OSCMessage) {
        server.send(message.encoded)
    }

    /// One message from the server, or nil after the socket's 100 ms timeout (or for an
    /// undecodable datagram, or one from anyone else: the first of those is reported).
    private func receive() -> OSCMessage? {
        let bytes = server.receive { [server] stranger in
            Diagnostics.warning("ignored an OSC message from \(stranger): only the NSM server at \(server.peerDescription) is obeyed (further ones are dropped silently)")
        }
        guard let bytes, !bytes.isEmpty else { return nil }
        return try? OSCMessage(decoding: bytes)
    }

    private static func text(_ argument: OSCMessage.Argument) -> String {
        switch argument {
        case .string(let value): value
        case .int32(let value): String(value)
        case .float32(let value): String(value)
        case .blob(let value): "\(value.count) bytes"
        }
    }
}

struct NSMError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
