import Foundation
import Glibc

/// Who owns the socket a datagram or a connection on loopback came from: the user id the kernel
/// lists for the peer's local port in `/proc/net/udp` and `/proc/net/udp6` (UDP) or
/// `/proc/net/tcp` and `/proc/net/tcp6` (TCP). Loopback sockets carry no credentials; this is
/// how `aqjack record --osc` and `aqjack host --control` take commands only from their own
/// user when they listen without a token.
enum LoopbackPeerOwner {
    enum Transport { case udp, tcp }

    /// The user id owning a socket of `transport` bound to local `port`, or nil when none is
    /// listed. For TCP, the connected socket whose remote port is `remotePort` (closed sockets
    /// of the same port wait listed as the kernel's, uid 0).
    static func uid(ofLocalPort port: UInt16, transport: Transport = .udp, remotePort: UInt16? = nil) -> uid_t? {
        for table in transport == .udp ? ["/proc/net/udp", "/proc/net/udp6"] : ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end: String(contentsOfFile:) stops after the first 4 KiB of a /proc
            // table (measured: 27 of 42 lines), missing sockets listed after it.
            guard let file = FileHandle(forReadingAtPath: table) else { continue }
            let text = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
            try? file.close()
            // "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid ..."
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 7, let colon = fields[1].lastIndex(of: ":"),
                      UInt16(fields[1][fields[1].index(after: colon)...], radix: 16) == port else { continue }
                if let remotePort {
                    // State 01: established.
                    guard fields[3] == "01", let remoteColon = fields[2].lastIndex(of: ":"),
                          UInt16(fields[2][fields[2].index(after: remoteColon)...], radix: 16) == remotePort else { continue }
                }
                return uid_t(fields[7])
            }
        }
        return nil
    }

    /// Whether `sender` is a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x).
    static func isLoopback(_ sender: sockaddr_storage) -> Bool {
        let family = Int32(sender.ss_family)
        var sender = sender
        return withUnsafeBytes(of: &sender) { raw in
            switch family {
            case AF_INET: return raw[4] == 127
            case AF_INET6:
                let address = Array(raw[8 ..< 24])
                return address == [UInt8](repeating: 0, count: 15) + [1]
                    || (address[0 ..< 10].allSatisfy { $0 == 0 } && address[10] == 0xFF && address[11] == 0xFF && address[12] == 127)
            default: return false
            }
        }
    }

    /// The port of `sender` (IPv4 or IPv6).
    static func port(of sender: sockaddr_storage) -> UInt16 {
        var sender = sender
        return withUnsafeBytes(of: &sender) { UInt16($0[2]) << 8 | UInt16($0[3]) }
    }

    /// Whether a `--osc-host` or `--control-host` value is a loopback address.
    static func isLoopbackHost(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
