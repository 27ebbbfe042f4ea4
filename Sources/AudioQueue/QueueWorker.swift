import CAudioTypes
import Foundation
import Synchronization

/// The thread of one audio queue (Apple: "one of the audio queue's internal threads"): waits for
/// the device, then runs the queue's work and the control requests (stop, flush, reset), so that
/// callbacks come from this one thread, or from a caller holding the queue's turn
/// (``exclusively(_:)``: offline rendering, on the caller's thread).
final class QueueWorker: @unchecked Sendable {
    /// Held while the work or a request runs, on this thread or by ``exclusively(_:)``.
    private let turn = NSLock()
    private struct Request: Sendable {
        let work: @Sendable () -> Void
        let done: DispatchSemaphore?
    }
    private let requests = Mutex<[Request]>([])
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// A unique address marking this worker's thread (thread-specific data).
    nonisolated(unsafe) private let identity = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

    nonisolated(unsafe) private static var key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Starts the thread: `wait` (a few milliseconds at most, for the device) then, holding the
    /// turn, `work` and the pending requests, over and over.
    init(name: String, wait: @escaping @Sendable () -> Void, work: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            pthread_setspecific(Self.key, identity)
            while !stopRequested.load(ordering: .acquiring) {
                wait()
                turn.lock()
                work()
                let pending = requests.withLock { requests in
                    defer { requests.removeAll() }
                    return requests
                }
                for request in pending {
                    request.work()
                    request.done?.signal()
                }
                turn.unlock()
            }
            for request in requests.withLock({ $0 }) { request.done?.signal() }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    deinit { identity.deallocate() }

    /// Whether the caller is this worker's thread.
    var isCurrentThread: Bool { pthread_getspecific(Self.key) == identity }

    /// Runs `work` on the worker's thread (inline when already on it, or once it has stopped),
    /// waiting for it when `wait` is set.
    func perform(wait: Bool, _ work: @escaping @Sendable () -> Void) {
        if isCurrentThread || stopRequested.load(ordering: .acquiring) {
            work()
            return
        }
        let done = wait ? DispatchSemaphore(value: 0) : nil
        requests.withLock { $0.append(Request(work: work, done: done)) }
        done?.wait()
    }

    /// Runs `body` on the calling thread as if on the worker's: the worker waits meanwhile, and
    /// ``perform(wait:_:)`` and ``isCurrentThread`` inside `body` act as on the worker's thread.
    /// No thread switch per call (offline rendering calls this for every render).
    func exclusively(_ body: () -> Void) {
        if isCurrentThread {
            body()
            return
        }
        turn.lock()
        let previous = pthread_getspecific(Self.key)
        pthread_setspecific(Self.key, identity)
        body()
        pthread_setspecific(Self.key, previous)
        turn.unlock()
    }

    /// Ends the loop and waits for the thread (unless called on it).
    func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if !isCurrentThread { finished.wait() }
    }
}

/// The buffers one queue owns. Not thread-safe: use under the queue's lock.
struct QueueBufferStore {
    private(set) var owned = Set<UnsafeMutablePointer<AudioQueueBuffer>>()

    mutating func allocate(byteCapacity: Int, packetDescriptionCapacity: Int) throws(AudioQueueError) -> AudioQueueBufferRef {
        guard byteCapacity > 0, byteCapacity <= Int(UInt32.max) else {
            throw AudioQueueError(AudioQueueError.parameterCode, "buffer capacity \(byteCapacity) bytes; expected 1 ... \(UInt32.max)")
        }
        let buffer = UnsafeMutablePointer<AudioQueueBuffer>.allocate(capacity: 1)
        // calloc: zeroed, and a large buffer gets zero pages the kernel maps on first write, so
        // the four 0.1 s buffers of a 1024-channel recording (78 MB) cost no time before start.
        guard let data = calloc(byteCapacity, 1) else {
            buffer.deallocate()
            throw AudioQueueError(AudioQueueError.memoryFullCode, "cannot allocate a buffer of \(byteCapacity) bytes")
        }
        let descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>? =
            packetDescriptionCapacity > 0 ? .allocate(capacity: packetDescriptionCapacity) : nil
        aq_buffer_initialize(buffer, UInt32(byteCapacity), data, UInt32(packetDescriptionCapacity), descriptions)
        owned.insert(buffer)
        return buffer
    }

    func contains(_ buffer: AudioQueueBufferRef) -> Bool { owned.contains(buffer) }

    /// Frees a buffer that is not enqueued.
    mutating func free(_ buffer: AudioQueueBufferRef, isEnqueued: Bool) throws(AudioQueueError) {
        guard owned.contains(buffer) else {
            throw AudioQueueError(AudioQueueError.invalidBufferCode, "the buffer does not belong to this queue")
        }
        guard !isEnqueued else {
            throw AudioQueueError(AudioQueueError.bufferInQueueCode, "the buffer is enqueued; stop or reset the queue first")
        }
        owned.remove(buffer)
        Self.release(buffer)
    }

    mutating func releaseAll() {
        owned.forEach(Self.release)
        owned.removeAll()
    }

    private static func release(_ buffer: AudioQueueBufferRef) {
        Glibc.free(buffer.pointee.mAudioData)
        buffer.pointee.mPacketDescriptions?.deallocate()
        buffer.deallocate()
    }
}
