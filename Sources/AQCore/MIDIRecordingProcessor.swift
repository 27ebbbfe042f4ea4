import Synchronization

/// The process side of recording JACK MIDI (`aqjack record -m`): each cycle, every event of each
/// MIDI input port goes to a ``MessageRing`` as one message, port (16-bit), absolute JACK frame
/// (32-bit, the cycle's frame time plus the event's offset) and the event's bytes, all
/// little-endian; a reader thread takes them off (``read(into:)``). An event that finds no room
/// (the reader more than the ring behind) or is longer than ``longestEvent`` is counted
/// (``droppedEvents``), never waited for.
///
/// Threads: ``realtimeEntry`` on the process thread only (no allocation, lock or system call);
/// ``read(into:)`` on one reader thread.
public final class MIDIRecordingProcessor: RealtimeProcessor, @unchecked Sendable {
    /// The longest event kept, bytes (a SysEx longer than this is dropped and counted).
    public static let longestEvent = 4096
    /// Bytes before an event's own: port 2, frame 4.
    public static let headerBytes = 6

    private let writer: MessageWriter
    private let reader: MessageReader
    /// One message being put together on the process thread.
    private let scratch: UnsafeMutableRawPointer
    /// Events that found no room, or were too long. Any thread.
    public let droppedEvents = Atomic<Int>(0)

    /// - Parameter ringBytes: room for the events the reader has not taken yet (at least).
    public init(ringBytes: Int = 1 << 20) {
        let ring = MessageRing(minimumBytes: ringBytes)
        writer = ring.writer
        reader = ring.reader
        scratch = .allocate(byteCount: Self.headerBytes + Self.longestEvent, alignment: 16)
    }

    deinit { scratch.deallocate() }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<MIDIRecordingProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    func process(_ cycle: ProcessCycle) {
        let scratch = self.scratch
        for port in 0 ..< cycle.midiInputs.count {
            let list = cycle.midiInputs[port]
            guard let events = list.events else { continue }
            for index in 0 ..< list.count {
                let event = events[index]
                let size = Int(event.size)
                guard size <= Self.longestEvent, let bytes = event.bytes else {
                    droppedEvents.add(1, ordering: .relaxed)
                    continue
                }
                let frame = cycle.frameTime &+ event.frame
                scratch.storeBytes(of: UInt16(truncatingIfNeeded: port).littleEndian, toByteOffset: 0, as: UInt16.self)
                scratch.storeBytes(of: frame.littleEndian, toByteOffset: 2, as: UInt32.self)
                (scratch + Self.headerBytes).copyMemory(from: bytes, byteCount: size)
                if !writer.write(UnsafeRawBufferPointer(start: scratch, count: Self.headerBytes + size)) {
                    droppedEvents.add(1, ordering: .relaxed)
                }
            }
        }
    }

    /// Takes the next event, if one is waiting: its port, JACK frame (32-bit) and bytes (in
    /// `buffer`, which must hold ``longestEvent`` bytes and more: ``readBufferBytes``).
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> (port: Int, frame: UInt32, bytes: UnsafeRawBufferPointer)? {
        guard let length = reader.read(into: buffer), length >= Self.headerBytes, let base = buffer.baseAddress else { return nil }
        let port = Int(UInt16(littleEndian: base.loadUnaligned(as: UInt16.self)))
        let frame = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 2, as: UInt32.self))
        return (port, frame, UnsafeRawBufferPointer(start: base + Self.headerBytes, count: length - Self.headerBytes))
    }

    /// Bytes of a buffer that takes any message (``read(into:)``).
    public var readBufferBytes: Int { reader.capacity }
}
