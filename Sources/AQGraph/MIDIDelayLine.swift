import AQCore

/// MIDI events held back a number of frames: what plugin delay compensation does to a MIDI
/// connection (``GraphPlan``'s MIDI feeds). Each cycle's events go in with the frame they are
/// due at (the cycle's first frame on the line's clock + their frame + the delay), their bytes
/// copied (a source's events are valid for one cycle only); those due within the cycle come out
/// at their frames. Events leave in the order they came in: a delay that shrinks (a node's
/// bypass turned off) holds the next events until the earlier ones are out rather than reorder
/// them. An event for which there is no room (``eventCapacity`` events or ``byteCapacity``
/// bytes waiting) is dropped and counted.
///
/// Threads: made and freed off the process thread; ``pass(_:count:delay:cycleStart:frames:)`` on
/// the process thread, real-time safe (memory allocated at init).
struct MIDIDelayLine {
    static let eventCapacity = 1024
    static let byteCapacity = 16 * 1024

    /// An event waiting: due at `due` on the line's clock, its bytes at `offset` in `bytes`.
    private struct Waiting {
        var due: Int64
        var offset: Int
        var size: Int
    }

    private let waiting: UnsafeMutablePointer<Waiting>
    private var first = 0
    private var count = 0
    /// The events' bytes: a ring written at `write`, the oldest waiting event's at `read`.
    private let bytes: UnsafeMutablePointer<UInt8>
    private var read = 0
    private var write = 0
    /// The latest due frame given: no event is due before it.
    private var lastDue = Int64.min
    /// The events due in the latest cycle, their bytes in `bytes` (valid until the next pass).
    private let out: UnsafeMutablePointer<MIDIEvent>

    init() {
        waiting = .allocate(capacity: Self.eventCapacity)
        bytes = .allocate(capacity: Self.byteCapacity)
        bytes.initialize(repeating: 0, count: Self.byteCapacity)
        out = .allocate(capacity: Self.eventCapacity)
    }

    /// Frees the memory. Off the process thread, once.
    func free() {
        waiting.deallocate()
        bytes.deallocate()
        out.deallocate()
    }

    /// Puts `count` events of a cycle of `frames` starting at `cycleStart` (frames within it) in,
    /// `delay` frames late, and returns the events due in the cycle (frames within it, in order)
    /// and how many were dropped for want of room.
    @inline(__always)
    mutating func pass(_ events: UnsafePointer<MIDIEvent>?, count incoming: Int, delay: Int, cycleStart: Int64,
                       frames: Int) -> (events: UnsafePointer<MIDIEvent>, count: Int, dropped: Int) {
        var dropped = 0
        if let events {
            for index in 0 ..< incoming {
                let event = events[index]
                let size = Int(event.size)
                guard let source = event.bytes, size > 0, let offset = room(for: size) else {
                    dropped += 1
                    continue
                }
                for byte in 0 ..< size { bytes[offset + byte] = source[byte] }
                write = offset + size
                lastDue = max(lastDue, cycleStart + Int64(event.frame) + Int64(delay))
                waiting[(first + count) % Self.eventCapacity] = Waiting(due: lastDue, offset: offset, size: size)
                count += 1
            }
        }
        let end = cycleStart + Int64(frames)
        var due = 0
        while count > 0, due < Self.eventCapacity, waiting[first].due < end {
            let event = waiting[first]
            out[due] = MIDIEvent(frame: UInt32(max(0, event.due - cycleStart)), size: UInt32(event.size), bytes: UnsafePointer(bytes + event.offset))
            due += 1
            first = (first + 1) % Self.eventCapacity
            count -= 1
            read = count > 0 ? waiting[first].offset : write
        }
        return (UnsafePointer(out), due, dropped)
    }

    /// Where `size` bytes fit without touching a waiting event's, or nil (nor when
    /// ``eventCapacity`` events wait).
    @inline(__always)
    private mutating func room(for size: Int) -> Int? {
        guard count < Self.eventCapacity, size <= Self.byteCapacity else { return nil }
        if count == 0 {
            // Nothing waits: the ring starts over (bytes handed out last cycle are not read again).
            read = 0
            write = 0
            return 0
        }
        if write >= read {
            if Self.byteCapacity - write >= size { return write }
            return size < read ? 0 : nil
        }
        // Strictly less: `write` never reaches `read` while events wait.
        return read - write > size ? write : nil
    }
}
