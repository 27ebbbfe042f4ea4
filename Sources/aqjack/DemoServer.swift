import AQJack
import Foundation

/// The server `aqjack demo` uses: the one asked for if it runs, else a private dummy jackd that
/// the demo starts (and says so) and stops by PID at the end.
final class DemoServer {
    let name: String
    private var server: DummyJackServer?

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
        // Real-time scheduling where the machine allows it, else without.
        for realtime in [true, false] {
            if let server = try? DummyJackServer(name: name, rate: 48000, period: 256, realtime: realtime) {
                self.server = server
                return
            }
        }
        throw JackError.serverNotRunning(server: name, status: [])
    }

    /// Stops the private server, if the demo started one.
    func stop() {
        server?.stop()
        server = nil
    }

    var isPrivate: Bool { server != nil }
}
