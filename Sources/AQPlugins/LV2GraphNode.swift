import AQCore
import AQGraph

/// An LV2 plugin instance as a node of a plugin graph (``PluginGraph``): its audio ports by
/// symbol, the latency it reports, and the kernel a ``GraphRunner`` runs it through.
///
/// The kernel goes through the instance's ``PluginHostPorts`` (its C functions and tables, as the
/// live host's process thread does): connecting a port, emptying the event inputs and readying
/// the event outputs, running (with the worker's responses after each run): real-time safe, on
/// the process thread every cycle.
///
/// Threads: made, and its ``node`` read, off the process thread; the kernel's `run` on it. The
/// node must outlive every runner made with its kernel.
public final class LV2GraphNode: @unchecked Sendable {
    public let id: String
    public let instance: LV2PluginInstance
    private let ports: PluginHostPorts

    /// Primes the instance once on silence, as the live host does (its latency port reports
    /// only after a run).
    /// - Throws: a plugin that runs only fixed blocks (not in graphs yet).
    public init(id: String, instance: LV2PluginInstance) throws(PluginError) {
        guard instance.fixedBlock == nil else {
            throw PluginError(.usage, "'\(instance.description.name)' runs only blocks of \(instance.fixedBlock ?? 0) frames, which a graph cannot give it yet")
        }
        self.id = id
        self.instance = instance
        instance.run(frames: instance.primingFrames)
        ports = instance.hostPorts()
    }

    /// The node as the graph sees it: audio inputs and outputs by symbol, the latency reported
    /// after the instance's latest run.
    public var node: GraphNode {
        GraphNode(id: id, inputs: instance.description.audioInputs.map(\.symbol), outputs: instance.description.audioOutputs.map(\.symbol),
                  latency: instance.latencyFrames)
    }

    /// What the runner calls: port `k` is the k-th audio input, then the audio outputs.
    public var kernel: GraphNodeKernel {
        GraphNodeKernel(context: Unmanaged.passUnretained(self).toOpaque(), connect: Self.connectEntry, run: Self.runEntry)
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
        for index in 0 ..< ports.eventInputs.count { AtomSequence.clear(ports.eventInputs[index], type: ports.sequenceType) }
        for index in 0 ..< ports.eventOutputs.count {
            AtomSequence.prepareOutput(ports.eventOutputs[index], capacity: ports.sequenceCapacity, chunkType: ports.chunkType)
        }
        // The plugin's own run: opaque to the checks, real-time safe by LV2's contract.
        _unsafePerformance { ports.run(ports.runHandle, UInt32(min(frames, ports.maximumBlock))) }
    }
}
