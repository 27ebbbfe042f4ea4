import AQJack
import Foundation

/// A jackd of the test's own (dummy backend, unique name), for tests that change the server
/// (buffer size), kill it (shutdown) or need more ports than the suite's server has:
/// ``DummyJackServer``, without real-time scheduling unless asked (the notification tests are
/// not about timing). Tests start one at a time (at most 8 servers run per /dev/shm).
///
/// Its output goes to `jackd-NAME.log` in the temporary directory (`$TMPDIR`), where
/// Scripts/jack-suite.sh looks for the xruns the server reported during a test run.
public final class PrivateJackServer {
    private let server: DummyJackServer

    public init(rate: Int = 48000, period: Int = 128, portMaximum: Int = 64, realtime: Bool = false) throws {
        let name = "aqjack-private-\(getpid())-\(Int.random(in: 0 ..< 1_000_000))"
        server = try DummyJackServer(name: name, rate: rate, period: period, portMaximum: portMaximum, realtime: realtime,
                                     logPath: FileManager.default.temporaryDirectory.appendingPathComponent("jackd-\(name).log").path)
    }

    public var name: String { server.name }
    /// The jackd process ID.
    public var processIdentifier: Int32 { server.processIdentifier }
    /// Sends SIGTERM and waits for it to exit; removes its /dev/shm files.
    public func stop() { server.stop() }
}
