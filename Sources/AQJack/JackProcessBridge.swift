import AQCore
import CJack
import Glibc
import Synchronization

/// How the process callback kept time, cycle by cycle: written by the process thread only
/// (plain stores of its own maxima), read by any thread. Microseconds on JACK's clock.
///
/// *Lateness* is how long after the cycle's start (`jack_get_cycle_times`) the callback began:
/// the time the thread waited to be scheduled. *Duration* is how long the callback itself ran.
/// A cycle whose callback ends more than a period after the cycle's start is *late*: JACK
/// reports it as this client "not finished".
/// What ``JackClient/processTiming`` reports of the counters below.
public struct ProcessTiming: Sendable, Equatable, Encodable {
    /// Process callbacks so far.
    public let cycles: UInt64
    /// Callbacks that ended after the next cycle's start: JACK's "client was not finished",
    /// whether this client was slow or began late (a client before it in the graph, the system).
    public let lateCycles: UInt64
    /// Callbacks that stalled (``StalledCycle``): began more than half a period after they were
    /// due, or ran more than 0.5 ms of wall time.
    public let stalledCycles: UInt64
    /// Callbacks that alone ran longer than their cycle: the xruns this client itself caused.
    /// Counted on the thread's CPU time, not the wall clock: in a virtual machine the host may
    /// stop a CPU for milliseconds in the middle of a callback, and that time is the host's
    /// (the CPU clock mostly leaves it out, not always; docs/MEASUREMENTS.md).
    public let slowCycles: UInt64
    /// The longest a callback began after its cycle's start (waiting to be scheduled), µs.
    public let maximumLatenessMicros: UInt64
    /// The longest a callback ran, µs of wall time.
    public let maximumDurationMicros: UInt64
    /// The most CPU time one callback used, µs.
    public let maximumCPUMicros: UInt64
    /// MIDI events a port could not carry: on inputs, those JACK reports lost
    /// (`jack_midi_get_lost_event_count`) and those past ``ProcessBridgeState/midiEventCapacity``
    /// in a cycle; on outputs, those `jack_midi_event_write` refused (the port's buffer full, a
    /// frame outside the cycle or before the previous event's).
    public let midiEventsLost: UInt64
}

/// A callback that stalled: it began more than half a period after it was due, or ran more
/// than a quarter of a period (at least ``stallDurationMicros``) of wall time. Due is measured from the previous callback's start
/// on the monotonic clock, not from JACK's cycle times: those are the estimates of JACK's clock
/// filter, which lag by tens of milliseconds while it settles (docs/MEASUREMENTS.md).
public struct StalledCycle: Sendable, Equatable {
    /// The least wall time over which a callback counts as stalled, µs.
    public static let stallDurationMicros: UInt32 = 500
    /// The cycle's frame time (`jack_get_cycle_times`' `current_frames`).
    public let frameTime: UInt32
    /// µs since the previous callback began.
    public let sincePreviousMicros: UInt32
    /// µs of wall time the callback ran.
    public let durationMicros: UInt32
    /// µs of the thread's CPU time the callback used.
    public let cpuMicros: UInt32
    /// Minor page faults the thread took since the previous callback ended (`getrusage`
    /// RUSAGE_THREAD): memory that was locked but moved (compaction), or never touched.
    public let minorFaults: UInt32
}

struct ProcessTimingCounters: ~Copyable {
    let cycles = Atomic<UInt64>(0)
    let lateCycles = Atomic<UInt64>(0)
    let slowCycles = Atomic<UInt64>(0)
    let maximumLatenessMicros = Atomic<UInt64>(0)
    let maximumDurationMicros = Atomic<UInt64>(0)
    let maximumCPUMicros = Atomic<UInt64>(0)
    let stalledCycles = Atomic<UInt64>(0)
    let midiEventsLost = Atomic<UInt64>(0)
    /// The first `stallCapacity` stalled callbacks, in order (entries below `stalledCycles`),
    /// allocated and written through once here, before the process thread runs.
    let stallCapacity: Int
    let stalls: UnsafeMutablePointer<StalledCycle>
    /// When the previous callback began (µs, jack_get_time); 0 before the first.
    let previousEntered = Atomic<UInt64>(0)
    /// The process thread's minor page faults at the end of the previous callback.
    let previousMinorFaults = Atomic<Int>(0)

    init(stallCapacity: Int) {
        self.stallCapacity = max(1, stallCapacity)
        stalls = .allocate(capacity: self.stallCapacity)
        stalls.initialize(repeating: StalledCycle(frameTime: 0, sincePreviousMicros: 0, durationMicros: 0, cpuMicros: 0, minorFaults: 0),
                          count: self.stallCapacity)
    }

    deinit { stalls.deallocate() }
}

/// What the process thunk reads each cycle: the client, the bound ports, scratch arrays for their
/// buffers, and the processor's entry point.
///
/// A plain struct in manually allocated memory, reached through a raw pointer, so the process
/// thread never touches a Swift reference count. Written only while the client is inactive
/// (``JackClient/activate(processor:inputs:outputs:)``), read only by the process thread.
struct ProcessBridgeState {
    var client: OpaquePointer
    var inputPorts: UnsafeMutablePointer<OpaquePointer?>? = nil
    var inputBuffers: UnsafeMutablePointer<UnsafePointer<Float>>? = nil
    var inputCount = 0
    var outputPorts: UnsafeMutablePointer<OpaquePointer?>? = nil
    var outputBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>? = nil
    var outputCount = 0
    var midiPorts: UnsafeMutablePointer<OpaquePointer?>? = nil
    /// Per MIDI port, room for ``midiEventCapacity`` events; and the lists handed to the processor.
    var midiEvents: UnsafeMutablePointer<MIDIEvent>? = nil
    var midiLists: UnsafeMutablePointer<MIDIEventList>? = nil
    var midiCount = 0
    var midiOutputPorts: UnsafeMutablePointer<OpaquePointer?>? = nil
    var midiOutputEvents: UnsafeMutablePointer<MIDIEvent>? = nil
    var midiOutputCounts: UnsafeMutablePointer<Int>? = nil
    var midiOutputLists: UnsafeMutablePointer<MIDIOutputList>? = nil
    var midiOutputCount = 0
    /// MIDI events read per port and cycle (JACK's buffer of a 128-frame cycle holds far fewer
    /// in practice); events past it are not handed on and are counted in
    /// ``ProcessTiming/midiEventsLost``.
    static let midiEventCapacity = 1024
    var entry: RealtimeEntry? = nil
    /// The processor's slow-sync function, when it takes part in the transport.
    var syncEntry: TransportSyncEntry? = nil
    var processor: UnsafeMutableRawPointer? = nil
    /// Timing of every cycle, for as long as the client lives.
    let timing: UnsafeMutablePointer<ProcessTimingCounters>

    init(client: OpaquePointer, stallCapacity: Int) {
        self.client = client
        timing = .allocate(capacity: 1)
        timing.initialize(to: ProcessTimingCounters(stallCapacity: stallCapacity))
    }

    /// Frees the port tables. Only while inactive.
    mutating func releaseTables() {
        inputPorts?.deallocate()
        inputBuffers?.deallocate()
        outputPorts?.deallocate()
        outputBuffers?.deallocate()
        midiPorts?.deallocate()
        midiEvents?.deallocate()
        midiLists?.deallocate()
        inputPorts = nil; inputBuffers = nil; outputPorts = nil; outputBuffers = nil
        midiOutputPorts?.deallocate()
        midiOutputEvents?.deallocate()
        midiOutputCounts?.deallocate()
        midiOutputLists?.deallocate()
        midiPorts = nil; midiEvents = nil; midiLists = nil
        midiOutputPorts = nil; midiOutputEvents = nil; midiOutputCounts = nil; midiOutputLists = nil
        inputCount = 0; outputCount = 0; midiCount = 0; midiOutputCount = 0
    }
}

/// The process callback JACK calls on its real-time thread, once per cycle.
///
/// Gathers the bound ports' buffers and the cycle's frame time (`jack_get_cycle_times`, whose
/// `current_frames` is `jack_last_frame_time`), then calls the processor's ``RealtimeEntry``.
/// With no processor bound it writes silence to the bound outputs.
///
/// - Important: Real-time safe: it calls only libjack's process-thread functions, reads the
///   bridge through a raw pointer and allocates nothing. It is not annotated `@_noLocks` because
///   the annotations cannot see into C functions; the processors it calls are.
let jackProcessThunk: @convention(c) (jack_nframes_t, UnsafeMutableRawPointer?) -> Int32 = { frameCount, argument in
    let state = argument.unsafelyUnwrapped.assumingMemoryBound(to: ProcessBridgeState.self).pointee
    // jack_get_time reads CLOCK_MONOTONIC through the vDSO: no system call. The thread's CPU
    // clock is one system call, which neither blocks nor allocates.
    let entered = jack_get_time()
    let enteredCPU = threadCPUMicros()
    var cycleFrame: jack_nframes_t = 0
    var cycleStart: jack_time_t = 0
    var nextCycleStart: jack_time_t = 0
    var periodMicros: Float = 0
    if jack_get_cycle_times(state.client, &cycleFrame, &cycleStart, &nextCycleStart, &periodMicros) != 0 {
        cycleFrame = jack_last_frame_time(state.client)
        cycleStart = 0
        nextCycleStart = 0
    }
    // Read once, here, for the processor and for the timing both.
    defer { recordTiming(state, frameTime: cycleFrame, periodMicros: periodMicros, entered: entered, enteredCPU: enteredCPU, cycleStart: cycleStart, nextCycleStart: nextCycleStart) }
    for index in 0 ..< state.inputCount {
        let buffer = jack_port_get_buffer(state.inputPorts.unsafelyUnwrapped[index], frameCount)
        state.inputBuffers.unsafelyUnwrapped[index] = UnsafePointer(buffer.unsafelyUnwrapped.assumingMemoryBound(to: Float.self))
    }
    for index in 0 ..< state.outputCount {
        let buffer = jack_port_get_buffer(state.outputPorts.unsafelyUnwrapped[index], frameCount)
        state.outputBuffers.unsafelyUnwrapped[index] = buffer.unsafelyUnwrapped.assumingMemoryBound(to: Float.self)
    }
    for index in 0 ..< state.midiCount {
        let buffer = jack_port_get_buffer(state.midiPorts.unsafelyUnwrapped[index], frameCount)
        let events = state.midiEvents.unsafelyUnwrapped + index * ProcessBridgeState.midiEventCapacity
        let available = Int(jack_midi_get_event_count(buffer))
        let count = min(available, ProcessBridgeState.midiEventCapacity)
        var event = jack_midi_event_t()
        var kept = 0
        for slot in 0 ..< count where jack_midi_event_get(&event, buffer, UInt32(slot)) == 0 {
            events[kept] = MIDIEvent(frame: event.time, size: UInt32(event.size), bytes: UnsafePointer(event.buffer))
            kept += 1
        }
        let lost = UInt64(available - kept) + UInt64(jack_midi_get_lost_event_count(buffer))
        if lost > 0 { countLostMIDIEvents(state, lost) }
        state.midiLists.unsafelyUnwrapped[index] = MIDIEventList(events: UnsafePointer(events), count: kept)
    }
    for index in 0 ..< state.midiOutputCount { state.midiOutputCounts.unsafelyUnwrapped[index] = 0 }
    defer { writeMIDIOutputs(state, frameCount: frameCount) }
    guard let entry = state.entry, let processor = state.processor else {
        for index in 0 ..< state.outputCount {
            state.outputBuffers.unsafelyUnwrapped[index].update(repeating: 0, count: Int(frameCount))
        }
        return 0
    }
    // The transport for this whole cycle (jack_transport_query is real-time safe; from the
    // process thread it describes the cycle's first frame).
    var position = jack_position_t()
    let transportState = jack_transport_query(state.client, &position)
    var cycle = ProcessCycle(
        frameCount: Int(frameCount), frameTime: cycleFrame,
        cycleStartMicros: cycleStart, nextCycleStartMicros: nextCycleStart,
        inputs: UnsafeBufferPointer(start: state.inputBuffers, count: state.inputCount),
        outputs: UnsafeBufferPointer(start: state.outputBuffers, count: state.outputCount),
        midiInputs: UnsafeBufferPointer(start: state.midiLists, count: state.midiCount),
        midiOutputs: UnsafeBufferPointer(start: state.midiOutputLists, count: state.midiOutputCount),
        transportRolling: transportState.rawValue == JackTransportRolling.rawValue, transportFrame: position.frame,
        transportBeats: position.valid.rawValue & JackPositionBBT.rawValue != 0
            ? TransportBeats(bar: position.bar, beat: position.beat, tick: position.tick, ticksPerBeat: position.ticks_per_beat,
                             beatsPerBar: position.beats_per_bar, beatType: position.beat_type, beatsPerMinute: position.beats_per_minute)
            : nil,
        connectionProbe: jackConnectionProbe, connectionProbeContext: UnsafeRawPointer(argument))
    withUnsafePointer(to: &cycle) { entry(processor, UnsafeRawPointer($0)) }
    return 0
}

/// ``ProcessCycle/isConnected(input:port:to:)`` on JACK: `jack_port_connected_to` on the bound
/// port (JACK2 keeps each connection under both its ports). On the process thread libjack reads
/// the graph the cycle runs with and never waits for a pending change (JACK2's `WaitGraphChange`
/// is skipped on the real-time thread); it looks the peer up by name among the ports in use. No
/// allocation, no lock, no system call.
let jackConnectionProbe: ConnectionProbe = { context, input, index, peer in
    let state = context.unsafelyUnwrapped.assumingMemoryBound(to: ProcessBridgeState.self).pointee
    let count = input ? state.inputCount : state.outputCount
    guard index >= 0, index < count,
          let port = input ? state.inputPorts.unsafelyUnwrapped[index] : state.outputPorts.unsafelyUnwrapped[index] else { return false }
    return jack_port_connected_to(port, peer) > 0
}

/// Writes the events the processor left for each MIDI output port (an empty buffer when none).
/// Process thread only.
@inline(__always)
private func writeMIDIOutputs(_ state: ProcessBridgeState, frameCount: jack_nframes_t) {
    for index in 0 ..< state.midiOutputCount {
        guard let buffer = jack_port_get_buffer(state.midiOutputPorts.unsafelyUnwrapped[index], frameCount) else { continue }
        jack_midi_clear_buffer(buffer)
        let list = state.midiOutputLists.unsafelyUnwrapped[index]
        var refused: UInt64 = 0
        for slot in 0 ..< min(list.count.pointee, list.capacity) {
            let event = list.events[slot]
            guard let bytes = event.bytes, event.frame < frameCount,
                  jack_midi_event_write(buffer, event.frame, bytes, Int(event.size)) == 0 else {
                refused += 1
                continue
            }
        }
        if refused > 0 { countLostMIDIEvents(state, refused) }
    }
}

/// Adds to ``ProcessTiming/midiEventsLost``. Process thread only (the single writer).
@inline(__always)
private func countLostMIDIEvents(_ state: ProcessBridgeState, _ count: UInt64) {
    let timing = state.timing
    timing.pointee.midiEventsLost.store(timing.pointee.midiEventsLost.load(ordering: .relaxed) &+ count, ordering: .relaxed)
}

/// Adds one cycle to the client's timing counters, and the cycle to the stall log when it
/// stalled. Process thread only (the single writer). Two system calls a cycle, neither of which
/// blocks or allocates: the thread's CPU clock and `getrusage` (0.5 and 0.25 µs here).
@inline(__always)
private func recordTiming(_ state: ProcessBridgeState, frameTime: jack_nframes_t, periodMicros: Float, entered: jack_time_t, enteredCPU: UInt64,
                          cycleStart: jack_time_t, nextCycleStart: jack_time_t) {
    let left = jack_get_time()
    let cpu = threadCPUMicros() &- enteredCPU
    let timing = state.timing
    timing.pointee.cycles.store(timing.pointee.cycles.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    let duration = left &- entered
    if duration > timing.pointee.maximumDurationMicros.load(ordering: .relaxed) {
        timing.pointee.maximumDurationMicros.store(duration, ordering: .relaxed)
    }
    if cpu > timing.pointee.maximumCPUMicros.load(ordering: .relaxed) {
        timing.pointee.maximumCPUMicros.store(cpu, ordering: .relaxed)
    }
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (1 on Linux; glibc declares it only with _GNU_SOURCE)
    let minorFaults = usage.ru_minflt - timing.pointee.previousMinorFaults.load(ordering: .relaxed)
    timing.pointee.previousMinorFaults.store(usage.ru_minflt, ordering: .relaxed)
    let previous = timing.pointee.previousEntered.load(ordering: .relaxed)
    timing.pointee.previousEntered.store(entered, ordering: .relaxed)
    let sincePrevious = previous > 0 && entered > previous ? entered - previous : 0
    let longest = max(Double(StalledCycle.stallDurationMicros), Double(periodMicros) / 4)
    if Double(duration) > longest || (periodMicros > 0 && Double(sincePrevious) > 1.5 * Double(periodMicros)) {
        let index = timing.pointee.stalledCycles.load(ordering: .relaxed)
        if index < UInt64(timing.pointee.stallCapacity) {
            timing.pointee.stalls[Int(index)] = StalledCycle(frameTime: frameTime, sincePreviousMicros: UInt32(truncatingIfNeeded: sincePrevious),
                                                             durationMicros: UInt32(truncatingIfNeeded: duration),
                                                             cpuMicros: UInt32(truncatingIfNeeded: cpu),
                                                             minorFaults: UInt32(truncatingIfNeeded: minorFaults))
        }
        timing.pointee.stalledCycles.store(index &+ 1, ordering: .releasing)
    }
    // Cycle times 0: jack_get_cycle_times failed for this cycle.
    guard cycleStart > 0, entered >= cycleStart else { return }
    let lateness = entered - cycleStart
    if lateness > timing.pointee.maximumLatenessMicros.load(ordering: .relaxed) {
        timing.pointee.maximumLatenessMicros.store(lateness, ordering: .relaxed)
    }
    if nextCycleStart > cycleStart && cpu > nextCycleStart - cycleStart {
        timing.pointee.slowCycles.store(timing.pointee.slowCycles.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }
    if left > nextCycleStart {
        timing.pointee.lateCycles.store(timing.pointee.lateCycles.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }
}

/// The calling thread's CPU time, µs (`CLOCK_THREAD_CPUTIME_ID`: time the host took the CPU
/// away is not in it). Real-time safe: one system call that neither blocks nor allocates.
@inline(__always)
private func threadCPUMicros() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return UInt64(now.tv_sec) &* 1_000_000 &+ UInt64(now.tv_nsec) / 1000
}

/// The slow-sync callback JACK calls on the process thread, before a cycle, while the transport
/// is starting or after a locate (`jack_set_sync_callback`): asks the processor whether it is
/// ready to roll from the position. Real-time safe, as ``jackProcessThunk``.
let jackSyncThunk: @convention(c) (jack_transport_state_t, UnsafeMutablePointer<jack_position_t>?, UnsafeMutableRawPointer?) -> Int32 = { transportState, position, argument in
    let state = argument.unsafelyUnwrapped.assumingMemoryBound(to: ProcessBridgeState.self).pointee
    guard let entry = state.syncEntry, let processor = state.processor, let position else { return 1 }
    return entry(processor, transportState.rawValue == JackTransportStarting.rawValue, position.pointee.frame) ? 1 : 0
}
