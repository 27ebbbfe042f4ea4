import CCivetweb
import Foundation
import Glibc
import Synchronization

/// What the server could not do, in words naming the address and the cause.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// An HTTP and WebSocket server on civetweb (Debian's `libcivetweb-dev`): every request goes to
/// one handler after the server has checked it (method, size, token), and a WebSocket endpoint,
/// `/live`, pushes the latest text given to ``publish(_:)`` to every client about
/// ``Options/liveInterval`` apart, and `GET /events` streams an ``EventLog`` as Server-Sent
/// Events (each client keeps a thread). civetweb parses HTTP and frames WebSocket messages; this
/// holds the rules.
///
/// Rules: a peer ``Options/admitsPeer`` refuses gets 403; only `GET`, `HEAD` and `POST` (405 otherwise); a body over
/// ``Options/maximumRequestBytes`` is refused with 413 unread; with a token, every request and
/// WebSocket must carry it (`Authorization: Bearer TOKEN` or `?token=TOKEN`), else 401; at most
/// ``Options/threads`` connections are served at once (each WebSocket client keeps one) and at
/// most ``Options/maximumLiveClients`` WebSocket clients, the rest refused.
///
/// Threads: civetweb's own (the handler is called on them, several at once); a pusher per
/// WebSocket client (``LiveClient``: a client that stops reading holds up no other);
/// ``publish(_:)`` and ``stop()`` from any thread. Never on a real-time path.
public final class HTTPServer: @unchecked Sendable {
    public struct Options: Sendable {
        /// The IPv4 address to listen on, and the port (0: any free one, then ``HTTPServer/port``).
        public var host = "127.0.0.1"
        public var port = 0
        /// The secret every request must carry, or nil (only for loopback: the caller's rule).
        public var token: String?
        public var maximumRequestBytes = 16 * 1024
        public var threads = 96
        public var maximumLiveClients = 64
        /// Seconds between two pushes to the WebSocket clients.
        public var liveInterval = 0.05
        /// Which peers (address, port) may connect at all, or nil for any: those it refuses get 403
        /// (aqjack without a token: only its own user's sockets on loopback).
        public var admitsPeer: (@Sendable (_ address: String, _ port: Int) -> Bool)?
        /// The events `GET /events` streams (Server-Sent Events), or nil for none.
        public var events: EventLog?
        /// Clients `GET /events` streams to at once; more get 503.
        public var maximumEventClients = 16
        public init() {}
    }

    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    public let host: String
    /// The port listened on.
    public let port: Int
    private let context: OpaquePointer
    /// The state, held here for as long as the server object lives (publishing after ``stop()``
    /// is harmless); civetweb's callbacks hold a reference of their own (their user data),
    /// released once ``stop()`` has stopped them.
    private let shared: HTTPServerState
    private let stopped = Atomic<Bool>(false)

    /// Starts listening.
    /// - Throws: the address or port refused (in use, not this machine's), with civetweb's words.
    public init(options: Options, handler: @escaping Handler) throws(HTTPServerError) {
        let state = HTTPServerState(options: options, handler: handler)
        let retained = Unmanaged.passRetained(state)
        shared = state
        let settings = ["listening_ports", "\(options.host):\(options.port)",
                        "num_threads", "\(options.threads)",
                        "request_timeout_ms", "10000",
                        "websocket_timeout_ms", "3600000",
                        "enable_keep_alive", "no",
                        "max_request_size", "\(options.maximumRequestBytes)"]
        var callbacks = mg_callbacks()
        callbacks.log_message = civetwebLogMessage
        HTTPServerState.startError.withLock { $0 = nil }
        let started: OpaquePointer? = withCStrings(settings) { pointers in
            mg_start(&callbacks, retained.toOpaque(), pointers)
        }
        guard let started else {
            retained.release()
            let reason = HTTPServerState.startError.withLock { $0 } ?? "civetweb gave no reason"
            throw HTTPServerError("cannot listen for HTTP on \(options.host):\(options.port): \(reason)")
        }
        context = started
        host = options.host
        var ports = [mg_server_port](repeating: mg_server_port(), count: 4)
        let count = mg_get_server_ports(started, Int32(ports.count), &ports)
        port = count > 0 ? Int(ports[0].port) : options.port
        let data = retained.toOpaque()
        mg_set_request_handler(started, "/", civetwebRequest, data)
        mg_set_websocket_handler(started, "/live", civetwebLiveConnect, civetwebLiveReady, civetwebLiveData, civetwebLiveClose, data)
    }

    deinit { stop() }

    /// Sets what the WebSocket clients are sent next (each push sends the latest).
    public func publish(_ text: String) { shared.publish(text) }

    /// WebSocket clients connected now.
    public var liveClientCount: Int { shared.liveCount }

    /// Requests answered so far, and refused before the handler (size, method, token).
    public var requestCount: Int { shared.requests.load(ordering: .relaxed) }
    public var refusedCount: Int { shared.refused.load(ordering: .relaxed) }

    /// Stops the pushers and the server (waits for civetweb's threads). Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shared.stopping.store(true, ordering: .releasing)
        shared.stopLive()
        mg_stop(context)
        Unmanaged.passUnretained(shared).release()
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
}

/// The state civetweb's callbacks reach through their user data.
final class HTTPServerState: @unchecked Sendable {
    let options: HTTPServer.Options
    let handler: HTTPServer.Handler
    let requests = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    /// Set when the server stops: event streams end.
    let stopping = Atomic<Bool>(false)
    let eventClients = Atomic<Int>(0)
    /// WebSocket clients ready for pushes, by their connection's bits, and the text to push.
    private let live = Mutex<[UInt: LiveClient]>([:])
    private let text = LiveText()
    /// The words civetweb logged while a server was starting (mg_start has no error out).
    static let startError = Mutex<String?>(nil)

    init(options: HTTPServer.Options, handler: @escaping HTTPServer.Handler) {
        self.options = options
        self.handler = handler
    }

    func publish(_ text: String) { self.text.publish(text) }

    var liveCount: Int { live.withLock { $0.count } }

    /// Whether `token`'s rule lets a request with these query fields and headers in.
    func admits(query: [String: String], authorization: String?) -> Bool {
        guard let token = options.token else { return true }
        let given = query["token"] ?? authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let given else { return false }
        // Every byte compared, so the time taken does not say how much matched.
        let a = Array(given.utf8), b = Array(token.utf8)
        var difference = a.count ^ b.count
        for index in 0 ..< min(a.count, b.count) { difference |= Int(a[index] ^ b[index]) }
        return difference == 0
    }

    /// A WebSocket client is ready: its own thread pushes to it from now on (refused past
    /// ``HTTPServer/Options/maximumLiveClients``, or once the server stops).
    func addLive(_ connection: OpaquePointer) -> Bool {
        let client = LiveClient(connection: connection, text: text, intervalSeconds: options.liveInterval)
        let added = live.withLock { clients in
            guard clients.count < options.maximumLiveClients, !stopping.load(ordering: .acquiring) else { return false }
            clients[Self.key(connection)] = client
            return true
        }
        if added { client.start() }
        return added
    }

    /// A WebSocket client is closing: its pushes end before civetweb frees the connection.
    func removeLive(_ connection: OpaquePointer) {
        guard let client = live.withLock({ $0.removeValue(forKey: Self.key(connection)) }) else { return }
        client.stop()
    }

    /// Ends every client's pushes (the server is stopping; ``stopping`` is set, so none is added).
    func stopLive() {
        let clients = live.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in clients { client.stop() }
    }

    private static func key(_ connection: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))) }
}
