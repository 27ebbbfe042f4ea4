import AQJack
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

    static func run(client: JackClient, signals: SignalWatcher, finished: () -> Bool, tick: () -> Void) -> Cause {
        while true {
            if finished() { return .finished }
            if client.notifications.hasShutDown.load(ordering: .acquiring) { return .serverShutdown }
            let signal = signals.received.load(ordering: .acquiring)
            if signal != 0 { return signal == SIGTERM ? .terminate : .interrupt }
            tick()
            usleep(50_000)
        }
    }
}
