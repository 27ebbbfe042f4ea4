import Foundation

/// A jackd of our own on the dummy backend (no sound card), started and stopped by PID: the one
/// launcher behind `aqjack demo`'s private server and the tests' ``PrivateJackServer``.
///
/// `jackd [-R|-r] -n NAME -p PORT_MAX -t 5000 -d dummy -r RATE -p PERIOD`: the `-p` before `-d`
/// is the port maximum (shared-memory size), the one after it the period. Ready once a client
/// can connect (polled every 50 ms for up to 10 s). At most 8 servers run per /dev/shm; the files
/// a server leaves there are removed when it stops.
public final class DummyJackServer {
    public let name: String
    public let isRealtime: Bool
    private let process: Process

    /// Starts the server and waits until it accepts clients.
    /// - Parameters:
    ///   - realtime: ask for real-time scheduling (`-R`); without it `-r`.
    ///   - logPath: a file for jackd's output (its xrun reports among it); nil discards it.
    /// - Throws: ``JackError/serverNotRunning(server:status:)`` when it did not start (it is killed).
    public init(name: String, rate: Int = 48000, period: Int, portMaximum: Int = 128, realtime: Bool,
                logPath: String? = nil) throws(JackError) {
        self.name = name
        isRealtime = realtime
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        process.arguments = [realtime ? "-R" : "-r", "-n", name, "-p", "\(portMaximum)", "-t", "5000",
                             "-d", "dummy", "-r", "\(rate)", "-p", "\(period)"]
        if let logPath, FileManager.default.createFile(atPath: logPath, contents: nil),
           let log = FileHandle(forWritingAtPath: logPath) {
            process.standardOutput = log
            process.standardError = log
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        do { try process.run() } catch { throw JackError.serverNotRunning(server: name, status: []) }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && process.isRunning {
            if let probe = try? JackClient(name: "aqjack-ready-probe", server: name) {
                probe.close()
                return
            }
            usleep(50_000)
        }
        stop()
        throw JackError.serverNotRunning(server: name, status: [])
    }

    /// The jackd process ID.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends SIGTERM (as a session manager or Ctrl-C ends jackd), waits up to 5 s for it to exit
    /// (then SIGKILL), and removes its files from /dev/shm. Idempotent.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            _ = process.waitForExit(timeout: 5)
        }
        for file in (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? [] where file.contains("_\(name)_") {
            try? FileManager.default.removeItem(atPath: "/dev/shm/" + file)
        }
    }

    deinit { stop() }
}
