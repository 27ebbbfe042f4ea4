import AQJack
import Foundation

/// The server `aqjack demo` uses: the one asked for if it runs, else a private dummy jackd that
/// the demo starts (and says so) and stops by PID at the end.
final class DemoServer {
    let name: String
    private var process: Process?

    init(requested: String?) throws {
        JackServer.quietLibraryMessages()
        let wanted = JackServer.resolvedName(requested)
        if let probe = try? JackClient(name: "aqjack-demo-probe", server: wanted) {
            probe.close()
            name = wanted
            return
        }
        name = "aqjack-demo-\(getpid())"
        Diagnostics.note("no JACK server '\(wanted)' is running: starting a private one, '\(name)' (dummy backend, 48000 Hz, period 256; no sound card needed)")
        for realtime in [true, false] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
            process.arguments = [realtime ? "-R" : "-r", "-n", name, "-p", "128", "-t", "5000", "-d", "dummy", "-r", "48000", "-p", "256"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { continue }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && process.isRunning {
                if let probe = try? JackClient(name: "aqjack-demo-probe", server: name) {
                    probe.close()
                    self.process = process
                    return
                }
                usleep(50_000)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        throw JackError.serverNotRunning(server: name, status: [])
    }

    /// Stops the private server, if the demo started one.
    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    var isPrivate: Bool { process != nil }
}
