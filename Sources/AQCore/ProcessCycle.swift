/// What the process thread sees of one JACK cycle: the port buffers and the cycle's time.
///
/// Built on the stack by the JACK process thunk each cycle and handed to a
/// ``RealtimeProcessor`` by pointer. Valid only during that call.
@frozen
public struct ProcessCycle {
    /// Frames in this cycle (JACK's `nframes`, the period).
    public let frameCount: Int
    /// The JACK frame time of the first frame of this cycle (`jack_last_frame_time`), 32 bits,
    /// wrapping.
    public let frameTime: UInt32
    /// Microseconds (`jack_get_time` clock) at which this cycle started, and the estimate for
    /// the next one (`jack_get_cycle_times`); `0` when the server could not tell.
    public let cycleStartMicros: UInt64
    public let nextCycleStartMicros: UInt64
    /// One buffer of `frameCount` samples per input port, in port order.
    public let inputs: UnsafeBufferPointer<UnsafePointer<Float>>
    /// One buffer of `frameCount` samples per output port, in port order. A processor must write
    /// every sample of every output each cycle (JACK does not clear them).
    public let outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>
    /// The events of this cycle on each MIDI input port, in port order (none for a client that
    /// bound no MIDI ports).
    public let midiInputs: UnsafeBufferPointer<MIDIEventList>
    /// Per MIDI output port, where the processor puts this cycle's events (in time order); the
    /// driver writes them to the port after the processor returns.
    public let midiOutputs: UnsafeBufferPointer<MIDIOutputList>
    /// Whether JACK's transport rolls during this cycle (`JackTransportRolling`; a transport
    /// state holds for a whole cycle). False when the driver has no transport.
    public let transportRolling: Bool
    /// The transport frame of this cycle's first frame (`jack_position_t.frame`).
    public let transportFrame: UInt32
    /// Bar, beat and tempo at that frame when a timebase master gives them (JACK's BBT), else nil.
    public let transportBeats: TransportBeats?
    /// Asks the driver whether one of this client's ports is connected to a named port in the
    /// graph this cycle runs with; nil for a driver without a graph (offline), where every
    /// connection counts as made. See ``isConnected(input:port:to:)``.
    public let connectionProbe: ConnectionProbe?
    /// The driver's state for ``connectionProbe``.
    public let connectionProbeContext: UnsafeRawPointer?

    @inlinable
    public init(frameCount: Int, frameTime: UInt32, cycleStartMicros: UInt64, nextCycleStartMicros: UInt64,
                inputs: UnsafeBufferPointer<UnsafePointer<Float>>,
                outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                midiInputs: UnsafeBufferPointer<MIDIEventList> = UnsafeBufferPointer(start: nil, count: 0),
                midiOutputs: UnsafeBufferPointer<MIDIOutputList> = UnsafeBufferPointer(start: nil, count: 0),
                transportRolling: Bool = false, transportFrame: UInt32 = 0, transportBeats: TransportBeats? = nil,
                connectionProbe: ConnectionProbe? = nil, connectionProbeContext: UnsafeRawPointer? = nil) {
        self.frameCount = frameCount
        self.frameTime = frameTime
        self.cycleStartMicros = cycleStartMicros
        self.nextCycleStartMicros = nextCycleStartMicros
        self.inputs = inputs
        self.outputs = outputs
        self.midiInputs = midiInputs
        self.midiOutputs = midiOutputs
        self.transportRolling = transportRolling
        self.transportFrame = transportFrame
        self.transportBeats = transportBeats
        self.connectionProbe = connectionProbe
        self.connectionProbeContext = connectionProbeContext
    }

    /// Whether input (`input`) or output port `index` is connected to the port named `peer` (a
    /// NUL-terminated full name) in the graph this cycle runs with; true on a driver without a
    /// graph.
    ///
    /// - Important: Real-time safe: JACK answers from the graph in shared memory, without
    ///   waiting for a pending graph change on the process thread. It looks `peer` up by name
    ///   among the server's port slots (measured here with `--port-max 4096`: 9 µs for the 500th
    ///   port, 24 µs for a name it does not find): call it for one port, only in the cycles that
    ///   need it.
    @inlinable
    public func isConnected(input: Bool, port index: Int, to peer: UnsafePointer<CChar>) -> Bool {
        guard let connectionProbe else { return true }
        // A C function the performance annotations cannot see into: the driver's, real-time safe
        // by this type's contract (JACK's is described at jackConnectionProbe).
        return _unsafePerformance { connectionProbe(connectionProbeContext, input, index, peer) }
    }
}

/// A driver's answer to ``ProcessCycle/isConnected(input:port:to:)``: its state, whether the
/// port is an input, its index and the peer's full name. Called on the process thread; must be
/// real-time safe.
public typealias ConnectionProbe = @convention(c) (
    _ context: UnsafeRawPointer?, _ input: Bool, _ port: Int, _ peer: UnsafePointer<CChar>
) -> Bool

/// One MIDI event of a cycle: its frame within the cycle and its bytes (JACK's buffer, valid
/// only during the cycle).
@frozen
public struct MIDIEvent {
    public var frame: UInt32
    public var size: UInt32
    public var bytes: UnsafePointer<UInt8>?

    @inlinable
    public init(frame: UInt32, size: UInt32, bytes: UnsafePointer<UInt8>?) {
        self.frame = frame
        self.size = size
        self.bytes = bytes
    }
}

/// A MIDI port's events of one cycle, in time order.
@frozen
public struct MIDIEventList {
    public var events: UnsafePointer<MIDIEvent>?
    public var count: Int

    @inlinable
    public init(events: UnsafePointer<MIDIEvent>?, count: Int) {
        self.events = events
        self.count = count
    }
}

/// The entry point a driver calls once per cycle on the process thread: the processor object
/// (unretained) and a pointer to the cycle's ``ProcessCycle`` (raw, because a C function type
/// cannot name a Swift struct).
///
/// A C function pointer rather than a protocol call, so that the driver's thunk reaches the
/// processor without an existential, a generic or a reference count.
public typealias RealtimeEntry = @convention(c) (
    _ processor: UnsafeMutableRawPointer, _ cycle: UnsafeRawPointer
) -> Void

/// An object whose `process` runs on the process thread.
///
/// Conformers are final classes whose cycle function is annotated `@_noLocks`, so the compiler
/// rejects allocation, locks and reference counting in it, and expose it as a ``RealtimeEntry``:
///
/// ```swift
/// public static let realtimeEntry: RealtimeEntry = { processor, cycle in
///     Unmanaged<Self>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
/// }
/// ```
/// The driver keeps the processor alive from before activation until after deactivation.
public protocol RealtimeProcessor: AnyObject, Sendable {
    /// This type's cycle function. Read once, off the process thread, when the driver is set up.
    static var realtimeEntry: RealtimeEntry { get }
}

/// A MIDI output port's events for one cycle: room for `capacity` events, `count` of them set
/// by the processor (starting at 0 each cycle). The bytes an event points at must stay valid
/// until the processor returns.
@frozen
public struct MIDIOutputList {
    public var events: UnsafeMutablePointer<MIDIEvent>
    public var capacity: Int
    public var count: UnsafeMutablePointer<Int>

    @inlinable
    public init(events: UnsafeMutablePointer<MIDIEvent>, capacity: Int, count: UnsafeMutablePointer<Int>) {
        self.events = events
        self.capacity = capacity
        self.count = count
    }
}

/// The slow-sync entry point a driver calls on the process thread, before a cycle, while JACK's
/// transport is starting or has been relocated: the processor (unretained), whether the
/// transport is starting, and the transport frame it will roll from. Returns whether the
/// processor is ready to roll from there (JACK holds the transport in `Starting` until every
/// slow-sync client is, or its sync timeout passes).
public typealias TransportSyncEntry = @convention(c) (
    _ processor: UnsafeMutableRawPointer, _ starting: Bool, _ position: UInt32
) -> Bool

/// A ``RealtimeProcessor`` that takes part in JACK's transport as a slow-sync client.
public protocol TransportSyncing: RealtimeProcessor {
    /// This type's sync function (see ``TransportSyncEntry``). Real-time safe.
    static var syncEntry: TransportSyncEntry { get }
}

/// Where a transport is in bars and beats, as a timebase master gives it (JACK's BBT fields of
/// `jack_position_t`): bar and beat counted from 1, the tick within the beat, the meter and tempo.
@frozen
public struct TransportBeats: Sendable, Equatable {
    public var bar: Int32
    public var beat: Int32
    public var tick: Int32
    public var ticksPerBeat: Double
    public var beatsPerBar: Float
    public var beatType: Float
    public var beatsPerMinute: Double

    @inlinable
    public init(bar: Int32, beat: Int32, tick: Int32, ticksPerBeat: Double, beatsPerBar: Float, beatType: Float, beatsPerMinute: Double) {
        self.bar = bar
        self.beat = beat
        self.tick = tick
        self.ticksPerBeat = ticksPerBeat
        self.beatsPerBar = beatsPerBar
        self.beatType = beatType
        self.beatsPerMinute = beatsPerMinute
    }

    /// The beats and ticks of transport frame `frame` at `sampleRate` Hz for a steady tempo from
    /// frame 0 (what a simple timebase master computes; 1920 ticks a beat).
    public static func at(frame: UInt32, sampleRate: Int, beatsPerMinute: Double, beatsPerBar: Float, beatType: Float) -> TransportBeats {
        let beats = Double(frame) * beatsPerMinute / 60 / Double(sampleRate)
        let whole = beats.rounded(.down)
        let perBar = Double(beatsPerBar)
        return TransportBeats(bar: Int32((whole / perBar).rounded(.down)) + 1, beat: Int32(whole.truncatingRemainder(dividingBy: perBar)) + 1,
                              tick: Int32(((beats - whole) * 1920).rounded(.down)), ticksPerBeat: 1920, beatsPerBar: beatsPerBar,
                              beatType: beatType, beatsPerMinute: beatsPerMinute)
    }
}
