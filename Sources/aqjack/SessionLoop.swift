import AQJack
import Dispatch
import Foundation
import Glibc

/// The one loop `aqjack record` and `aqjack play` wait in on the main thread while the queue
/// works: every 50 ms it checks, in this order, whether the session has finished, whether the
/// JACK server has shut down, and whether SIGINT or SIGTERM arrived, and otherwise runs `tick`
/// (the meter or progress line).
enum SessionLoop {
    /// Why the loop ended; each command names it in its own exit reason.
    enum Cause: Equatable {
        case finished, serverShutdown, interrupt, terminate
    }

    /// Polls every 50 ms until `finished`, the server's shutdown, or SIGINT/SIGTERM; calls `tick`
    /// each time. Says on standard error when the server runs no process cycle of the client
    /// for 2 s while it is active, and when cycles come again (``CycleWatch``).
    static func run(client: JackClient, signals: SignalWatcher, finished: () -> Bool, tick: () -> Void) -> Cause {
        var watch = CycleWatch(client: client)
        while true {
            if finished() { return .finished }
            if client.notifications.hasShutDown.load(ordering: .acquiring) { return .serverShutdown }
            let signal = signals.received.load(ordering: .acquiring)
            if signal != 0 { return signal == SIGTERM ? .terminate : .interrupt }
            tick()
            watch.check()
            usleep(50_000)
        }
    }

    /// Runs `body` (the JACK calls on the way out: deactivating and closing the client, which a
    /// queue's dispose does) and, when it has not returned after `seconds`, says so and leaves
    /// the process with exit 1 instead of waiting forever. Only for calls that wait on the
    /// server: not for draining a recording into its file, which may rightly take long. Main
    /// thread.
    ///
    /// Why: libjack's deactivate and close wait for the server's answer without a limit. A server
    /// stopped (SIGSTOP) or wedged (JACK2 after a client joined during freewheel, measured here)
    /// never answers, and a studio script would hang on aqjack. What is already written stays:
    /// the recording's header is rewritten with every buffer. `afterward` says what the user
    /// keeps (e.g. the file and its frames).
    static func leaving<T>(_ client: JackClient, within seconds: Double = 10, afterward: String, _ body: () throws -> T) rethrows -> T {
        let server = client.serverName
        let deadline = DispatchWorkItem {
            Diagnostics.error("the JACK server '\(server)' did not answer for \(Int(seconds)) s while aqjack was leaving it (stopped or wedged): leaving without its answer; \(afterward)")
            _exit(ExitStatus.failure)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: deadline)
        defer { deadline.cancel() }
        return try body()
    }

    /// Notices a client that the server no longer runs: no process callback for 2 s while it is
    /// active. In real time a callback comes every period (2.7 ms at 128 frames, 48 kHz), and in
    /// freewheel faster still; none for 2 s means a stopped or wedged server, or the JACK2
    /// (1.9.21) defect that runs no cycles of a client that joined while the server freewheels
    /// (measured: `jack_freewheel y`, then `aqjack record -d 2` wrote 256 frames in 30 s and did
    /// not end). Without this note a recording would sit there silently. Main thread.
    struct CycleWatch {
        let client: JackClient
        private var lastCycles: UInt64
        private var lastChange = Date()
        private var stalled = false

        init(client: JackClient) {
            self.client = client
            lastCycles = client.processTiming.cycles
        }

        mutating func check() {
            let cycles = client.processTiming.cycles
            if cycles != lastCycles {
                if stalled {
                    Diagnostics.note("the server runs '\(client.name)' again, after \(String(format: "%.1f", Date().timeIntervalSince(lastChange))) s without a cycle")
                }
                lastCycles = cycles
                lastChange = Date()
                stalled = false
            } else if !stalled, client.isActive, Date().timeIntervalSince(lastChange) >= 2 {
                stalled = true
                Diagnostics.note("the server has run no cycle of '\(client.name)' for 2 s: nothing is recorded or played meanwhile. The server may be stopped or wedged; if it is freewheeling, JACK2 runs no cycles of a client that joined during freewheel (switch it off: jack_freewheel n). Ctrl-C ends")
            }
        }
    }

    /// Keeps the client in the graph while the server freewheels, so that it leaves only in real
    /// time: returns at once when the server is not freewheeling; otherwise says so on standard
    /// error and waits until freewheel ends, the server shuts down, or a (further) SIGINT or
    /// SIGTERM comes. Call it after the file is complete, before the client is deactivated.
    ///
    /// Why: with JACK2 1.9.21 (Debian 12) a client that leaves the graph during freewheel wedges
    /// the server. Measured here with a dummy server, a generator and a persistent client that
    /// switches freewheel: when the recorder (aqjack record, or a 64-port C client doing
    /// jack_client_close) ended during freewheel, either `jack_set_freewheel(0)` never returned
    /// or the next `jack_client_open` never did, 3 rounds of 3; with the recorder ending after
    /// freewheel was switched off, 4 rounds of 4 were clean. jack2 #753 reports the same kind of
    /// break for clients that join during a freewheel export. With this wait, 4 rounds of 4
    /// were clean at 64 channels.
    ///
    /// Not enough at 1024 channels: in a CI run the recorder waited here, freewheel was switched
    /// off, and then its `jack_deactivate` never returned (nor the switching client's
    /// `jack_client_close`), so the 1024-channel disk test runs in real time only (docs/JACK.md,
    /// "Known behaviour of JACK"). It is a per-command wait, not part of `JackClient.close`,
    /// because only a command knows that ending later is acceptable; a library client that
    /// closes during freewheel meets the JACK2 defect as any other client does.
    static func waitForFreewheelEnd(client: JackClient, signals: SignalWatcher) {
        let notifications = client.notifications
        guard notifications.isFreewheeling.load(ordering: .acquiring), !notifications.hasShutDown.load(ordering: .acquiring) else { return }
        Diagnostics.note("the server is freewheeling: '\(client.name)' stays in the JACK graph until freewheel ends (a client that leaves during freewheel wedges JACK2); everything is written. Ctrl-C leaves now")
        signals.received.store(0, ordering: .releasing)
        while notifications.isFreewheeling.load(ordering: .acquiring), !notifications.hasShutDown.load(ordering: .acquiring),
              signals.received.load(ordering: .acquiring) == 0 {
            usleep(10_000)
        }
    }
}
