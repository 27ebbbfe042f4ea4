import AQWeb
import Glibc
import Synchronization

/// `--http`: a session's web surface on an ``HTTPServer`` (docs/WEB.md): `GET /` the page,
/// `GET /status` the latest ``LiveStatus`` as JSON, `GET /metrics` in Prometheus' format, the
/// WebSocket `/live` pushing the status about 20 times a second, `GET /events` the session's
/// events (Server-Sent Events), and `POST /control/VERB` the session's commands (the verbs OSC
/// takes).
///
/// Threads: ``update(_:)`` from the session's loop; requests on the server's threads, which read
/// the latest status under a lock and call `command`, which must be safe from any thread.
final class SessionWeb: @unchecked Sendable {
    let server: HTTPServer
    private let status: LatestStatus

    /// Starts serving; notes the address on standard error.
    /// - Parameter command: runs a verb; nil when done, else the reason it was refused (409).
    init(options: HTTPOptions, initial: LiveStatus, events: EventLog?, command: @escaping @Sendable (String) -> String?) throws(HTTPServerError) {
        let status = LatestStatus(initial)
        self.status = status
        var settings = HTTPServer.Options()
        settings.host = options.host
        settings.port = options.port ?? 0
        settings.token = options.token
        settings.events = events
        // Without a token, only this user's sockets on loopback: the control socket's and OSC's rule.
        let listening = ListeningPort()
        if options.token == nil {
            let ownUser = getuid()
            settings.admitsPeer = { address, port in
                LoopbackPeerOwner.isLoopbackHost(address)
                    && LoopbackPeerOwner.uid(ofLocalPort: UInt16(clamping: port), transport: .tcp, remotePort: UInt16(clamping: listening.value.load(ordering: .relaxed))) == ownUser
            }
        }
        server = try HTTPServer(options: settings) { request in
            Self.answer(request, status: status.value.withLock { $0 }, command: command)
        }
        listening.value.store(server.port, ordering: .relaxed)
        server.publish(initial.json)
        Diagnostics.note("web page on http://\(server.host):\(server.port)/ (status /status, metrics /metrics, live /live)")
    }

    /// Shows `status` to the next requests and pushes.
    func update(_ status: LiveStatus) {
        self.status.value.withLock { $0 = status }
        server.publish(status.json)
    }

    func stop() { server.stop() }

    private static func answer(_ request: HTTPRequest, status: LiveStatus, command: (String) -> String?) -> HTTPResponse {
        let path = request.path
        if path.hasPrefix("/control/") {
            guard request.method == "POST" else { return .error("\(path) takes POST", status: 405) }
            let verb = String(path.dropFirst("/control/".count))
            guard status.controls.contains(verb) else {
                return .error("'\(verb)' is not a command of this \(status.command) now: expected one of \(status.controls.joined(separator: ", "))", status: 409)
            }
            if let refusal = command(verb) { return .error(refusal, status: 409) }
            return .json("{\"ok\":true,\"command\":\(JSONText.string(verb))}")
        }
        guard request.method != "POST" else { return .error("\(path) takes GET; commands are POST /control/VERB", status: 405) }
        switch path {
        case "/", "/index.html": return .html(WebPage.html)
        case "/status": return .json(status.json)
        case "/metrics": return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(status.prometheus.utf8))
        default: return .error("no page \(path): expected /, /status, /metrics, /events, the WebSocket /live, or POST /control/VERB", status: 404)
        }
    }
}

/// The port a server listens on, known once it has started (its peer check reads it).
private final class ListeningPort: Sendable {
    let value = Atomic<Int>(0)
}

/// The status the requests read, replaced by the session's loop.
private final class LatestStatus: Sendable {
    let value: Mutex<LiveStatus>
    init(_ status: LiveStatus) { value = Mutex(status) }
}
