import Synchronization

/// A lock-free single-producer/single-consumer ring of `Element`s (audio samples, cycle records).
///
/// Split the ring into its two ends and hand each to its thread; the ends are noncopyable, so the
/// producer and the consumer cannot be swapped or shared by mistake (JACK's ringbuffer.h: "their
/// identities cannot be interchanged"):
///
/// ```swift
/// let ring = SPSCRing<Float>(minimumCapacity: 8192)
/// let producer = ring.producer    // moves to the process thread
/// let consumer = ring.consumer    // moves to the queue or disk thread
/// ```
///
/// ### Implementation notes
/// Both indices are free-running `Int`s (never masked when stored, wrapped with `&+`), so the
/// whole capacity is usable and `write - read` is the fill level (PipeWire's spa_ringbuffer).
/// Each end loads its own index `.relaxed` and the other end's `.acquiring`, and publishes its own
/// with `.releasing` after copying, so the copied elements are visible before the index moves.
/// Written on `Synchronization.Atomic` because Debian 12's libjack 1.9.21 ring lacks the fences
/// added in 1.9.22.
@frozen
public struct SPSCRing<Element: BitwiseCopyable>: ~Copyable {
    /// The writing end. Take it once: `let producer = ring.producer`.
    public var producer: RingProducer<Element>
    /// The reading end. Take it once: `let consumer = ring.consumer`.
    public var consumer: RingConsumer<Element>

    /// Creates a ring holding at least `minimumCapacity` elements (rounded up to a power of two),
    /// all zeroed. Allocates: call it off the process thread, before activating the client.
    /// `resident` (the default, for rings the process thread touches) faults every page in and
    /// locks it in memory now; `false` leaves the pages to be faulted in by first use, for rings
    /// between threads that may wait on a page (the queue thread and the disk writer).
    public init(minimumCapacity: Int, resident: Bool = true) {
        precondition(minimumCapacity > 0 && minimumCapacity <= 1 << 40,
                     "ring capacity must be 1 ... 2^40 elements, got \(minimumCapacity)")
        var capacity = 1
        while capacity < minimumCapacity { capacity <<= 1 }
        let storage = _RingStorage<Element>(capacity: capacity, startIndex: 0, resident: resident)
        producer = RingProducer(storage: storage)
        consumer = RingConsumer(storage: storage)
    }

    /// Creates a ring of exactly `capacity` elements (a power of two) whose indices both start at
    /// `startIndex`, to test every wrap position.
    @_spi(Testing)
    public init(capacity: Int, startIndex: Int) {
        let storage = _RingStorage<Element>(capacity: capacity, startIndex: startIndex)
        producer = RingProducer(storage: storage)
        consumer = RingConsumer(storage: storage)
    }
}

/// The writing end of an ``SPSCRing``. Use it from one thread at a time; it may move between
/// threads (hence `Sendable`), but only one may write.
///
/// - Important: Every method except `deinit` is real-time safe (no allocation, lock or system call).
public struct RingProducer<Element: BitwiseCopyable>: ~Copyable, @unchecked Sendable {
    @usableFromInline let storage: _RingStorage<Element>

    init(storage: _RingStorage<Element>) { self.storage = storage }

    deinit { storage.releaseEnd() }

    /// Elements the ring holds when full, a power of two.
    @inlinable
    public var capacity: Int { storage.capacity }
    /// Whether the ring's elements are locked in memory (`mlock`; refused above the memory-lock limit).
    public var isMemoryLocked: Bool { storage.isLocked }

    /// Elements that can be written now without overwriting unread data.
    @inlinable
    public var writableCount: Int {
        let written = storage.writeIndex.pointee.load(ordering: .relaxed)
        let read = storage.readIndex.pointee.load(ordering: .acquiring)
        return storage.capacity - (written &- read)
    }

    /// The free space, as at most two segments, for writing in place; publish what you wrote
    /// with ``commitWrite(_:)``.
    @inlinable
    public func writableRegions() -> RingRegions<Element> {
        let written = storage.writeIndex.pointee.load(ordering: .relaxed)
        let read = storage.readIndex.pointee.load(ordering: .acquiring)
        return storage.regions(from: written, count: storage.capacity - (written &- read))
    }

    /// Makes the first `count` elements of the writable regions visible to the consumer.
    /// `count` must not exceed what ``writableRegions()`` offered.
    @inlinable
    public func commitWrite(_ count: Int) {
        let written = storage.writeIndex.pointee.load(ordering: .relaxed)
        storage.writeIndex.pointee.store(written &+ count, ordering: .releasing)
    }

    /// Writes all of `source`, or nothing when it does not fit.
    /// - Returns: `true` when written, `false` when the ring had too little space.
    @inlinable
    @discardableResult
    public func writeAll(_ source: UnsafeBufferPointer<Element>) -> Bool {
        let regions = writableRegions()
        guard source.count <= regions.count else { return false }
        regions.copy(from: source)
        commitWrite(source.count)
        return true
    }

    /// Writes as much of `source` as fits.
    /// - Returns: the number of elements written, `0 ... source.count`.
    @inlinable
    public func write(_ source: UnsafeBufferPointer<Element>) -> Int {
        let regions = writableRegions()
        let count = Swift.min(source.count, regions.count)
        regions.copy(from: UnsafeBufferPointer(rebasing: source[0 ..< count]))
        commitWrite(count)
        return count
    }
}

/// The reading end of an ``SPSCRing``. Use it from one thread at a time; it may move between
/// threads (hence `Sendable`), but only one may read.
///
/// - Important: Every method except `deinit` is real-time safe (no allocation, lock or system call).
public struct RingConsumer<Element: BitwiseCopyable>: ~Copyable, @unchecked Sendable {
    @usableFromInline let storage: _RingStorage<Element>

    init(storage: _RingStorage<Element>) { self.storage = storage }

    deinit { storage.releaseEnd() }

    /// Elements the ring holds when full, a power of two.
    @inlinable
    public var capacity: Int { storage.capacity }
    /// Whether the ring's elements are locked in memory (`mlock`; refused above the memory-lock limit).
    public var isMemoryLocked: Bool { storage.isLocked }

    /// Elements written and not yet read.
    @inlinable
    public var readableCount: Int {
        let read = storage.readIndex.pointee.load(ordering: .relaxed)
        let written = storage.writeIndex.pointee.load(ordering: .acquiring)
        return written &- read
    }

    /// The unread elements, as at most two segments, for reading in place; release what you
    /// consumed with ``commitRead(_:)``.
    @inlinable
    public func readableRegions() -> RingRegions<Element> {
        let read = storage.readIndex.pointee.load(ordering: .relaxed)
        let written = storage.writeIndex.pointee.load(ordering: .acquiring)
        return storage.regions(from: read, count: written &- read)
    }

    /// Returns the first `count` readable elements to the producer.
    /// `count` must not exceed what ``readableRegions()`` offered.
    @inlinable
    public func commitRead(_ count: Int) {
        let read = storage.readIndex.pointee.load(ordering: .relaxed)
        storage.readIndex.pointee.store(read &+ count, ordering: .releasing)
    }

    /// Reads as many elements as are available, up to `destination.count`.
    /// - Returns: the number of elements read into the start of `destination`.
    @inlinable
    public func read(into destination: UnsafeMutableBufferPointer<Element>) -> Int {
        let regions = readableRegions()
        let count = Swift.min(destination.count, regions.count)
        regions.copy(into: UnsafeMutableBufferPointer(rebasing: destination[0 ..< count]))
        commitRead(count)
        return count
    }

    /// Reads exactly `destination.count` elements, or nothing when fewer are available.
    /// - Returns: `true` when read.
    @inlinable
    public func readAll(into destination: UnsafeMutableBufferPointer<Element>) -> Bool {
        let regions = readableRegions()
        guard destination.count <= regions.count else { return false }
        regions.copy(into: destination)
        commitRead(destination.count)
        return true
    }
}
