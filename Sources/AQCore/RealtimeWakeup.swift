import Glibc

/// A counting semaphore the process thread posts to wake a waiting consumer thread.
///
/// `sem_post` never blocks nor allocates: with the thunk's CPU-clock reads, the only system calls
/// the process thread makes (docs/ARCHITECTURE.md, "Threads and the real-time rule"). The semaphore
/// lives in manually allocated memory and this handle is a plain pointer, so copying it costs no
/// reference counting. Whoever created it calls ``destroy()`` once, after both threads are done.
@frozen
public struct RealtimeWakeup: @unchecked Sendable {
    @usableFromInline let semaphore: UnsafeMutablePointer<sem_t>

    /// Allocates and initialises the semaphore at zero. Not real-time safe.
    public init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    /// Wakes the waiting thread, if any.
    ///
    /// - Important: Real-time safe: `sem_post` does not block or allocate.
    @inlinable
    public func signal() {
        // sem_post is a C call the performance annotations cannot see into; it is a non-blocking
        // futex wake, allowed on the process thread.
        let semaphore = self.semaphore
        _unsafePerformance { _ = sem_post(semaphore) }
    }

    /// Waits until signalled or until `milliseconds` have passed.
    /// - Returns: `true` when signalled. Not real-time safe.
    @discardableResult
    public func wait(milliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + (milliseconds % 1000) * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        while true {
            if sem_timedwait(semaphore, &deadline) == 0 { return true }
            if errno != EINTR { return false }
        }
    }

    /// Frees the semaphore. Call once, when no thread uses it any more.
    public func destroy() {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }
}
