import Foundation
import Glibc

/// A UDP socket that talks to one peer only, as an NSM client talks to its server.
///
/// The peer is named as an OSC URL names it: a host name (resolved with `getaddrinfo`, as liblo
/// and nsmd write `NSM_URL` with the machine's name), an IPv4 address or a bracketed IPv6 one.
/// The socket is bound to the local address the system would use to reach the peer, so it
/// listens on loopback when the peer is on this machine and never on every interface.
/// Datagrams from anyone else are dropped; the first of them is reported through the caller's
/// handler, the rest only counted. One thread receives at a time; any thread may send.
final class UDPPeer {
    private let socket: Int32
    /// The peer's address. A constant: the receiving thread and senders read copies of it.
    private let peer: sockaddr_storage
    private let peerLength: socklen_t
    /// `HOST:PORT` as resolved, for messages.
    let peerDescription: String
    /// Datagrams dropped because someone else sent them.
    private(set) var strangerCount = 0

    /// Resolves `host`, opens a socket of its family bound where the peer is reached, with a
    /// receive timeout of `timeoutMicros`.
    ///
    /// - Throws: a message naming the host, or the system's reason.
    init(host: String, port: Int, timeoutMicros: Int = 100_000) throws(UDPPeerError) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &found)
        guard resolved == 0, let first = found else {
            throw UDPPeerError(message: "host '\(host)' cannot be resolved: \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(found) }
        let peerLength = first.pointee.ai_addrlen
        var peer = sockaddr_storage()
        withUnsafeMutableBytes(of: &peer) { $0.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(peerLength))) }
        self.peer = peer
        self.peerLength = peerLength
        let family = first.pointee.ai_family
        // The local address that reaches the peer: a connected probe's own address, port 0.
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let peerDescription = Self.describe(first.pointee.ai_addr)
        self.peerDescription = peerDescription
        let probe = Glibc.socket(family, Int32(SOCK_DGRAM.rawValue), 0)
        guard probe >= 0 else { throw UDPPeerError(message: "cannot open a UDP socket: \(String(cString: strerror(errno)))") }
        let reached = connect(probe, first.pointee.ai_addr, peerLength) == 0
            && withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &localLength) } } == 0
        let reason = String(cString: strerror(errno))
        close(probe)
        guard reached else { throw UDPPeerError(message: "\(peerDescription) cannot be reached: \(reason)") }
        withUnsafeMutableBytes(of: &local) { raw in
            // sin_port and sin6_port sit at the same offset, right after the family.
            raw.storeBytes(of: UInt16(0), toByteOffset: MemoryLayout<sa_family_t>.size, as: UInt16.self)
        }
        let socket = Glibc.socket(family, Int32(SOCK_DGRAM.rawValue), 0)
        guard socket >= 0 else { throw UDPPeerError(message: "cannot open a UDP socket: \(String(cString: strerror(errno)))") }
        self.socket = socket
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, localLength) } }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(socket)
            throw UDPPeerError(message: "cannot bind a UDP socket to reach \(peerDescription): \(reason)")
        }
        var timeout = timeval(tv_sec: timeoutMicros / 1_000_000, tv_usec: timeoutMicros % 1_000_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(socket) }

    /// Sends one datagram to the peer.
    func send(_ bytes: [UInt8]) {
        var peer = peer
        _ = bytes.withUnsafeBytes { data in
            withUnsafePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket, data.baseAddress, data.count, 0, $0, peerLength) }
            }
        }
    }

    /// The next datagram from the peer, or nil after the timeout. A datagram from anyone else
    /// is dropped; for the first, `stranger` is called with its sender (`HOST:PORT`).
    func receive(stranger: (String) -> Void) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var sender = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &sender) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(socket, bytes.baseAddress, bytes.count, 0, $0, &length) }
            }
        }
        guard count >= 0 else { return nil }
        guard isPeer(sender) else {
            strangerCount += 1
            if strangerCount == 1 {
                withUnsafePointer(to: &sender) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { stranger(Self.describe($0)) } }
            }
            return nil
        }
        return Array(buffer[0 ..< count])
    }

    /// Whether `sender` is the peer: same family, address and port.
    private func isPeer(_ sender: sockaddr_storage) -> Bool {
        guard sender.ss_family == peer.ss_family else { return false }
        let family = Int32(peer.ss_family)
        var sender = sender
        var peer = peer
        let length = Int(peerLength)
        return withUnsafeBytes(of: &sender) { a in withUnsafeBytes(of: &peer) { b in
            switch family {
            case AF_INET:
                // Port and address: bytes 2 ..< 8 of sockaddr_in.
                return a[2 ..< 8].elementsEqual(b[2 ..< 8])
            case AF_INET6:
                // Port (2 ..< 4) and address (8 ..< 24) of sockaddr_in6.
                return a[2 ..< 4].elementsEqual(b[2 ..< 4]) && a[8 ..< 24].elementsEqual(b[8 ..< 24])
            default:
                return a[0 ..< length].elementsEqual(b[0 ..< length])
            }
        } }
    }

    /// `HOST:PORT` (`[HOST]:PORT` for IPv6) of a socket address.
    private static func describe(_ address: UnsafePointer<sockaddr>) -> String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let length = socklen_t(address.pointee.sa_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard getnameinfo(address, length, &host, socklen_t(host.count), &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV) == 0 else {
            return "an unknown address"
        }
        let name = host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let port = service.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return address.pointee.sa_family == sa_family_t(AF_INET6) ? "[\(name)]:\(port)" : "\(name):\(port)"
    }
}

struct UDPPeerError: Error {
    let message: String
}

/// An `osc.udp://HOST:PORT/` URL's host and port, as liblo writes them (HOST a name, an IPv4
/// address or a bracketed IPv6 address; the final slash optional).
///
/// - Throws: a message naming what is wrong and what was expected.
func parseOSCURL(_ url: String) throws(UDPPeerError) -> (host: String, port: Int) {
    let expected = "expected osc.udp://HOST:PORT/"
    guard url.hasPrefix("osc.udp://") else { throw UDPPeerError(message: "'\(url)' is not an OSC URL: \(expected)") }
    var rest = Substring(url.dropFirst("osc.udp://".count))
    if rest.hasSuffix("/") { rest = rest.dropLast() }
    let host: Substring, portText: Substring
    if rest.hasPrefix("[") {
        guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
            throw UDPPeerError(message: "'\(url)' has an IPv6 host without ']:PORT': \(expected)")
        }
        host = rest[rest.index(after: rest.startIndex) ..< close]
        portText = rest[rest.index(close, offsetBy: 2)...]
    } else {
        guard let colon = rest.lastIndex(of: ":") else { throw UDPPeerError(message: "'\(url)' has no port: \(expected)") }
        host = rest[..<colon]
        portText = rest[rest.index(after: colon)...]
    }
    guard !host.isEmpty else { throw UDPPeerError(message: "'\(url)' has no host: \(expected)") }
    guard let port = Int(portText), (1 ... 65535).contains(port) else {
        throw UDPPeerError(message: "'\(url)' has port '\(portText)': expected 1 ... 65535")
    }
    return (String(host), port)
}
