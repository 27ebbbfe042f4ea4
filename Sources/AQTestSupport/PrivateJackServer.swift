import AQJack
import Glibc

/// A jackd of the test's own (dummy backend, unique name), for tests that change the server
/// (buffer size) or kill it (shutdown): ``DummyJackServer`` without real-time scheduling (these
/// tests are about notifications, not timing). Tests start one at a time (at most 8 servers run
/// per /dev/shm).
public final class PrivateJackServer {
    private let server: DummyJackServer

    public init(rate: Int = 48000, period: Int = 128) throws {
        server = try DummyJackServer(name: "aqjack-private-\(getpid())-\(Int.random(in: 0 ..< 1_000_000))", rate: rate, period: period,
                                     portMaximum: 64, realtime: false)
    }

    public var name: String { server.name }
    /// The jackd process ID.
    public var processIdentifier: Int32 { server.processIdentifier }
    /// Sends SIGTERM and waits for it to exit; removes its /dev/shm files.
    public func stop() { server.stop() }
}
