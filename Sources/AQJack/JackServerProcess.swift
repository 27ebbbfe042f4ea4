import Foundation

/// A jackd of our own, started and stopped by PID: the launcher behind ``DummyJackServer`` (the
/// dummy backend) and the tests' NetJACK2 slave (the net backend).
///
/// `jackd [-R|-r] -n NAME SERVER_OPTIONS... -d DRIVER_ARGUMENTS...`. Ready once a client can
/// connect (polled every 50 ms). At most 8 servers run per /dev/shm; the files a server leaves
/// there are removed when it stops.
///
/// Threads: any, one at a time (init, stop and deinit block the calling thread).
public final class JackServerProcess {
    public let name: String
    public let isRealtime: Bool
    private let process: Process

    /// Starts the server and waits until it accepts clients.
    /// - Parameters:
    ///   - realtime: ask for real-time scheduling (`-R`); without it `-r`.
    ///   - serverOptions: what goes between the name and `-d` (e.g. `-p PORT_MAX -t 5000`).
    ///   - driver: the driver and its options, after `-d` (e.g. `dummy -r 48000 -p 128`).
    ///   - logPath: a file for jackd's output (its xrun reports among it); nil discards it.
    ///   - readyWithin: seconds to wait for the first client to connect.
    /// - Throws: ``JackError/serverNotRunning(server:status:)`` when it did not start in time
    ///   (it is killed).
    public init(name: String, realtime: Bool, serverOptions: [String], driver: [String], logPath: String? = nil,
                readyWithin seconds: Double = 10) throws(JackError) {
        self.name = name
        isRealtime = realtime
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        process.arguments = [realtime ? "-R" : "-r", "-n", name] + serverOptions + ["-d"] + driver
        if let logPath, FileManager.default.createFile(atPath: logPath, contents: nil),
           let log = FileHandle(forWritingAtPath: logPath) {
            process.standardOutput = log
            process.standardError = log
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        do { try process.run() } catch { throw JackError.serverNotRunning(server: name, status: []) }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline && process.isRunning {
            // Named after this process: clients of one name on two servers at once break each
            // other (JACK2 names a client's socket by the client name alone).
            if let probe = try? JackClient(name: "aqjack-ready-\(getpid())", server: name) {
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
            _ = process.waitOrKill(timeout: 5)
        }
        for file in (try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm")) ?? [] where file.contains("_\(name)_") {
            try? FileManager.default.removeItem(atPath: "/dev/shm/" + file)
        }
    }

    deinit { stop() }
}
