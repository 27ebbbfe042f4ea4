import AQCore
import Glibc
import Synchronization

/// A plugin graph live on any driver (JACK's, or the offline one): channels `in_1 ... in_N` and
/// `out_1 ... out_M` on the driver (with MIDI, `midi_in` and `midi_out` too), a ``GraphRunner`` run every cycle, and the graph's latency
/// published to the driver. A new runner (the edited graph, built off the process thread) is
/// swapped in at a cycle boundary with ``run(_:)``; the old one is released off the process
/// thread, so the audio never stops for an edit.
///
/// Threads: everything from the thread that owns the host, never the process thread.
public final class GraphHost: @unchecked Sendable {
    public let driver: any AudioDriver
    /// The graph's input and output channels' full names.
    public let inputs: [String]
    public let outputs: [String]
    /// The graph's MIDI input (`midi_in`: its events go where it is connected, its control
    /// changes set the controls bound to them) and MIDI output (`midi_out`), if it has them.
    public let midiInput: String?
    public let midiOutput: String?
    private let processor: GraphHostProcessor
    /// The levels of the graph's outputs, over windows of about 50 ms (whole cycles): what a
    /// page or a status shows of the host's output.
    public var outputLevels: CycleLevelMeter { processor.meter }
    /// Where the driver's transport is at the start of the cycle being run: what the nodes tell
    /// plugins that take `time:Position`.
    public var transport: GraphTransport { processor.transport }
    private var started = false
    /// The runner the process thread has (or will take at its next cycle).
    public private(set) var runner: GraphRunner?
    /// MIDI events dropped by the runners the process thread has let go of.
    private var droppedByRetired = 0
    /// The input and output channels marked control voltage now (0-based).
    private var markedInputs = Set<Int>(), markedOutputs = Set<Int>()

    /// Makes the channels (with `midi`, a MIDI input `midi_in` and a MIDI output `midi_out` too);
    /// nothing runs before ``start()``.
    public init(driver: any AudioDriver, inputs: Int, outputs: Int, midi: Bool = false) throws(AudioDriverError) {
        self.driver = driver
        self.inputs = inputs > 0 ? try driver.makeChannels(prefix: "in_", count: inputs, direction: .input) : []
        self.outputs = outputs > 0 ? try driver.makeChannels(prefix: "out_", count: outputs, direction: .output) : []
        processor = GraphHostProcessor(meter: CycleLevelMeter(channelCount: outputs, windowFrames: max(1, driver.sampleRate / 20)))
        midiInput = midi ? try driver.makeChannels(named: ["midi_in"], direction: .input, kind: .midi).first : nil
        midiOutput = midi ? try driver.makeChannels(named: ["midi_out"], direction: .output, kind: .midi).first : nil
    }

    /// The latest MIDI control change on the graph's MIDI input: a count of those seen so far
    /// (wrapping at 2^16; 0 before the first), its channel (0 ... 15) and controller (0 ... 127).
    public var latestControlChange: (count: Int, channel: Int, controller: Int) {
        let packed = processor.latestControlChange.load(ordering: .acquiring)
        return (Int(packed >> 16), Int(packed >> 8 & 0xFF), Int(packed & 0xFF))
    }

    deinit { stop() }

    /// Starts the cycles (silence until a runner is given).
    public func start() throws(AudioDriverError) {
        try driver.start(processor: processor)
        started = true
    }

    /// Runs `runner` from the next cycle on and publishes its plan's latency; once the process
    /// thread has taken it, releases the runner it replaces.
    /// - Returns: whether the process thread took it (within 2 s when running; false before
    ///   ``start()``, which hands it over at the first cycle).
    /// - Throws: a runner whose cycles are shorter than the driver's.
    @discardableResult
    public func run(_ runner: GraphRunner) throws(AudioDriverError) -> Bool {
        guard runner.maximumFrames >= driver.bufferSize else {
            throw AudioDriverError("the graph runs at most \(runner.maximumFrames) frames a cycle; \(driver.name) runs \(driver.bufferSize)")
        }
        let previous = self.runner
        self.runner = runner
        processor.offer(runner)
        driver.publishProcessingLatency(runner.plan.latency)
        markControlVoltage(runner.plan)
        guard started else { return false }
        // The process thread takes it at its next cycle: a caller-clocked driver runs that cycle
        // now; on JACK, up to a period later (2 s at most, for a server that stalls).
        driver.settle()
        var waited = 0
        while !processor.hasTaken, waited < 2000, !driver.hasShutDown {
            usleep(1000)
            waited += 1
        }
        processor.releaseRetired()
        if let previous { droppedByRetired += previous.droppedMIDIEvents.load(ordering: .relaxed) }
        return processor.hasTaken
    }

    /// MIDI events that found no room in the graph (``GraphRunner/droppedMIDIEvents``) since
    /// the host began, over every runner it has run.
    public var droppedMIDIEvents: Int {
        droppedByRetired + (runner?.droppedMIDIEvents.load(ordering: .relaxed) ?? 0)
    }

    /// Marks the channels that carry control voltage in `plan` (on JACK, signal-type "CV") and
    /// unmarks those that no longer do. A mark the driver refuses is left as it was: it tells
    /// patchbays what a port carries and changes no frame.
    private func markControlVoltage(_ plan: GraphPlan) {
        for (channels, wanted, marked) in [(inputs, plan.controlVoltageInputs, markedInputs), (outputs, plan.controlVoltageOutputs, markedOutputs)] {
            for channel in wanted.symmetricDifference(marked) where channels.indices.contains(channel) {
                try? driver.markChannel(channels[channel], as: wanted.contains(channel) ? .controlVoltage : .audio)
            }
        }
        markedInputs = plan.controlVoltageInputs
        markedOutputs = plan.controlVoltageOutputs
    }

    /// Stops the cycles. Idempotent.
    public func stop() {
        guard started else { return }
        started = false
        driver.stop()
        processor.releaseRetired()
    }
}

/// The process side of a ``GraphHost``: runs the current runner each cycle; takes an offered
/// one at a cycle's start and leaves the one it replaces for the owner's thread to release.
final class GraphHostProcessor: RealtimeProcessor, @unchecked Sendable {
    /// A retained runner offered to the process thread (its pointer's bits), 0 for none.
    private let offered = Atomic<UInt>(0)
    /// The runner the process thread let go of, for the owner to release; 0 for none.
    private let retired = Atomic<UInt>(0)
    /// Process thread only: the runner it runs (retained by the offer).
    private var current: UnsafeMutableRawPointer?
    /// The latest control change on the MIDI input: count << 16 | channel << 8 | controller.
    let latestControlChange = Atomic<UInt32>(0)
    /// Retained here (released in deinit), unmanaged so the process thread writes it without
    /// reference counting.
    private let transportBox = Unmanaged.passRetained(GraphTransport())
    var transport: GraphTransport { transportBox.takeUnretainedValue() }
    /// Meters the outputs each cycle (unmanaged for the process thread, as the transport).
    private let meterBox: Unmanaged<CycleLevelMeter>
    var meter: CycleLevelMeter { meterBox.takeUnretainedValue() }

    init(meter: CycleLevelMeter) {
        meterBox = .passRetained(meter)
    }

    static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<GraphHostProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    /// Offers `runner` (retained until retired); an offer not yet taken is released.
    func offer(_ runner: GraphRunner) {
        let bits = UInt(bitPattern: Unmanaged.passRetained(runner).toOpaque())
        let replaced = offered.exchange(bits, ordering: .acquiringAndReleasing)
        if replaced != 0 { Unmanaged<GraphRunner>.fromOpaque(UnsafeRawPointer(bitPattern: replaced)!).release() }
    }

    /// Whether the process thread has taken the latest offer.
    var hasTaken: Bool { offered.load(ordering: .acquiring) == 0 }

    /// Releases the runner the process thread let go of, if any. Not on the process thread.
    func releaseRetired() {
        let bits = retired.exchange(0, ordering: .acquiringAndReleasing)
        if bits != 0 { Unmanaged<GraphRunner>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    }

    deinit {
        transportBox.release()
        meterBox.release()
        releaseRetired()
        let bits = offered.exchange(0, ordering: .acquiringAndReleasing)
        if bits != 0 { Unmanaged<GraphRunner>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
        if let current { Unmanaged<GraphRunner>.fromOpaque(current).release() }
    }

    /// Takes an offered runner, then runs the current one over the cycle (silence without one).
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    func process(_ cycle: ProcessCycle) {
        let next = offered.exchange(0, ordering: .acquiringAndReleasing)
        if next != 0 {
            // The owner releases the one replaced once it sees the offer taken.
            if let current { retired.store(UInt(bitPattern: current), ordering: .releasing) }
            current = UnsafeMutableRawPointer(bitPattern: next)
        }
        transportBox._withUnsafeGuaranteedRef {
            $0.rolling.store(cycle.transportRolling, ordering: .relaxed)
            $0.frame.store(cycle.transportFrame, ordering: .relaxed)
            $0.beats = cycle.transportBeats
        }
        let midi = cycle.midiInputs.count > 0 ? cycle.midiInputs[0] : MIDIEventList(events: nil, count: 0)
        if midi.count > 0 {
            // For MIDI learn: which controller moved last.
            var latest = latestControlChange.load(ordering: .relaxed)
            MIDIControlChanges.forEach(in: midi) { channel, controller, _ in
                latest = ((latest >> 16 &+ 1) & 0xFFFF) << 16 | UInt32(channel) << 8 | UInt32(controller)
            }
            latestControlChange.store(latest, ordering: .releasing)
        }
        guard let current, cycle.frameCount > 0 else {
            for channel in 0 ..< cycle.outputs.count { cycle.outputs[channel].update(repeating: 0, count: cycle.frameCount) }
            meterBox._withUnsafeGuaranteedRef { $0.add(cycle.outputs, frames: cycle.frameCount) }
            return
        }
        Unmanaged<GraphRunner>.fromOpaque(current)._withUnsafeGuaranteedRef {
            $0.process(inputs: cycle.inputs, outputs: cycle.outputs, frames: cycle.frameCount, midi: midi,
                       midiOutput: cycle.midiOutputs.count > 0 ? cycle.midiOutputs[0] : nil)
        }
        meterBox._withUnsafeGuaranteedRef { $0.add(cycle.outputs, frames: cycle.frameCount) }
    }
}

/// The driver's transport at the start of the cycle a ``GraphHost`` runs: written by its process
/// thread at each cycle's start, read by the nodes it runs in that cycle (the same thread).
public final class GraphTransport: @unchecked Sendable {
    public let rolling = Atomic<Bool>(false)
    /// The transport's frame at the cycle's first frame.
    public let frame = Atomic<UInt32>(0)
    /// Bar, beat and tempo when a timebase master gives them. Process thread only (written and
    /// read there, in that order, each cycle).
    public var beats: TransportBeats?
    public init() {}
}
