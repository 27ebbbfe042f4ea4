import AQJack
import Foundation

/// A jackd of the test's own (dummy backend, unique name), for tests that change the server
/// (buffer size) or kill it (shutdown). Stopped by PID; files it leaves in /dev/shm are removed.
///
/// At most 8 servers can run per /dev/shm on a machine; tests start one at a time.
public final class PrivateJackServer {
    public let name: String
    private let process = Process()

    /// Starts `jackd -n NAME -d dummy -r RATE -p PERIOD` (without real-time scheduling: these tests
    /// are about notifications, not timing) and waits until a client can connect.
    public init(rate: Int = 48000, period: Int = 128) throws {
        name = "aqjack-private-\(getpid())-\(Int.random(in: 0 ..< 1_000_000))"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        process.arguments = ["-r", "-n", name, "-p", "64", "-t", "5000", "-d", "dummy", "-r", "\(rate)", "-p", "\(period)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let client = try? JackClient(name: "ready-check", server: name) {
                client.close()
                return
            }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        stop()
        throw JackError.serverNotRunning(server: name, status: [])
    }

    /// The jackd process ID.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends SIGTERM (the way a session manager or Ctrl-C ends jackd) and waits for it to exit.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        for file in (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? [] where file.contains("_\(name)_") {
            try? FileManager.default.removeItem(atPath: "/dev/shm/" + file)
        }
    }

    deinit { stop() }
}
