import Synchronization

/// A plugin run in the JACK process callback, the way `aqjack host` hosts an LV2 plugin: each
/// cycle it takes the control changes queued by other threads, connects the plugin's audio
/// ports straight to the JACK port buffers, writes the transport's position (when it changed;
/// ``TransportPositionTeller``) and the cycle's MIDI events into the plugin's event inputs (LV2
/// atom sequences), readies its event outputs, and runs it; then passes the MIDI events the plugin
/// wrote to its MIDI outputs on to the cycle's MIDI outputs, at their frames.
///
/// The plugin is reached through the two C functions of its descriptor (`connect_port`, `run`)
/// and memory set up before activation (``PluginHostPorts``), so this module needs no plugin
/// library. LV2 requires `connect_port` and `run` of a real-time plugin to be real-time safe;
/// what any plugin does inside them is its own.
///
/// - Important: ``process(_:)`` is real-time safe: no allocation, lock or system call of its own.
public final class PluginHostProcessor: RealtimeProcessor, @unchecked Sendable {
    /// LV2's `connect_port(instance, port, data)` and `run(instance, sample_count)`.
    public typealias ConnectFunction = @convention(c) (UnsafeMutableRawPointer?, UInt32, UnsafeMutableRawPointer?) -> Void
    public typealias RunFunction = @convention(c) (UnsafeMutableRawPointer?, UInt32) -> Void

    private let ports: PluginHostPorts
    /// Retained here (released in deinit), unmanaged so the process thread reaches it without
    /// reference counting.
    private let changes: Unmanaged<ControlChangeQueue>
    /// Cycles run, and MIDI events that did not fit: the plugin's event input, or a cycle's MIDI
    /// output. Any thread.
    public let cycleCount = Atomic<Int>(0)
    public let droppedMIDIEvents = Atomic<Int>(0)
    /// Per MIDI output: the bytes of the events passed on in the current cycle (the driver writes
    /// them after the cycle; the plugin's buffer is emptied at its next run), and how many bytes
    /// of them are used. ``PluginHostPorts/sequenceCapacity`` bytes each. Process thread only.
    private let midiOutputBytes: UnsafeMutablePointer<UInt8>
    private let midiOutputUsed: UnsafeMutablePointer<Int>
    /// Process thread only.
    private var position = TransportPositionTeller()

    /// Makes the processor and the control queue that feeds it (room for `controlQueueCapacity`
    /// changes between two cycles).
    public static func make(ports: PluginHostPorts, controlQueueCapacity: Int = 1024) -> (PluginHostProcessor, PluginHostControls) {
        let queue = ControlChangeQueue(capacity: controlQueueCapacity)
        return (PluginHostProcessor(ports: ports, changes: queue), PluginHostControls(changes: queue))
    }

    private init(ports: PluginHostPorts, changes: ControlChangeQueue) {
        self.ports = ports
        self.changes = .passRetained(changes)
        midiOutputBytes = .allocate(capacity: max(1, ports.midiOutputs.count * ports.sequenceCapacity))
        midiOutputUsed = .allocate(capacity: max(1, ports.midiOutputs.count))
        midiOutputUsed.initialize(repeating: 0, count: max(1, ports.midiOutputs.count))
    }

    deinit {
        changes.release()
        midiOutputBytes.deallocate()
        midiOutputUsed.deallocate()
    }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<PluginHostProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    /// Runs the plugin over one cycle, in pieces of at most the plugin's maximum block.
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func process(_ cycle: ProcessCycle) {
        let ports = self.ports
        _ = changes._withUnsafeGuaranteedRef { $0.apply(to: ports.controls, portCount: ports.portCount) }
        let frames = cycle.frameCount
        // A plugin that needs fixed blocks never runs another length (after a change of JACK's
        // period): its outputs stay silent instead.
        let refused = ports.fixedBlock != 0 && frames != ports.fixedBlock
        let inputCount = min(cycle.inputs.count, ports.audioInputs.count)
        let outputCount = refused ? 0 : min(cycle.outputs.count, ports.audioOutputs.count)
        var done = refused ? frames : 0
        for index in 0 ..< ports.midiOutputs.count { midiOutputUsed[index] = 0 }
        while done < frames {
            let count = min(ports.maximumBlock, frames - done)
            // The plugin's own functions: opaque to the compiler's checks, real-time safe by
            // LV2's contract (connect_port and run of an instance).
            for index in 0 ..< inputCount {
                let data = UnsafeMutableRawPointer(mutating: cycle.inputs[index] + done)
                _unsafePerformance { ports.connect(ports.handle, ports.audioInputs[index], data) }
            }
            for index in 0 ..< outputCount {
                let data = UnsafeMutableRawPointer(cycle.outputs[index] + done)
                _unsafePerformance { ports.connect(ports.handle, ports.audioOutputs[index], data) }
            }
            prepareSequences(cycle, from: done, count: count)
            _unsafePerformance { ports.run(ports.runHandle, UInt32(count)) }
            passMIDIOutputs(cycle, from: done, count: count)
            done += count
        }
        // Outputs the plugin lacks (none in a host made from its ports) stay silent.
        if cycle.outputs.count > outputCount {
            for index in outputCount ..< cycle.outputs.count { cycle.outputs[index].update(repeating: 0, count: frames) }
        }
        cycleCount.store(cycleCount.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Appends the MIDI events the plugin wrote in its run over `from ..< from + count` to the
    /// cycle's MIDI outputs (frames relative to the cycle), their bytes copied to this cycle's
    /// room; an event with no room left is counted in ``droppedMIDIEvents``.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    private func passMIDIOutputs(_ cycle: ProcessCycle, from start: Int, count: Int) {
        let ports = self.ports, room = midiOutputBytes, usedBytes = midiOutputUsed
        let midiType = ports.midiEventType, capacity = ports.sequenceCapacity
        var dropped = 0
        for index in 0 ..< min(ports.midiOutputs.count, cycle.midiOutputs.count) {
            let list = cycle.midiOutputs[index]
            let bytesStart = room + index * capacity
            AtomSequence.forEachEvent(ports.midiOutputs[index], capacity: capacity, type: ports.sequenceType) { frame, type, bytes, size in
                guard type == midiType, size > 0 else { return }
                let used = usedBytes[index]
                guard list.count.pointee < list.capacity, used + size <= capacity else {
                    dropped += 1
                    return
                }
                UnsafeMutableRawPointer(bytesStart + used).copyMemory(from: bytes, byteCount: size)
                let at = start + Int(min(max(frame, 0), Int64(count - 1)))
                list.events[list.count.pointee] = MIDIEvent(frame: UInt32(at), size: UInt32(size), bytes: UnsafePointer(bytesStart + used))
                list.count.pointee += 1
                usedBytes[index] = used + size
            }
        }
        if dropped > 0 { droppedMIDIEvents.store(droppedMIDIEvents.load(ordering: .relaxed) &+ dropped, ordering: .relaxed) }
    }

    /// Empties the event inputs, puts the cycle's MIDI events in `from ..< from + count` into the
    /// MIDI input (frames relative to the piece), and readies the event outputs.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    private func prepareSequences(_ cycle: ProcessCycle, from start: Int, count: Int) {
        let ports = self.ports
        ports.readySequences()
        // The transport first: a position at frame 0 precedes the run's MIDI events.
        if let input = ports.positionInput {
            let frame = cycle.transportRolling ? cycle.transportFrame &+ UInt32(truncatingIfNeeded: start) : cycle.transportFrame
            position.tell(input, capacity: ports.sequenceCapacity, types: ports.positionTypes, rolling: cycle.transportRolling, frame: frame,
                          frames: count, beats: cycle.transportBeats)
        }
        guard let midi = ports.midiInput, cycle.midiInputs.count > 0, let events = cycle.midiInputs[0].events else { return }
        let list = cycle.midiInputs[0]
        var dropped = 0
        for slot in 0 ..< list.count {
            let event = events[slot]
            let frame = Int(event.frame)
            guard frame >= start, frame < start + count, let bytes = event.bytes else { continue }
            if !AtomSequence.append(midi, capacity: ports.sequenceCapacity, frame: Int64(frame - start),
                                    type: ports.midiEventType, bytes: bytes, size: Int(event.size)) {
                dropped += 1
            }
        }
        if dropped > 0 { droppedMIDIEvents.store(droppedMIDIEvents.load(ordering: .relaxed) &+ dropped, ordering: .relaxed) }
    }
}

/// What the process thread needs of a plugin instance, set up before activation and owned by
/// the instance (this holds pointers into it; the instance outlives the processor).
public struct PluginHostPorts: @unchecked Sendable {
    public var handle: UnsafeMutableRawPointer?
    public var connect: PluginHostProcessor.ConnectFunction
    /// Called as `run(runHandle, frames)`: the plugin's own `run` with its handle, or a function
    /// that also does the host's work after it (the LV2 worker's responses) with its context.
    public var run: PluginHostProcessor.RunFunction
    public var runHandle: UnsafeMutableRawPointer?
    /// Plugin port indices of the audio inputs and outputs, in JACK port order.
    public var audioInputs: UnsafeBufferPointer<UInt32>
    public var audioOutputs: UnsafeBufferPointer<UInt32>
    /// One float per plugin port; control ports are connected to theirs.
    public var controls: UnsafeMutablePointer<Float>
    public var portCount: Int
    /// Atom sequence buffers (``sequenceCapacity`` bytes each): every event input (the MIDI one
    /// among them) and every event output.
    public var eventInputs: UnsafeBufferPointer<UnsafeMutableRawPointer>
    public var eventOutputs: UnsafeBufferPointer<UnsafeMutableRawPointer>
    /// The event outputs that carry MIDI (some of ``eventOutputs``), in the host's MIDI output
    /// channels' order.
    public var midiOutputs: UnsafeBufferPointer<UnsafeMutableRawPointer>
    public var midiInput: UnsafeMutableRawPointer?
    public var sequenceCapacity: Int
    /// URIDs of atom:Sequence, atom:Chunk and midi:MidiEvent in the plugin's URID map.
    public var sequenceType: UInt32
    public var chunkType: UInt32
    public var midiEventType: UInt32
    public var maximumBlock: Int
    /// The frames every run must have (a plugin that requires fixed blocks), or 0.
    public var fixedBlock = 0
    /// The event input that takes `time:Position` (it may be ``midiInput`` too), or nil; and the
    /// URIDs its objects are written with.
    public var positionInput: UnsafeMutableRawPointer?
    public var positionTypes = AtomSequence.PositionTypes()

    /// Empties every event input and readies every event output for the plugin's next run.
    /// Real-time safe.
    @inlinable
    public func readySequences() {
        for index in 0 ..< eventInputs.count { AtomSequence.clear(eventInputs[index], type: sequenceType) }
        for index in 0 ..< eventOutputs.count {
            AtomSequence.prepareOutput(eventOutputs[index], capacity: sequenceCapacity, chunkType: chunkType)
        }
    }

    public init(handle: UnsafeMutableRawPointer?, connect: @escaping PluginHostProcessor.ConnectFunction, run: @escaping PluginHostProcessor.RunFunction,
                audioInputs: UnsafeBufferPointer<UInt32>, audioOutputs: UnsafeBufferPointer<UInt32>,
                controls: UnsafeMutablePointer<Float>, portCount: Int,
                eventInputs: UnsafeBufferPointer<UnsafeMutableRawPointer>, eventOutputs: UnsafeBufferPointer<UnsafeMutableRawPointer>,
                midiOutputs: UnsafeBufferPointer<UnsafeMutableRawPointer> = UnsafeBufferPointer(start: nil, count: 0),
                midiInput: UnsafeMutableRawPointer?, sequenceCapacity: Int,
                sequenceType: UInt32, chunkType: UInt32, midiEventType: UInt32, maximumBlock: Int,
                runHandle: UnsafeMutableRawPointer? = nil) {
        self.handle = handle
        self.connect = connect
        self.run = run
        self.runHandle = runHandle ?? handle
        self.audioInputs = audioInputs
        self.audioOutputs = audioOutputs
        self.controls = controls
        self.portCount = portCount
        self.eventInputs = eventInputs
        self.eventOutputs = eventOutputs
        self.midiOutputs = midiOutputs
        self.midiInput = midiInput
        self.sequenceCapacity = sequenceCapacity
        self.sequenceType = sequenceType
        self.chunkType = chunkType
        self.midiEventType = midiEventType
        self.maximumBlock = maximumBlock
    }
}

/// Queues control changes for a ``PluginHostProcessor`` (the producer side). One thread at a time.
public final class PluginHostControls: @unchecked Sendable {
    private let changes: ControlChangeQueue

    init(changes: ControlChangeQueue) { self.changes = changes }

    /// Queues `value` for control port `port`; false when the queue is full (the process thread
    /// has not run for a while).
    @discardableResult
    public func set(port: Int, to value: Float) -> Bool { changes.set(port: port, to: value) }
}

/// LV2 atom sequences in raw memory (the layout of lv2/atom/atom.h: an 8-byte atom header
/// {size, type}, an 8-byte sequence body {unit, pad}, then events of {Int64 frames, UInt32 size,
/// UInt32 type, bytes} each padded to 8 bytes). Real-time safe.
public enum AtomSequence {
    /// An empty input sequence: size = the body header only.
    @inlinable
    public static func clear(_ sequence: UnsafeMutableRawPointer, type: UInt32) {
        sequence.storeBytes(of: 8, toByteOffset: 0, as: UInt32.self)
        sequence.storeBytes(of: type, toByteOffset: 4, as: UInt32.self)
        sequence.storeBytes(of: 0, toByteOffset: 8, as: UInt64.self)
    }

    /// An output the plugin may fill: a Chunk of the whole capacity.
    @inlinable
    public static func prepareOutput(_ sequence: UnsafeMutableRawPointer, capacity: Int, chunkType: UInt32) {
        sequence.storeBytes(of: UInt32(capacity - 8), toByteOffset: 0, as: UInt32.self)
        sequence.storeBytes(of: chunkType, toByteOffset: 4, as: UInt32.self)
    }

    /// Calls `body` with each event of an output sequence the plugin wrote (frame within the run,
    /// type URID, bytes, size), in order; nothing when it is not a sequence of type `type` (the
    /// plugin left the prepared chunk). Stops at an event that overruns `capacity` bytes.
    @inlinable
    public static func forEachEvent(_ sequence: UnsafeMutableRawPointer, capacity: Int, type sequenceType: UInt32,
                                    _ body: (_ frame: Int64, _ type: UInt32, _ bytes: UnsafePointer<UInt8>, _ size: Int) -> Void) {
        guard sequence.load(fromByteOffset: 4, as: UInt32.self) == sequenceType else { return }
        let end = min(8 + Int(sequence.load(fromByteOffset: 0, as: UInt32.self)), capacity)
        var offset = 16
        while offset + 16 <= end {
            let event = sequence + offset
            let size = Int(event.load(fromByteOffset: 8, as: UInt32.self))
            guard offset + 16 + size <= end else { return }
            body(event.load(fromByteOffset: 0, as: Int64.self), event.load(fromByteOffset: 12, as: UInt32.self),
                 UnsafePointer((event + 16).assumingMemoryBound(to: UInt8.self)), size)
            offset += (16 + size + 7) & ~7
        }
    }

    /// Appends an event; false when it does not fit `capacity` bytes.
    @inlinable
    public static func append(_ sequence: UnsafeMutableRawPointer, capacity: Int, frame: Int64, type: UInt32,
                              bytes: UnsafePointer<UInt8>, size: Int) -> Bool {
        let bodySize = Int(sequence.load(fromByteOffset: 0, as: UInt32.self))
        let used = 8 + bodySize
        let padded = (16 + size + 7) & ~7
        guard used + padded <= capacity else { return false }
        let event = sequence + used
        event.storeBytes(of: frame, toByteOffset: 0, as: Int64.self)
        event.storeBytes(of: UInt32(size), toByteOffset: 8, as: UInt32.self)
        event.storeBytes(of: type, toByteOffset: 12, as: UInt32.self)
        (event + 16).copyMemory(from: bytes, byteCount: size)
        sequence.storeBytes(of: UInt32(bodySize + padded), toByteOffset: 0, as: UInt32.self)
        return true
    }

    /// The URIDs a `time:Position` object is written with, in the plugin's URID map.
    public struct PositionTypes: Sendable {
        public var object: UInt32 = 0, long: UInt32 = 0, float: UInt32 = 0
        public var position: UInt32 = 0, frame: UInt32 = 0, speed: UInt32 = 0
        public var int: UInt32 = 0, bar: UInt32 = 0, barBeat: UInt32 = 0, beatUnit: UInt32 = 0
        public var beatsPerBar: UInt32 = 0, beatsPerMinute: UInt32 = 0
        public init() {}
    }

    /// Appends, at frame 0, a `time:Position` object (LV2 Time) with the transport's `frame`
    /// (`time:frame`, an atom:Long) and `speed` (`time:speed`, an atom:Float: 1 rolling, 0
    /// stopped), and with `beats` its `time:bar` (Long, from 0), `time:barBeat` (Float: beats
    /// into the bar, from 0), `time:beatUnit` (Int), `time:beatsPerBar` and `time:beatsPerMinute`
    /// (Float), laid out as LV2's atom forge lays it out (each property padded to 8 bytes); false
    /// when it does not fit `capacity` bytes.
    @inlinable
    public static func appendPosition(_ sequence: UnsafeMutableRawPointer, capacity: Int, types: PositionTypes, frame: Int64, speed: Float,
                                      beats: TransportBeats? = nil) -> Bool {
        let bodySize = Int(sequence.load(fromByteOffset: 0, as: UInt32.self))
        let used = 8 + bodySize
        let size = 8 + 24 * (beats == nil ? 2 : 7)   // the object's id and type, then properties of 16 + 8
        guard used + 16 + size <= capacity else { return false }
        let event = sequence + used
        event.storeBytes(of: Int64(0), toByteOffset: 0, as: Int64.self)
        event.storeBytes(of: UInt32(size), toByteOffset: 8, as: UInt32.self)
        event.storeBytes(of: types.object, toByteOffset: 12, as: UInt32.self)
        let body = event + 16
        body.storeBytes(of: UInt32(0), toByteOffset: 0, as: UInt32.self)          // id
        body.storeBytes(of: types.position, toByteOffset: 4, as: UInt32.self)     // otype
        var offset = 8
        /// One property: key, context, the value's size and type, the value padded to 8 bytes.
        func property(_ key: UInt32, _ type: UInt32, _ size: UInt32, _ write: (UnsafeMutableRawPointer) -> Void) {
            body.storeBytes(of: key, toByteOffset: offset, as: UInt32.self)
            body.storeBytes(of: UInt32(0), toByteOffset: offset + 4, as: UInt32.self)
            body.storeBytes(of: size, toByteOffset: offset + 8, as: UInt32.self)
            body.storeBytes(of: type, toByteOffset: offset + 12, as: UInt32.self)
            body.storeBytes(of: UInt64(0), toByteOffset: offset + 16, as: UInt64.self)
            write(body + offset + 16)
            offset += 24
        }
        property(types.frame, types.long, 8) { $0.storeBytes(of: frame, as: Int64.self) }
        property(types.speed, types.float, 4) { $0.storeBytes(of: speed, as: Float.self) }
        if let beats {
            let barBeat = Float(beats.beat - 1) + (beats.ticksPerBeat > 0 ? Float(Double(beats.tick) / beats.ticksPerBeat) : 0)
            property(types.bar, types.long, 8) { $0.storeBytes(of: Int64(beats.bar - 1), as: Int64.self) }
            property(types.barBeat, types.float, 4) { $0.storeBytes(of: barBeat, as: Float.self) }
            property(types.beatUnit, types.int, 4) { $0.storeBytes(of: Int32(beats.beatType), as: Int32.self) }
            property(types.beatsPerBar, types.float, 4) { $0.storeBytes(of: beats.beatsPerBar, as: Float.self) }
            property(types.beatsPerMinute, types.float, 4) { $0.storeBytes(of: Float(beats.beatsPerMinute), as: Float.self) }
        }
        sequence.storeBytes(of: UInt32(bodySize + 16 + size), toByteOffset: 0, as: UInt32.self)
        return true
    }
}

/// Tells a plugin where the transport is, as LV2 hosts do (jalv): a `time:Position` (frame and
/// speed) in its event input that supports it, at the start of a run whose transport is not where
/// the last run left it (the first run, a start, a stop, a locate, a skipped cycle).
///
/// - Important: Real-time safe; one process thread.
public struct TransportPositionTeller: Sendable {
    private var told = false
    private var rolling = false
    private var expectedFrame: UInt32 = 0
    private var tempo: Double = -1

    public init() {}

    /// For a run of `frames` from transport frame `frame` (with `beats` when a timebase master
    /// gives them): writes the position into `sequence` (an emptied event input, before any other
    /// event of the run) when it changed (a new tempo counts).
    public mutating func tell(_ sequence: UnsafeMutableRawPointer, capacity: Int, types: AtomSequence.PositionTypes,
                              rolling: Bool, frame: UInt32, frames: Int, beats: TransportBeats? = nil) {
        let tempo = beats?.beatsPerMinute ?? -1
        if !told || rolling != self.rolling || frame != expectedFrame || tempo != self.tempo,
           AtomSequence.appendPosition(sequence, capacity: capacity, types: types, frame: Int64(frame), speed: rolling ? 1 : 0, beats: beats) {
            told = true
            self.rolling = rolling
            self.tempo = tempo
        }
        expectedFrame = rolling ? frame &+ UInt32(truncatingIfNeeded: frames) : frame
    }
}
