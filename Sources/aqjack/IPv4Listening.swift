import Glibc

/// The listening sockets of `record --osc` (UDP) and `host --control` (TCP): bound to one IPv4
/// address, messages naming the option the user gave.
enum IPv4Listening {
    struct Failure: Error {
        let message: String
    }

    /// A socket of `type` (SOCK_DGRAM or SOCK_STREAM) bound to `host`:`port` (0: any free port),
    /// listening when it is a stream socket. `option` names the port's option (`--osc`), whose
    /// `-host` option names the address.
    /// - Throws: the message for the user: no socket, an address that is not IPv4, or one the
    ///   system refuses, with its reason.
    static func open(type: Int32, host: String, port: Int, option: String) throws(Failure) -> Int32 {
        let stream = type == Int32(SOCK_STREAM.rawValue)
        let socket = Glibc.socket(AF_INET, type, 0)
        guard socket >= 0 else { throw Failure(message: "cannot open a \(stream ? "TCP" : "UDP") socket for \(option): \(String(cString: strerror(errno)))") }
        if stream {
            var yes: Int32 = 1
            setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(socket)
            throw Failure(message: "\(option)-host '\(host)' is not an IPv4 address (e.g. 127.0.0.1, or 0.0.0.0 for every interface)")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, !stream || listen(socket, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(socket)
            throw Failure(message: "\(option) cannot listen on \(host):\(port): \(reason)")
        }
        return socket
    }

    /// The port `socket` is bound to.
    static func port(of socket: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

