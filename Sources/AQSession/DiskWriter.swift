import AQCore
import Foundation
import Synchronization

/// The process's disk-writer thread, `aqjack-disk` (as `ps -L` shows it): every file write,
/// header update, fragment flush, file close and `--on-file` hand-off of every recording
/// session in the process runs here, as Ardour's butler thread does its disk work, so a queue
/// thread never waits on the disk.
///
/// Queue threads talk to it through ``DiskStream``s (one per recording: an SPSC byte ring plus
/// the commands in order). The thread starts with the first stream and serves every stream in
/// turn: it runs what each has queued, then sleeps until a stream is handed more (or 50 ms).
///
/// Threads: ``shared`` and ``register(_:)`` from any thread; the rest is the thread itself.
public final class DiskWriter: @unchecked Sendable {
    /// The one writer of the process.
    public static let shared = DiskWriter()
    /// The thread's name, as `ps -L`, `top -H` and gdb show it (at most 15 bytes).
    public static let threadName = "aqjack-disk"

    private let streams = Mutex<[DiskStream]>([])
    private let wakeup = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    private init() {}

    /// Serves `stream` from now on (the thread starts with the first stream).
    func register(_ stream: DiskStream) {
        streams.withLock { $0.append(stream) }
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            let thread = Thread { [self] in
                ThreadNaming.nameCurrentThread(Self.threadName)
                run()
            }
            thread.name = Self.threadName
            thread.start()
        }
        wake()
    }

    /// Stops serving `stream` (once it has finished).
    func unregister(_ stream: DiskStream) {
        streams.withLock { $0.removeAll { $0 === stream } }
    }

    /// Tells the thread there is work. Any thread; never waits.
    func wake() { wakeup.signal() }

    private func run() {
        while true {
            var worked = false
            for stream in streams.withLock({ $0 }) where stream.service() { worked = true }
            if !worked { _ = wakeup.wait(timeout: .now() + .milliseconds(50)) }
        }
    }
}
