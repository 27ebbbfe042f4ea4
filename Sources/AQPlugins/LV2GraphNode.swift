import AQCore
import AQGraph
import Synchronization

/// A plugin instance (LV2, or LADSPA: any ``PluginInstance``) as a node of a plugin graph (``PluginGraph``): its audio and CV
/// ports by symbol, the latency it reports, and the kernel a ``GraphRunner`` runs it through.
///
/// The kernel goes through the instance's ``PluginHostPorts`` (its C functions and tables, as the
/// live host's process thread does): connecting a port, emptying the event inputs and readying
/// the event outputs, running (with the worker's responses after each run): real-time safe, on
/// the process thread every cycle.
///
/// Controls change while it runs through a queue the kernel empties before each run
/// (``set(_:to:)``), so only the process thread writes the values the plugin reads; the runner
/// bypasses it with ``bypass``.
///
/// Threads: made, and its ``node`` read, ``set(_:to:)`` and ``value(of:)`` called, on one thread
/// at a time off the process thread; the kernel's `run` on it. The node must outlive every
/// runner made with its kernel.
public final class LV2GraphNode: @unchecked Sendable {
    public let id: String
    public let instance: any PluginInstance
    private let ports: PluginHostPorts
    /// Retained here (released in deinit), unmanaged so the process thread reaches it without
    /// reference counting.
    private let changes = Unmanaged.passRetained(ControlChangeQueue())
    /// The value each control input was last given by ``set(_:to:)``, while the process thread
    /// may not have applied it yet; changes queued, and applied (by the process thread).
    private var requested: [String: Float] = [:]
    private var queued = 0
    private let applied = Atomic<Int>(0)
    /// On: the runner passes the inputs through the node's latency instead of running it (for a
    /// plugin without an `lv2:enabled` port: ``setBypassed(_:)`` decides).
    public let bypass = GraphBypass()
    /// The host's transport, read at each run by a plugin that takes `time:Position` (retained
    /// here; unmanaged, so the process thread reads it without reference counting).
    private var transport: Unmanaged<GraphTransport>?
    /// Process thread only.
    private var position = TransportPositionTeller()
    /// Process thread only: the events the runner gave the MIDI input for the next run
    /// (``MIDIEvent``s, valid until it returns), and per MIDI output the events of the latest run
    /// (room for ``midiOutputCapacity`` each; their bytes in the plugin's output buffer).
    private var pendingMIDI: UnsafeRawPointer?
    private var pendingMIDICount = 0
    private let outputEvents: UnsafeMutablePointer<MIDIEvent>
    private let outputCounts: UnsafeMutablePointer<Int>
    private static let midiOutputCapacity = 1024
    /// MIDI events that found no room in the plugin's event input or in a MIDI output's list. Any thread.
    public let droppedMIDIEvents = Atomic<Int>(0)

    /// Primes the instance once on silence, as the live host does (its latency port reports
    /// only after a run).
    /// - Throws: a plugin that runs only fixed blocks (not in graphs yet).
    public init(id: String, instance: any PluginInstance) throws(PluginError) {
        guard instance.fixedBlock == nil else {
            throw PluginError(.usage, "'\(instance.description.name)' runs only blocks of \(instance.fixedBlock ?? 0) frames, which a graph cannot give it yet")
        }
        self.id = id
        self.instance = instance
        instance.run(frames: instance.primingFrames)
        ports = instance.hostPorts()
        outputEvents = .allocate(capacity: max(1, ports.midiOutputs.count * Self.midiOutputCapacity))
        outputCounts = .allocate(capacity: max(1, ports.midiOutputs.count))
        outputCounts.initialize(repeating: 0, count: max(1, ports.midiOutputs.count))
    }

    deinit {
        changes.release()
        transport?.release()
        outputEvents.deallocate()
        outputCounts.deallocate()
    }

    /// Tells the plugin (when it takes `time:Position`) where `transport` is at each run. Before
    /// any runner runs the node.
    public func follow(_ transport: GraphTransport) {
        self.transport?.release()
        self.transport = .passRetained(transport)
    }

    /// The node as the graph sees it: audio and CV inputs and outputs by symbol (audio first, as
    /// ``LV2PluginDescription/signalInputs``), its first MIDI input and every MIDI output, the
    /// latency reported after the instance's latest run.
    public var node: GraphNode {
        let description = instance.description
        return GraphNode(id: id, inputs: description.signalInputs.map(\.symbol), outputs: description.signalOutputs.map(\.symbol),
                  midiInputs: ports.midiInput == nil ? [] : description.midiInputs.prefix(1).map(\.symbol),
                  midiOutputs: description.midiOutputs.map(\.symbol),
                  controlVoltage: Set(description.ports.filter { $0.kind == .cv }.map(\.symbol)),
                  latency: instance.latencyFrames)
    }

    /// What the runner calls: port `k` is the k-th input of ``node``, then its outputs.
    public var kernel: GraphNodeKernel {
        let hasMIDI = ports.midiInput != nil || ports.midiOutputs.count > 0
        return GraphNodeKernel(context: Unmanaged.passUnretained(self).toOpaque(), connect: Self.connectEntry, run: Self.runEntry, bypass: bypass,
                               midi: hasMIDI ? GraphNodeMIDI(input: Self.midiInputEntry, output: Self.midiOutputEntry) : nil)
    }

    /// Sets control input `symbol` to `value`, checked against its range here, applied by the
    /// process thread before the plugin's next run (before any run, when no runner runs it yet).
    /// - Throws: a usage error for an unknown symbol or a value out of range; a runtime error
    ///   when the queue of changes is full (the process thread has not run for a while).
    public func set(_ symbol: String, to value: Float) throws(PluginError) {
        let port = try instance.checkedControlPort(symbol, value: value)
        guard changes.takeUnretainedValue().set(port: port, to: value) else {
            throw PluginError(.runtime, "the change of \(symbol) could not be queued: the process thread has not run for a while")
        }
        requested[symbol] = value
        queued += 1
    }

    /// Bypasses the node from its next run, or runs it again: through the plugin's `lv2:enabled`
    /// port when it has one (0: the plugin bypasses itself, keeping its latency, as LV2 asks),
    /// else through the runner's delay line of the node's latency (``bypass``).
    /// - Throws: a runtime error when the change cannot be queued (``set(_:to:)``).
    public func setBypassed(_ on: Bool) throws(PluginError) {
        if let enabled = instance.description.enabledPort {
            try set(enabled, to: on ? 0 : 1)
        } else {
            bypass.isOn = on
        }
    }

    /// Whether the node is bypassed: its `lv2:enabled` port at 0 (as last set), or the runner's
    /// delay line on.
    public var isBypassed: Bool {
        if let enabled = instance.description.enabledPort { return (value(of: enabled) ?? 1) < 0.5 }
        return bypass.isOn
    }

    /// A control's value: for an input, the value last set (``set(_:to:)``) while that is not
    /// yet applied, else the value the plugin reads (which a MIDI controller may have moved
    /// since); for an output, the value the plugin wrote in its latest run. Floats written by
    /// the process thread, read whole. Nil for no control port `symbol`.
    public func value(of symbol: String) -> Float? {
        if applied.load(ordering: .acquiring) < queued, let pending = requested[symbol] { return pending }
        requested = [:]
        return instance.control(symbol)
    }

    private static let connectEntry: @convention(c) (UnsafeMutableRawPointer, Int, UnsafeMutablePointer<Float>) -> Void = { context, port, buffer in
        Unmanaged<LV2GraphNode>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.connect(port, buffer) }
    }

    private static let runEntry: @convention(c) (UnsafeMutableRawPointer, Int) -> Void = { context, frames in
        Unmanaged<LV2GraphNode>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.run(frames) }
    }

    /// Keeps the runner's events for the MIDI input until the next run. Real-time safe.
    private static let midiInputEntry: @convention(c) (UnsafeMutableRawPointer, Int, UnsafeRawPointer?, Int) -> Void = { context, _, events, count in
        Unmanaged<LV2GraphNode>.fromOpaque(context)._withUnsafeGuaranteedRef {
            $0.pendingMIDI = events
            $0.pendingMIDICount = count
        }
    }

    /// The latest run's events of MIDI output `port`. Real-time safe.
    private static let midiOutputEntry: @convention(c) (UnsafeMutableRawPointer, Int, UnsafeMutablePointer<Int>) -> UnsafeRawPointer? = { context, port, count in
        Unmanaged<LV2GraphNode>.fromOpaque(context)._withUnsafeGuaranteedRef { node in
            guard port < node.ports.midiOutputs.count else {
                count.pointee = 0
                return nil
            }
            count.pointee = node.outputCounts[port]
            return UnsafeRawPointer(node.outputEvents + port * midiOutputCapacity)
        }
    }

    /// Connects signal port `port` (inputs, then outputs, as ``node`` lists them) to `buffer`.
    /// - Important: Real-time safe.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    private func connect(_ port: Int, _ buffer: UnsafeMutablePointer<Float>) {
        let ports = self.ports
        let inputs = ports.audioInputs, outputs = ports.audioOutputs
        guard port < inputs.count + outputs.count else { return }
        let index = port < inputs.count ? inputs[port] : outputs[port - inputs.count]
        // The plugin's connect_port: opaque to the checks, real-time safe by LV2's contract.
        _unsafePerformance { ports.connect(ports.handle, index, UnsafeMutableRawPointer(buffer)) }
    }

    /// Runs `frames` (at most the instance's maximum block) on the connected buffers.
    /// - Important: Real-time safe.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    private func run(_ frames: Int) {
        let ports = self.ports
        let changed = changes._withUnsafeGuaranteedRef { $0.apply(to: ports.controls, portCount: ports.portCount) }
        if changed > 0 { applied.store(applied.load(ordering: .relaxed) &+ changed, ordering: .releasing) }
        ports.readySequences()
        if let input = ports.positionInput, let transport {
            let (rolling, frame, beats) = transport._withUnsafeGuaranteedRef { ($0.rolling.load(ordering: .relaxed), $0.frame.load(ordering: .relaxed), $0.beats) }
            position.tell(input, capacity: ports.sequenceCapacity, types: ports.positionTypes, rolling: rolling, frame: frame, frames: frames, beats: beats)
        }
        let count = min(frames, ports.maximumBlock)
        var dropped = 0
        if let input = ports.midiInput, let pending = pendingMIDI {
            let events = pending.assumingMemoryBound(to: MIDIEvent.self)
            for index in 0 ..< pendingMIDICount {
                let event = events[index]
                guard Int(event.frame) < count, let bytes = event.bytes else { continue }
                if !AtomSequence.append(input, capacity: ports.sequenceCapacity, frame: Int64(event.frame), type: ports.midiEventType,
                                        bytes: bytes, size: Int(event.size)) {
                    dropped += 1
                }
            }
        }
        pendingMIDI = nil
        pendingMIDICount = 0
        // The plugin's own run: opaque to the checks, real-time safe by LV2's contract.
        _unsafePerformance { ports.run(ports.runHandle, UInt32(count)) }
        // Its MIDI outputs' events, for the runner to pass on (bytes left in its buffers).
        let lists = outputEvents, counts = outputCounts, midiType = ports.midiEventType, capacity = Self.midiOutputCapacity
        for port in 0 ..< ports.midiOutputs.count {
            var written = 0
            AtomSequence.forEachEvent(ports.midiOutputs[port], capacity: ports.sequenceCapacity, type: ports.sequenceType) { frame, type, bytes, size in
                guard type == midiType, size > 0 else { return }
                guard written < capacity else {
                    dropped += 1
                    return
                }
                lists[port * capacity + written] = MIDIEvent(frame: UInt32(min(max(frame, 0), Int64(count - 1))), size: UInt32(size), bytes: bytes)
                written += 1
            }
            counts[port] = written
        }
        if dropped > 0 { droppedMIDIEvents.store(droppedMIDIEvents.load(ordering: .relaxed) &+ dropped, ordering: .relaxed) }
    }
}
