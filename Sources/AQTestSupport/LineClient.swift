import Foundation
import Glibc

/// A TCP client of a line protocol (the control socket, docs/CONTROL.md), for tests: sends
/// lines, reads lines with a deadline. Test code, one thread; not real time.
public final class LineClient {
    private let socket: Int32
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port`.
    public init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard socket >= 0, connected == 0 else {
            let reason = String(cString: strerror(errno))
            if socket >= 0 { close(socket) }
            throw NSError(domain: "LineClient", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot connect to 127.0.0.1:\(port): \(reason)"])
        }
    }

    deinit { close(socket) }

    /// Sends raw bytes (a line's, with its newline, or anything else).
    public func send(bytes: [UInt8]) {
        var rest = bytes[...]
        while !rest.isEmpty {
            let sent = rest.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { return }
            rest = rest.dropFirst(sent)
        }
    }

    /// Sends `line` and a newline.
    public func send(_ line: String) { send(bytes: Array((line + "\n").utf8)) }

    /// The next line (without its newline), or nil when the peer closed or `timeout` seconds passed.
    public func readLine(timeout: Double = 5) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&poller, 1, left) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            pending += chunk[0 ..< count]
        }
    }

    /// Sends `line` and returns the next line that is not a `monitor` line.
    public func command(_ line: String, timeout: Double = 5) -> String? {
        send(line)
        while let reply = readLine(timeout: timeout) {
            if !reply.hasPrefix("monitor ") { return reply }
        }
        return nil
    }
}
