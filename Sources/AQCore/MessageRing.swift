/// Messages of bytes from one thread to another, each whole or not at all: an ``SPSCRing`` of
/// bytes holding every message as its length (a 32-bit little-endian count) and its bytes, the
/// length published with them. The LV2 worker's requests and responses go through two of them.
///
/// ```swift
/// let ring = MessageRing(minimumBytes: 65536)
/// let writer = ring.writer    // the thread that sends (the process thread)
/// let reader = ring.reader    // the thread that receives
/// ```
@frozen
public struct MessageRing: ~Copyable {
    /// The sending end. Take it once.
    public var writer: MessageWriter
    /// The receiving end. Take it once.
    public var reader: MessageReader

    /// A ring of at least `minimumBytes` bytes (a power of two), faulted in and locked in memory
    /// as the process thread's rings are (jalv locks its worker's rings too). Allocates.
    public init(minimumBytes: Int) {
        let ring = SPSCRing<UInt8>(minimumCapacity: minimumBytes)
        writer = MessageWriter(ring: ring.producer)
        reader = MessageReader(ring: ring.consumer)
    }

    /// Bytes of a message's length in the ring.
    @usableFromInline static let lengthBytes = 4
}

/// The sending end of a ``MessageRing``. One thread writes at a time.
public struct MessageWriter: ~Copyable, @unchecked Sendable {
    @usableFromInline let ring: RingProducer<UInt8>

    init(ring: consuming RingProducer<UInt8>) { self.ring = ring }

    /// The ring's size in bytes: a message takes its length and 4 more.
    public var capacity: Int { ring.capacity }

    /// Sends `bytes` as one message, or nothing when the ring lacks room for it.
    /// - Returns: whether it was sent.
    /// - Important: Real-time safe: no allocation, lock or system call.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    @inlinable
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let regions = ring.writableRegions()
        let total = MessageRing.lengthBytes + bytes.count
        guard bytes.count <= Int(UInt32.max), total <= regions.count else { return false }
        let length = UInt32(bytes.count).littleEndian
        regions[0] = UInt8(truncatingIfNeeded: length)
        regions[1] = UInt8(truncatingIfNeeded: length >> 8)
        regions[2] = UInt8(truncatingIfNeeded: length >> 16)
        regions[3] = UInt8(truncatingIfNeeded: length >> 24)
        regions.copy(from: bytes.assumingMemoryBound(to: UInt8.self), at: MessageRing.lengthBytes)
        ring.commitWrite(total)
        return true
    }
}

/// The receiving end of a ``MessageRing``. One thread reads at a time.
public struct MessageReader: ~Copyable, @unchecked Sendable {
    @usableFromInline let ring: RingConsumer<UInt8>

    init(ring: consuming RingConsumer<UInt8>) { self.ring = ring }

    /// The ring's size in bytes: no message is longer than this less 4.
    public var capacity: Int { ring.capacity }

    /// Takes the next message into the start of `destination` (which must hold it: a buffer of
    /// ``capacity`` bytes holds any) and returns its length; nil when no message is waiting.
    /// - Important: Real-time safe: no allocation, lock or system call.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    @inlinable
    public func read(into destination: UnsafeMutableRawBufferPointer) -> Int? {
        let regions = ring.readableRegions()
        guard regions.count >= MessageRing.lengthBytes else { return nil }
        let length = Int(UInt32(regions[0]) | UInt32(regions[1]) << 8 | UInt32(regions[2]) << 16 | UInt32(regions[3]) << 24)
        precondition(length <= destination.count && MessageRing.lengthBytes + length <= regions.count,
                     "a message longer than the buffer given for it, or not all in the ring")
        regions.copy(into: UnsafeMutableRawBufferPointer(rebasing: destination[0 ..< length]).assumingMemoryBound(to: UInt8.self),
                     at: MessageRing.lengthBytes)
        ring.commitRead(MessageRing.lengthBytes + length)
        return length
    }
}
