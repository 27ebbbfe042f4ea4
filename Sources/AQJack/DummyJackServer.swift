/// A jackd of our own on the dummy backend (no sound card), started and stopped by PID: the one
/// launcher behind `aqjack demo`'s private server and the tests' ``PrivateJackServer``.
///
/// `jackd [-R|-r] -n NAME -p PORT_MAX -t 5000 -d dummy -r RATE -p PERIOD`: the `-p` before `-d`
/// is the port maximum (shared-memory size), the one after it the period. Ready once a client
/// can connect (up to 10 s). See ``JackServerProcess`` for the process itself.
public final class DummyJackServer {
    private let server: JackServerProcess

    /// Starts the server and waits until it accepts clients.
    /// - Parameters:
    ///   - realtime: ask for real-time scheduling (`-R`); without it `-r`.
    ///   - logPath: a file for jackd's output (its xrun reports among it); nil discards it.
    /// - Throws: ``JackError/serverNotRunning(server:status:)`` when it did not start (it is killed).
    public init(name: String, rate: Int = 48000, period: Int, portMaximum: Int = 128, realtime: Bool,
                logPath: String? = nil) throws(JackError) {
        server = try JackServerProcess(name: name, realtime: realtime, serverOptions: ["-p", "\(portMaximum)", "-t", "5000"],
                                       driver: ["dummy", "-r", "\(rate)", "-p", "\(period)"], logPath: logPath)
    }

    public var name: String { server.name }
    public var isRealtime: Bool { server.isRealtime }
    /// The jackd process ID.
    public var processIdentifier: Int32 { server.processIdentifier }

    /// Sends SIGTERM, waits up to 5 s for it to exit (then SIGKILL), and removes its files from
    /// /dev/shm. Idempotent.
    public func stop() { server.stop() }
}
