import Foundation

/// A value made on a helper thread while the caller does something else, taken once with
/// ``take()`` (which waits for it). The queues make their rings (zeroed, locked pages: 77 ms
/// for a 1024-channel capture ring) this way while JACK registers their ports (0.4 s at 1024);
/// `aqjack play` reads its file ahead and fills its first buffers this way. Not real-time.
public final class BackgroundValue<Value: Sendable>: @unchecked Sendable {
    private var result: Value?
    private let done = DispatchSemaphore(value: 0)

    /// Starts `make` on a new thread now.
    public init(_ make: @escaping @Sendable () -> Value) {
        Thread.detachNewThread { [self] in
            result = make()
            done.signal()
        }
    }

    /// Waits for the value (the semaphore orders the helper's write before this read). Call once.
    @discardableResult
    public func take() -> Value {
        done.wait()
        return result!
    }
}
