import AQControl
import Foundation
import Glibc
import Synchronization

/// Why the control socket could not be opened.
struct ControlServerError: Error {
    let message: String
}

/// `aqjack host --control PORT`: the graph's control socket, a line protocol over TCP
/// (docs/CONTROL.md). A thread accepts; each connection has a thread of its own that reads lines,
/// runs them through ``GraphControl`` (one command at a time across connections) and writes one
/// reply per line, plus `monitor ID SYMBOL VALUE` lines for the controls it monitors, at most
/// every `monitorInterval`.
///
/// Who is obeyed: bound to 127.0.0.1 unless `--control-host` names another address, which
/// requires a token (`--control-token`, `AQJACK_CONTROL_TOKEN`): then a connection's first line
/// must be `auth TOKEN`. Without a token, only connections from this user's sockets on loopback
/// are taken (``LoopbackPeerOwner``). At most ``maximumConnections`` at once; a line longer than
/// ``ControlLine/maximumBytes`` is refused whole; a peer that does not read its replies for 2 s
/// is dropped.
final class ControlServer: @unchecked Sendable {
    static let maximumConnections = 8

    private let listener: Int32
    private let token: String?
    private let control: GraphControl
    private let monitorInterval: Double
    private let ownUser = getuid()
    private let running = Atomic<Bool>(true)
    private let open = Atomic<Int>(0)
    /// Numbers connections for ``GraphControl`` (accept thread only).
    private var connections = 0
    private var thread: Thread?

    /// Listens on `host`:`port` (0: any free port, see ``port``).
    /// - Throws: an address that is not IPv4, or one the system refuses, naming it and why.
    init(host: String, port: Int, token: String?, control: GraphControl, monitorInterval: Double) throws(ControlServerError) {
        self.token = token
        self.control = control
        self.monitorInterval = max(monitorInterval, 0.001)
        do throws(IPv4Listening.Failure) {
            listener = try IPv4Listening.open(type: Int32(SOCK_STREAM.rawValue), host: host, port: port, option: "--control")
        } catch {
            throw ControlServerError(message: error.message)
        }
    }

    /// The TCP port listened on.
    var port: Int { IPv4Listening.port(of: listener) }

    func start() {
        let thread = Thread { [self] in accepting() }
        thread.name = "aqjack-control"
        self.thread = thread
        thread.start()
    }

    /// Stops listening and ends every connection (each notices within 100 ms).
    func stop() {
        running.store(false, ordering: .releasing)
        while let thread, !thread.isFinished { usleep(1000) }
        close(listener)
        var waited = 0
        while open.load(ordering: .acquiring) > 0, waited < 2000 {
            usleep(1000)
            waited += 1
        }
    }

    private func accepting() {
        let listeningPort = port
        while running.load(ordering: .acquiring) {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let connection = withUnsafeMutablePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) } }
            guard connection >= 0 else { continue }
            // A peer that stops reading its replies blocks a write for at most 2 s, then is dropped.
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if open.load(ordering: .acquiring) >= Self.maximumConnections {
                send(connection, ControlLine.error("busy", "\(Self.maximumConnections) connections are open; close one first") + "\n")
                close(connection)
                continue
            }
            if token == nil, !(LoopbackPeerOwner.isLoopback(peer) && LoopbackPeerOwner.uid(ofLocalPort: LoopbackPeerOwner.port(of: peer), transport: .tcp, remotePort: UInt16(listeningPort)) == ownUser) {
                send(connection, ControlLine.error("auth", "without --control-token only this user's connections on loopback are taken") + "\n")
                close(connection)
                continue
            }
            open.add(1, ordering: .acquiringAndReleasing)
            connections += 1
            let number = connections
            let thread = Thread { [self] in
                serve(connection, number: number)
                control.closed(connection: number)
                close(connection)
                open.subtract(1, ordering: .acquiringAndReleasing)
            }
            thread.name = "aqjack-control"
            thread.start()
        }
    }

    /// One connection: lines in, replies and monitor lines out, until the peer closes, says
    /// `close`, fails to authenticate, or the server stops.
    private func serve(_ connection: Int32, number: Int) {
        var authenticated = token == nil
        var pending: [UInt8] = []
        var discarding = false
        var monitors: [(id: String, symbol: String, last: UInt32?)] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var nextCheck = Date()
        while running.load(ordering: .acquiring) {
            let wait = monitors.isEmpty ? 100 : max(1, Int(nextCheck.timeIntervalSinceNow * 1000))
            var poller = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(wait, 100)))
            if ready > 0 {
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                for byte in chunk[0 ..< count] {
                    guard byte == UInt8(ascii: "\n") else {
                        if !discarding { pending.append(byte) }
                        if pending.count > ControlLine.maximumBytes {
                            discarding = true
                            pending = []
                        }
                        continue
                    }
                    defer { pending = [] }
                    if discarding {
                        discarding = false
                        guard send(connection, ControlLine.error("too-long", "a line of more than \(ControlLine.maximumBytes) bytes; nothing of it was run") + "\n") else { return }
                        continue
                    }
                    let words: [String]
                    do throws(ControlLine.SyntaxError) { words = try ControlLine.words(pending) } catch {
                        guard send(connection, ControlLine.error("syntax", error.description) + "\n") else { return }
                        continue
                    }
                    if !authenticated {
                        guard words.count == 2, words[0] == "auth", let token, AccessToken.matches(words[1], token) else {
                            _ = send(connection, ControlLine.error("auth", "the first line must be: auth TOKEN (the --control-token)") + "\n")
                            return
                        }
                        authenticated = true
                        guard send(connection, ControlLine.ok() + "\n") else { return }
                        continue
                    }
                    if words.first == "auth" {
                        guard send(connection, ControlLine.ok() + "\n") else { return }
                        continue
                    }
                    let (reply, effect) = control.execute(words, connection: number)
                    guard send(connection, reply + "\n") else { return }
                    switch effect {
                    case .none: break
                    case .close: return
                    case .monitor(let id, let symbol, let on):
                        monitors.removeAll { $0.id == id && $0.symbol == symbol }
                        if on { monitors.append((id, symbol, nil)) }
                        nextCheck = Date()
                    }
                }
            } else if ready < 0, errno != EINTR {
                return
            }
            if let line = control.learned(connection: number) {
                guard send(connection, line + "\n") else { return }
            }
            guard !monitors.isEmpty, nextCheck.timeIntervalSinceNow <= 0 else { continue }
            nextCheck = Date(timeIntervalSinceNow: monitorInterval)
            for index in monitors.indices {
                let monitor = monitors[index]
                guard let value = control.value(monitor.id, monitor.symbol), value.bitPattern != monitor.last else { continue }
                monitors[index].last = value.bitPattern
                guard send(connection, "monitor \(ControlLine.quoted(monitor.id)) \(ControlLine.quoted(monitor.symbol)) \(GraphControl.text(value))\n") else { return }
            }
        }
    }

    /// Writes all of `line`; false when the peer is gone or has not read for 2 s.
    @discardableResult
    private func send(_ connection: Int32, _ line: String) -> Bool {
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return false }
            bytes = bytes.dropFirst(sent)
        }
        return true
    }
}
