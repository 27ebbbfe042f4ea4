import AQCore
import AQGraph
import Synchronization

/// A plugin instance (LV2, or LADSPA: any ``PluginInstance``) as a node of a plugin graph (``PluginGraph``): its audio ports by
/// symbol, the latency it reports, and the kernel a ``GraphRunner`` runs it through.
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
    }

    deinit {
        changes.release()
        transport?.release()
    }

    /// Tells the plugin (when it takes `time:Position`) where `transport` is at each run. Before
    /// any runner runs the node.
    public func follow(_ transport: GraphTransport) {
        self.transport?.release()
        self.transport = .passRetained(transport)
    }

    /// The node as the graph sees it: audio inputs and outputs by symbol, the latency reported
    /// after the instance's latest run.
    public var node: GraphNode {
        GraphNode(id: id, inputs: instance.description.audioInputs.map(\.symbol), outputs: instance.description.audioOutputs.map(\.symbol),
                  latency: instance.latencyFrames)
    }

    /// What the runner calls: port `k` is the k-th audio input, then the audio outputs.
    public var kernel: GraphNodeKernel {
        GraphNodeKernel(context: Unmanaged.passUnretained(self).toOpaque(), connect: Self.connectEntry, run: Self.runEntry, bypass: bypass)
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

    /// Connects audio port `port` (inputs, then outputs) to `buffer`.
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
        let count = changes._withUnsafeGuaranteedRef { $0.apply(to: ports.controls, portCount: ports.portCount) }
        if count > 0 { applied.store(applied.load(ordering: .relaxed) &+ count, ordering: .releasing) }
        ports.readySequences()
        if let input = ports.positionInput, let transport {
            let (rolling, frame, beats) = transport._withUnsafeGuaranteedRef { ($0.rolling.load(ordering: .relaxed), $0.frame.load(ordering: .relaxed), $0.beats) }
            position.tell(input, capacity: ports.sequenceCapacity, types: ports.positionTypes, rolling: rolling, frame: frame, frames: frames, beats: beats)
        }
        // The plugin's own run: opaque to the checks, real-time safe by LV2's contract.
        _unsafePerformance { ports.run(ports.runHandle, UInt32(min(frames, ports.maximumBlock))) }
    }
}
