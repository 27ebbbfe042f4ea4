import Synchronization

/// The process side of playing a MIDI sequence to a JACK MIDI output (`aqjack play FILE.mid`):
/// events at frame offsets from a start frame, each written in the cycle holding its frame at
/// its offset in that cycle (frame exact). Events whose frame has passed when their cycle runs
/// (cycles the server skipped, or more events in a cycle than the port takes) go out at the next
/// cycle's first frame and are counted late (``lateEvents``), never dropped. Notes sounding are
/// tracked, so that ``stop()`` turns them off (a note-off each) before the player goes quiet.
///
/// Threads: ``realtimeEntry`` on the process thread only (no allocation, lock or system call:
/// the events, their bytes and the note-off table are allocated at init); ``start(atFrame:)``,
/// ``stop()`` and the counters from any thread.
public final class MIDISequenceProcessor: RealtimeProcessor, @unchecked Sendable {
    /// Per event: its frame offset from the start, where its bytes begin and how many.
    private let offsets: UnsafeMutableBufferPointer<UInt64>
    private let starts: UnsafeMutableBufferPointer<Int>
    private let sizes: UnsafeMutableBufferPointer<Int>
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    private let count: Int
    /// Note-off messages for every channel and key (3 bytes each), and which are sounding.
    private let noteOffs: UnsafeMutableBufferPointer<UInt8>
    private let sounding: UnsafeMutableBufferPointer<Bool>
    /// The JACK frame (32-bit) of offset 0, once ``start(atFrame:)`` is called (bit 32 set).
    private let startRequest = Atomic<UInt64>(0)
    private let stopRequest = Atomic<Bool>(false)
    /// Process-thread state: the next event, the frames from the start to this cycle's first,
    /// the previous cycle's frame time.
    private var next = 0
    private var elapsed: Int64 = 0
    private var previousFrameTime: UInt32 = 0
    private var running = false
    /// Events written, and of them those written after their frame. Any thread.
    public let sentEvents = Atomic<Int>(0)
    public let lateEvents = Atomic<Int>(0)
    /// Set once every event is out (or, after ``stop()``, every sounding note is off).
    public let isDone = Atomic<Bool>(false)
    /// Frames from the start to the current cycle's first (0 before the start). Any thread.
    public let position = Atomic<Int64>(0)

    /// - Parameter events: frame offsets from the start (in order) and bytes as on the wire.
    public init(events: [(offset: UInt64, bytes: [UInt8])]) {
        count = events.count
        offsets = .allocate(capacity: max(1, count))
        starts = .allocate(capacity: max(1, count))
        sizes = .allocate(capacity: max(1, count))
        let total = events.reduce(0) { $0 + $1.bytes.count }
        bytes = .allocate(capacity: max(1, total))
        var at = 0
        for (index, event) in events.enumerated() {
            offsets[index] = event.offset
            starts[index] = at
            sizes[index] = event.bytes.count
            for byte in event.bytes {
                bytes[at] = byte
                at += 1
            }
        }
        noteOffs = .allocate(capacity: 16 * 128 * 3)
        for channel in 0 ..< 16 {
            for key in 0 ..< 128 {
                let at = (channel * 128 + key) * 3
                noteOffs[at] = 0x80 | UInt8(channel)
                noteOffs[at + 1] = UInt8(key)
                noteOffs[at + 2] = 0
            }
        }
        sounding = .allocate(capacity: 16 * 128)
        sounding.initialize(repeating: false)
    }

    deinit {
        offsets.deallocate()
        starts.deallocate()
        sizes.deallocate()
        bytes.deallocate()
        noteOffs.deallocate()
        sounding.deallocate()
    }

    /// Offset 0 is JACK frame `frame` (the cycle holding it plays the first events).
    public func start(atFrame frame: UInt32) { startRequest.store(1 << 32 | UInt64(frame), ordering: .releasing) }

    /// Ends playing: the notes sounding are turned off at the next cycle, then ``isDone``.
    public func stop() { stopRequest.store(true, ordering: .releasing) }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<MIDISequenceProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    func process(_ cycle: ProcessCycle) {
        guard cycle.midiOutputs.count > 0 else { return }
        let output = cycle.midiOutputs[0]
        output.count.pointee = 0
        if !running {
            let request = startRequest.load(ordering: .acquiring)
            guard request >> 32 != 0 else { return }
            // Signed: a start frame already past plays its events late, one in the future waits.
            elapsed = Int64(Int32(bitPattern: cycle.frameTime &- UInt32(truncatingIfNeeded: request)))
            running = true
        } else {
            elapsed += Int64(cycle.frameTime &- previousFrameTime)
        }
        previousFrameTime = cycle.frameTime
        position.store(max(0, elapsed), ordering: .relaxed)
        if isDone.load(ordering: .relaxed) { return }
        var written = 0
        if stopRequest.load(ordering: .acquiring) {
            // Every sounding note off, as many as the port takes this cycle.
            let base = UnsafePointer(noteOffs.baseAddress!)
            for index in 0 ..< 16 * 128 {
                if sounding[index], written < output.capacity {
                    output.events[written] = MIDIEvent(frame: 0, size: 3, bytes: base + index * 3)
                    written += 1
                    sounding[index] = false
                }
            }
            output.count.pointee = written
            if written < output.capacity { isDone.store(true, ordering: .releasing) }
            return
        }
        guard elapsed + Int64(cycle.frameCount) > 0 else { return }
        let end = UInt64(elapsed + Int64(cycle.frameCount))
        let base = UnsafePointer(bytes.baseAddress!)
        var late = 0
        while next < count, offsets[next] < end, written < output.capacity {
            let offset = Int64(offsets[next]) - elapsed
            let size = sizes[next], at = starts[next]
            output.events[written] = MIDIEvent(frame: UInt32(max(0, offset)), size: UInt32(size), bytes: base + at)
            if offset < 0 { late += 1 }
            track(base + at, size: size)
            written += 1
            next += 1
        }
        output.count.pointee = written
        if written > 0 { sentEvents.add(written, ordering: .relaxed) }
        if late > 0 { lateEvents.add(late, ordering: .relaxed) }
        if next == count { isDone.store(true, ordering: .releasing) }
    }

    /// Notes on and off, for ``stop()``.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    private func track(_ message: UnsafePointer<UInt8>, size: Int) {
        guard size >= 3 else { return }
        let kind = message[0] & 0xF0
        guard kind == 0x80 || kind == 0x90 else { return }
        let index = Int(message[0] & 0x0F) * 128 + Int(message[1] & 0x7F)
        sounding[index] = kind == 0x90 && message[2] > 0
    }
}
