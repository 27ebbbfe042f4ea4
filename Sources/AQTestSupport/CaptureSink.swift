import AQCore
import Foundation
import Synchronization

/// Drains a ``CaptureReader`` on its own thread, handing each cycle to a closure: the consumer
/// side of the tests, and the model for the queue and disk threads.
public final class CaptureSink: @unchecked Sendable {
    private let reader: CaptureReader
    private let body: (CaptureCycle, RingRegions<Float>) -> Void
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Cycles handed to the closure so far.
    public let cycleCount = Atomic<Int>(0)

    /// Starts the thread. `body` runs on it, one cycle at a time.
    public init(reader: CaptureReader, body: @escaping (CaptureCycle, RingRegions<Float>) -> Void) {
        self.reader = reader
        self.body = body
        let thread = Thread { [self] in run() }
        thread.name = "aqjack.sink"
        thread.start()
    }

    private func run() {
        while true {
            let stopping = stopRequested.load(ordering: .acquiring)
            if reader.waitForCycle(milliseconds: 20) {
                while reader.readCycle(body) != nil { cycleCount.add(1, ordering: .relaxed) }
            }
            // Asked to stop before this pass: what was pending then is drained. (Waiting for a
            // pass without a cycle instead never ended while the client was still active.)
            if stopping { break }
        }
        finished.signal()
    }

    /// Drains what is pending, then stops the thread and waits for it.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        finished.wait()
    }
}
