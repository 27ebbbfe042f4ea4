import AQCore
import AQJack
import Synchronization

/// A JACK client with one MIDI input port, `midi_in`, that keeps every event it receives (up to
/// 4,096, 3 bytes each: longer ones are cut, shorter ones padded with zeros) with its absolute
/// JACK frame. For testing that a hosted plugin's MIDI output leaves at the right frames.
public final class MIDICaptureClient {
    public let client: JackClient
    public let port: JackPort
    public let processor: MIDICaptureProcessor

    public init(name: String) throws(JackError) {
        processor = MIDICaptureProcessor(capacity: 4096)
        client = try JackClient(name: name, exactName: true)
        port = try client.registerPort("midi_in", direction: .input, isMIDI: true)
        try client.activate(processor: processor, midiInputs: [port])
    }

    public var portName: String { port.name }

    /// The events received so far: absolute frame and bytes.
    public var events: [(frame: UInt64, bytes: [UInt8])] { processor.events }

    deinit { client.close() }
}

/// The client's process side: appends each cycle's events to preallocated storage.
public final class MIDICaptureProcessor: RealtimeProcessor, @unchecked Sendable {
    private let frames: UnsafeMutableBufferPointer<UInt64>
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    /// Events stored; written by the process thread, read by any.
    private let stored = Atomic<Int>(0)

    init(capacity: Int) {
        frames = .allocate(capacity: capacity)
        bytes = .allocate(capacity: capacity * 3)
    }

    deinit {
        frames.deallocate()
        bytes.deallocate()
    }

    var events: [(frame: UInt64, bytes: [UInt8])] {
        let count = stored.load(ordering: .acquiring)
        return (0 ..< count).map { (frames[$0], Array(bytes[$0 * 3 ..< $0 * 3 + 3])) }
    }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<MIDICaptureProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    func process(_ cycle: ProcessCycle) {
        guard cycle.midiInputs.count > 0, let events = cycle.midiInputs[0].events else { return }
        let frames = self.frames, bytes = self.bytes
        var count = stored.load(ordering: .relaxed)
        for slot in 0 ..< cycle.midiInputs[0].count {
            if count < frames.count {
                let event = events[slot]
                frames[count] = UInt64(cycle.frameTime) + UInt64(event.frame)
                for offset in 0 ..< 3 { bytes[count * 3 + offset] = offset < Int(event.size) ? event.bytes?[offset] ?? 0 : 0 }
                count += 1
            }
        }
        stored.store(count, ordering: .releasing)
    }
}
