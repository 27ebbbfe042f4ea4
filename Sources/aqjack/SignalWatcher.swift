import Dispatch
import Glibc
import Synchronization

/// Turns SIGINT and SIGTERM into a flag the main loop polls, so the recording is finalized
/// instead of the process dying.
final class SignalWatcher: @unchecked Sendable {
    /// The signal received, or 0.
    let received = Atomic<Int32>(0)
    private var sources: [DispatchSourceSignal] = []

    init(_ signals: [Int32] = [SIGINT, SIGTERM]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in received.store(number, ordering: .releasing) }
            source.resume()
            sources.append(source)
        }
    }
}
