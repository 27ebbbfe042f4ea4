import AQCore
import AQJack
import Synchronization

/// A JACK client with one MIDI output port, `midi_out`, that plays 3-byte MIDI messages at given
/// JACK frames: notes (note-on, velocity 100, at each start frame, note-off `lengthFrames` later,
/// channel 1), or any messages (control changes). For testing that a synth hosted on the graph
/// sounds at the notes' frames, and that a mapped controller moves a control.
public final class MIDINoteClient {
    public let client: JackClient
    public let port: JackPort
    public let processor: MIDINoteProcessor

    public convenience init(name: String, notes: [(frame: UInt64, note: UInt8)], lengthFrames: UInt64) throws(JackError) {
        let messages = notes.flatMap { [($0.frame, [0x90, $0.note, 100] as [UInt8]), ($0.frame + lengthFrames, [0x80, $0.note, 0])] }
        try self.init(name: name, messages: messages)
    }

    /// Plays each message (3 bytes) at its JACK frame.
    public init(name: String, messages: [(frame: UInt64, bytes: [UInt8])]) throws(JackError) {
        processor = MIDINoteProcessor(messages: messages)
        client = try JackClient(name: name, exactName: true)
        port = try client.registerPort("midi_out", direction: .output, isMIDI: true)
        try client.activate(processor: processor, midiOutputs: [port])
    }

    public var portName: String { port.name }

    deinit { client.close() }
}

/// The client's process side: each cycle, the messages that fall in it.
public final class MIDINoteProcessor: RealtimeProcessor, @unchecked Sendable {
    /// Per message: absolute frame and its 3 bytes (status and two data bytes).
    private let frames: UnsafeMutableBufferPointer<UInt64>
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    /// Messages written so far. Any thread.
    public let sentCount = Atomic<Int>(0)

    init(messages unsorted: [(frame: UInt64, bytes: [UInt8])]) {
        precondition(unsorted.allSatisfy { $0.bytes.count == 3 }, "MIDINoteClient plays 3-byte messages")
        let messages = unsorted.sorted { $0.frame < $1.frame }
        frames = .allocate(capacity: max(messages.count, 1))
        bytes = .allocate(capacity: max(messages.count, 1) * 3)
        for (index, message) in messages.enumerated() {
            frames[index] = message.0
            for offset in 0 ..< 3 { bytes[index * 3 + offset] = message.1[offset] }
        }
        count = messages.count
    }

    private let count: Int

    deinit {
        frames.deallocate()
        bytes.deallocate()
    }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<MIDINoteProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    func process(_ cycle: ProcessCycle) {
        guard cycle.midiOutputs.count > 0 else { return }
        let output = cycle.midiOutputs[0]
        // The test servers' frame times stay far below 2^32.
        let start = UInt64(cycle.frameTime)
        let end = start + UInt64(cycle.frameCount)
        let frames = self.frames, bytes = self.bytes.baseAddress!
        var written = 0
        // (Nested conditions, not `&&`: its autoclosure would retain self.)
        for index in 0 ..< count {
            let frame = frames[index]
            if frame >= start, frame < end, written < output.capacity {
                output.events[written] = MIDIEvent(frame: UInt32(frame - start), size: 3, bytes: UnsafePointer(bytes + index * 3))
                written += 1
            }
        }
        output.count.pointee = written
        if written > 0 { sentCount.store(sentCount.load(ordering: .relaxed) &+ written, ordering: .relaxed) }
    }
}
