import AQControl
import AQWeb
import Glibc
import Synchronization

/// `--http`: a session's web surface on an ``HTTPServer`` (docs/WEB.md): `GET /` the page,
/// `GET /status` the latest ``LiveStatus`` as JSON, `GET /metrics` in Prometheus' format, the
/// WebSocket `/live` pushing the status about 20 times a second, `GET /events` the session's
/// events (Server-Sent Events), `POST /control/VERB` the session's commands (the verbs OSC and
/// the control socket take; the body holds a command's words after the verb), and any pages the
/// session adds (the host's `/graph`).
///
/// Threads: ``update(_:)`` from the session's loop; requests on the server's threads, which read
/// the latest status under a lock and call `command`, which must be safe from any thread.
final class SessionWeb: @unchecked Sendable {
    /// What a command answered: 200 and its reply (`ok ...`), or a 4xx status and why it was refused.
    struct Reply: Sendable {
        var status: Int
        var text: String
        static func ok(_ text: String = "ok") -> Reply { Reply(status: 200, text: text) }
        static func refused(_ text: String, status: Int = 409) -> Reply { Reply(status: status, text: text) }
    }
    typealias Command = @Sendable (_ verb: String, _ arguments: [String]) -> Reply

    let server: HTTPServer
    private let status: LatestStatus

    /// Starts serving; notes the address on standard error.
    /// - Parameters:
    ///   - command: runs a verb with the words of the request's body.
    ///   - pages: more `GET` pages by path, answered on the server's threads.
    init(options: HTTPOptions, initial: LiveStatus, events: EventLog?, pages: [String: @Sendable () -> HTTPResponse] = [:],
         command: @escaping Command) throws(HTTPServerError) {
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
            Self.answer(request, status: status.value.withLock { $0 }, pages: pages, command: command)
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

    private static func answer(_ request: HTTPRequest, status: LiveStatus, pages: [String: @Sendable () -> HTTPResponse], command: Command) -> HTTPResponse {
        let path = request.path
        if path.hasPrefix("/control/") {
            guard request.method == "POST" else { return .error("\(path) takes POST", status: 405) }
            let verb = String(path.dropFirst("/control/".count))
            guard status.controls.contains(verb) else {
                return .error("'\(verb)' is not a command of this \(status.command) now: expected one of \(status.controls.joined(separator: ", "))", status: 409)
            }
            let arguments: [String]
            do throws(ControlLine.SyntaxError) { arguments = try ControlLine.words(request.body) } catch {
                return .error("the body of \(path) is not a command's words: \(error)", status: 400)
            }
            let reply = command(verb, arguments)
            guard reply.status == 200 else { return .error(reply.text, status: reply.status) }
            return .json("{\"ok\":true,\"command\":\(JSONText.string(verb)),\"reply\":\(JSONText.string(reply.text))}")
        }
        guard request.method != "POST" else { return .error("\(path) takes GET; commands are POST /control/VERB", status: 405) }
        switch path {
        case "/", "/index.html": return .html(WebPage.html)
        case "/favicon.ico": return HTTPResponse(status: 204, contentType: "image/x-icon", body: [])
        case "/status": return .json(status.json)
        case "/metrics": return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(status.prometheus.utf8))
        default:
            if let page = pages[path] { return page() }
            let extra = pages.keys.sorted().map { ", \($0)" }.joined()
            return .error("no page \(path): expected /, /status, /metrics, /events\(extra), the WebSocket /live, or POST /control/VERB", status: 404)
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
