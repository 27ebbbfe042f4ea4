import Glibc
import Synchronization

/// The memory one ring owns: two free-running indices, a count of live ends, and the elements.
///
/// A plain struct of raw pointers, so that copying it costs no reference counting: the ends hold it
/// by value, and the process thread never touches a Swift reference count through a ring.
/// The read index, the write index and the live-end count each sit on their own cache line, so the
/// producer and the consumer do not invalidate each other's line on every store.
///
/// Freed by whichever ring end is destroyed last (see ``releaseEnd()``).
@usableFromInline
@frozen
struct _RingStorage<Element: BitwiseCopyable> {
    /// Bytes between two atomics in the header: one cache line on x86-64 and most arm64 parts.
    @usableFromInline static var headerStride: Int { 128 }

    @usableFromInline let header: UnsafeMutableRawPointer
    @usableFromInline let elements: UnsafeMutablePointer<Element>
    /// Element count, a power of two.
    @usableFromInline let capacity: Int
    /// Whether the elements are locked in memory (`mlock`), so the process thread never waits
    /// on a page the system moved out. False when the memory-lock limit refused them.
    @usableFromInline let isLocked: Bool

    /// Allocates a ring of exactly `capacity` elements (a power of two), with both indices at
    /// `startIndex` and every element zero. With `resident` (for a ring the process thread
    /// uses) its pages are present before real-time use and locked in memory where the limit
    /// allows (``isLocked``); without, they are faulted in by first use (rings between
    /// non-real-time threads, where a start should not wait for hundreds of MiB to be touched).
    @usableFromInline
    init(capacity: Int, startIndex: Int, resident: Bool = true) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0,
                     "ring capacity must be a power of two, got \(capacity)")
        header = UnsafeMutableRawPointer.allocate(byteCount: 3 * Self.headerStride, alignment: Self.headerStride)
        header.bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(startIndex))
        (header + Self.headerStride).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(startIndex))
        (header + 2 * Self.headerStride).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(2))
        // An anonymous mapping: the kernel hands out zeroed pages, and mlock faults every one in
        // (so no memset is needed, which at 1024 channels was 256 MiB written twice). Where the
        // lock is refused, one write a page touches them instead.
        let byteCount = capacity * MemoryLayout<Element>.stride
        guard let mapping = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapping != MAP_FAILED else {
            fatalError("cannot map \(byteCount) bytes for a ring: \(String(cString: strerror(errno)))")
        }
        elements = mapping.bindMemory(to: Element.self, capacity: capacity)
        isLocked = resident && mlock(mapping, byteCount) == 0
        if resident && !isLocked {
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            for offset in stride(from: 0, to: byteCount, by: page) { mapping.storeBytes(of: 0, toByteOffset: offset, as: UInt8.self) }
        }
        self.capacity = capacity
    }

    /// Total elements read so far (free-running, wraps only after 2^63). Stored by the consumer.
    @usableFromInline
    var readIndex: UnsafeMutablePointer<Atomic<Int>> {
        header.assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// Total elements written so far (free-running). Stored by the producer.
    @usableFromInline
    var writeIndex: UnsafeMutablePointer<Atomic<Int>> {
        (header + Self.headerStride).assumingMemoryBound(to: Atomic<Int>.self)
    }

    @usableFromInline
    var liveEnds: UnsafeMutablePointer<Atomic<Int>> {
        (header + 2 * Self.headerStride).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// The two segments of `count` elements that start at free-running index `index`.
    @inlinable
    func regions(from index: Int, count: Int) -> RingRegions<Element> {
        let start = index & (capacity - 1)
        let firstCount = Swift.min(count, capacity - start)
        return RingRegions(
            first: UnsafeMutableBufferPointer(start: elements + start, count: firstCount),
            second: UnsafeMutableBufferPointer(start: elements, count: count - firstCount))
    }

    /// Called once by each end as it is destroyed; the second call frees the memory.
    /// Not real-time safe (it may free): destroy ring ends off the process thread.
    @usableFromInline
    func releaseEnd() {
        if liveEnds.pointee.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            readIndex.deinitialize(count: 1)
            writeIndex.deinitialize(count: 1)
            liveEnds.deinitialize(count: 1)
            header.deallocate()
            munmap(elements, capacity * MemoryLayout<Element>.stride)
        }
    }
}

/// Whether a ring's memory can be had, asked before making it: the rings map their memory in
/// their initializers, which cannot fail, so the queues ask first and turn a refusal into an
/// error with the system's reason instead of a trap. Not real-time.
public enum RingMemory {
    /// The bytes of a ring of at least `minimumElements` elements of `stride` bytes (rings round
    /// their capacity up to a power of two).
    public static func bytes(minimumElements: Int, stride: Int) -> Int {
        var capacity = 1
        while capacity < minimumElements { capacity <<= 1 }
        return capacity * stride
    }

    /// Nil when `byteCount` bytes can be mapped now (tried, then unmapped), else why not.
    public static func problem(mapping byteCount: Int) -> String? {
        guard let mapping = mmap(nil, byteCount, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0), mapping != MAP_FAILED else {
            return "cannot map \(byteCount >> 20) MiB (\(String(cString: strerror(errno))))"
        }
        munmap(mapping, byteCount)
        return nil
    }
}
