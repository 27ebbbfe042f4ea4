import Foundation

/// A value made on a helper thread while the caller does something else, taken once with
/// ``take()`` (which waits for it). The queues make their rings (zeroed, locked pages) this way
/// while JACK registers their ports (docs/MEASUREMENTS.md, "Starts");
/// `aqjack play` reads its file ahead and fills its first buffers this way. When no thread can
/// be started (address-space or thread limits), ``take()`` makes the value on the caller's
/// thread instead, so nothing waits for a thread that never ran. Not real-time.
public final class BackgroundValue<Value: Sendable>: @unchecked Sendable {
    private var result: Value?
    private let done = DispatchSemaphore(value: 0)
    private let make: @Sendable () -> Value
    private var started = false

    /// Starts `make` on a new thread now (or, when none can be started, leaves it to ``take()``).
    public init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        let job = Unmanaged.passRetained(HelperJob { [self] in
            result = make()
            done.signal()
        })
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { context in
            Unmanaged<HelperJob>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, job.toOpaque())
        if code == 0 {
            pthread_detach(thread)
            started = true
        } else {
            job.release()
        }
    }

    /// Waits for the value (the semaphore orders the helper's write before this read). Call once.
    @discardableResult
    public func take() -> Value {
        guard started else { return make() }
        done.wait()
        return result!
    }
}

/// What a helper thread runs: a closure, handed over as an unmanaged reference.
private final class HelperJob {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
