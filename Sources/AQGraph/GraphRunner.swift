import AQCore
import Synchronization

/// A plugin instance as the graph runs it, whatever its format: `connect` gives it the buffer
/// of each of its audio and CV ports (inputs, then outputs, in the node's port order) and `run`
/// processes that many frames in them; `midi` passes events to and from its MIDI ports. Both are called on the process thread, every cycle
/// (connect, then run: so a runner built for an edited graph never touches an instance another
/// runner is running), and must be real-time safe. C function pointers over an unretained context, so the process thread calls
/// them without a reference count.
public struct GraphNodeKernel {
    public let context: UnsafeMutableRawPointer
    public let connect: @convention(c) (_ context: UnsafeMutableRawPointer, _ port: Int, _ buffer: UnsafeMutablePointer<Float>) -> Void
    public let run: @convention(c) (_ context: UnsafeMutableRawPointer, _ frames: Int) -> Void

    /// The node's bypass switch, if it can be bypassed by the runner (see ``GraphBypass``).
    public let bypass: GraphBypass?
    /// Its MIDI ports' functions, for a node with MIDI ports.
    public let midi: GraphNodeMIDI?

    public init(context: UnsafeMutableRawPointer,
                connect: @escaping @convention(c) (UnsafeMutableRawPointer, Int, UnsafeMutablePointer<Float>) -> Void,
                run: @escaping @convention(c) (UnsafeMutableRawPointer, Int) -> Void, bypass: GraphBypass? = nil, midi: GraphNodeMIDI? = nil) {
        self.context = context
        self.connect = connect
        self.run = run
        self.bypass = bypass
        self.midi = midi
    }
}

/// A node's bypass switch, kept by the node so it outlives the runners that read it: while on,
/// the runner does not run the node and passes its k-th input to its k-th output delayed by the
/// node's latency (so every path keeps its compensation; outputs past the inputs are silent).
/// Each input also goes through that delay while the switch is off, so turning it on or off
/// mid-stream continues the signal without a gap.
///
/// Threads: set from any thread; read by the process thread at each cycle's start of the node.
public final class GraphBypass: Sendable {
    private let on = Atomic<Bool>(false)
    public init() {}

    public var isOn: Bool {
        get { on.load(ordering: .relaxed) }
        set { on.store(newValue, ordering: .relaxed) }
    }
}

/// A MIDI controller bound to a plugin's control: control change `controller` (0 ... 127) on
/// `channel` (0 ... 15) with value v sets `*target` to `minimum + (maximum - minimum) × v / 127`
/// at the start of the cycle it arrives in (the last of a cycle's changes wins). `target` is the
/// float the plugin reads the control from, written only by the process thread while it runs.
public struct GraphControlBinding {
    public let channel: UInt8
    public let controller: UInt8
    public let minimum: Float
    public let maximum: Float
    public let target: UnsafeMutablePointer<Float>

    public init(channel: UInt8, controller: UInt8, minimum: Float, maximum: Float, target: UnsafeMutablePointer<Float>) {
        self.channel = channel
        self.controller = controller
        self.minimum = minimum
        self.maximum = maximum
        self.target = target
    }
}

/// MIDI control changes (status 0xB0 ... 0xBF) in a cycle's events. Real-time safe.
public enum MIDIControlChanges {
    /// Calls `body(channel, controller, value)` for each, in order.
    @inline(__always)
    public static func forEach(in list: MIDIEventList, _ body: (UInt8, UInt8, UInt8) -> Void) {
        guard let events = list.events else { return }
        for index in 0 ..< list.count {
            let event = events[index]
            guard event.size >= 3, let bytes = event.bytes, bytes[0] & 0xF0 == 0xB0 else { continue }
            body(bytes[0] & 0x0F, bytes[1] & 0x7F, bytes[2] & 0x7F)
        }
    }
}

/// Runs a ``GraphPlan`` cycle by cycle: for each node in order, sums what feeds each of its
/// inputs (each source through its compensating delay) and runs it; then sums the graph's
/// outputs. Every buffer and delay line is made at init, so ``process(inputs:outputs:frames:midi:)``
/// allocates nothing, takes no lock and makes no system call.
///
/// Threads: made and released off the process thread (a host swaps a new runner in at a cycle
/// boundary); ``process(inputs:outputs:frames:midi:)`` on one thread at a time, the process thread.
public final class GraphRunner: @unchecked Sendable {
    /// The most frames one ``process(inputs:outputs:frames:midi:)`` call may ask for.
    public let maximumFrames: Int
    public let plan: GraphPlan

    /// A source summed into a destination: a graph input (`graphInput` ≥ 0) or a buffer,
    /// through a delay line of `delay` frames (none for 0) that holds the last `capacity`
    /// frames of the source, `write` being where the next goes.
    private struct Tap {
        var graphInput: Int
        var buffer: UnsafeMutablePointer<Float>?
        var delay: Int
        var line: UnsafeMutablePointer<Float>?
        var capacity: Int
        var write: Int
    }

    /// A destination (a plugin input's buffer, or graph output `graphOutput` when `buffer` is
    /// nil) and its taps, `tapCount` of them from `firstTap`.
    private struct Sum {
        var buffer: UnsafeMutablePointer<Float>?
        var graphOutput: Int
        var firstTap: Int
        var tapCount: Int
    }

    /// A node to run after summing its inputs, `sumCount` sums from `firstSum`; its ports'
    /// buffers are `portCount` of ``portBuffers`` from `firstPort` (its `inputCount` inputs, then
    /// its outputs). With a bypass switch (an unretained ``GraphBypass``), `inputCount` of
    /// ``bypassTaps`` from `firstBypassTap` delay its inputs for its outputs.
    private struct Step {
        var firstSum: Int
        var sumCount: Int
        var firstPort: Int
        var portCount: Int
        var inputCount: Int
        var context: UnsafeMutableRawPointer
        var connect: @convention(c) (UnsafeMutableRawPointer, Int, UnsafeMutablePointer<Float>) -> Void
        var run: @convention(c) (UnsafeMutableRawPointer, Int) -> Void
        var bypass: UnsafeRawPointer?
        var firstBypassTap: Int
    }

    // Flat tables, made at init and only read (taps' write positions updated) while running, so
    // the process thread touches no Swift array and no reference count.
    private let taps: UnsafeMutableBufferPointer<Tap>
    private let bypassTaps: UnsafeMutableBufferPointer<Tap>
    private let sums: UnsafeMutableBufferPointer<Sum>
    private let steps: UnsafeMutableBufferPointer<Step>
    private let portBuffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>
    /// The graph outputs' sums, one per output channel, from this index of ``sums``.
    private let firstOutputSum: Int
    private let buffers: [UnsafeMutablePointer<Float>]
    private let bindings: UnsafeMutableBufferPointer<GraphControlBinding>
    /// Keeps the nodes' bypass switches that ``steps`` point to.
    private let switches: [GraphBypass]
    /// Retained here (released in deinit), unmanaged so the process thread reaches it without
    /// reference counting.
    private let router: Unmanaged<GraphMIDIRouter>
    /// MIDI events that found no room (1,024 a destination a cycle). Any thread.
    public let droppedMIDIEvents = Atomic<Int>(0)

    /// Makes every port buffer and delay line of `plan` (frames at most `maximumFrames` a call).
    /// Touches no kernel: they are connected and run by ``process(inputs:outputs:frames:midi:)``.
    /// `bindings`: MIDI controllers that set plugins' controls (their targets must outlive the runner).
    /// - Throws: a node of the graph without a kernel.
    public init(graph: PluginGraph, plan: GraphPlan, kernels: [String: GraphNodeKernel], maximumFrames: Int,
                bindings: [GraphControlBinding] = []) throws(GraphError) {
        precondition(maximumFrames > 0, "a runner needs room for at least one frame")
        if let missing = graph.nodes.first(where: { kernels[$0.id] == nil }) {
            throw GraphError(.notFound, "node '\(missing.id)' has no plugin instance to run")
        }
        self.maximumFrames = maximumFrames
        self.plan = plan
        var made: [UnsafeMutablePointer<Float>] = []
        func zeros(_ count: Int) -> UnsafeMutablePointer<Float> {
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: count)
            buffer.initialize(repeating: 0, count: count)
            made.append(buffer)
            return buffer
        }
        var bufferOf: [GraphEndpoint: UnsafeMutablePointer<Float>] = [:]
        for node in graph.nodes {
            for port in node.inputs + node.outputs { bufferOf[.plugin(node: node.id, port: port)] = zeros(maximumFrames) }
        }
        var portList: [UnsafeMutablePointer<Float>] = []
        var tapList: [Tap] = []
        func sum(_ destination: GraphEndpoint) -> Sum {
            let first = tapList.count
            for feed in plan.feeds[destination] ?? [] {
                var tap = Tap(graphInput: -1, buffer: nil, delay: feed.delay, line: nil, capacity: 0, write: 0)
                if case .graphInput(let channel) = feed.source { tap.graphInput = channel } else { tap.buffer = bufferOf[feed.source] }
                if feed.delay > 0 {
                    tap.capacity = feed.delay + maximumFrames
                    tap.line = zeros(tap.capacity)
                }
                tapList.append(tap)
            }
            let output: Int = if case .graphOutput(let channel) = destination { channel } else { -1 }
            return Sum(buffer: output < 0 ? bufferOf[destination] : nil, graphOutput: output, firstTap: first, tapCount: tapList.count - first)
        }
        var sumList: [Sum] = []
        var stepList: [Step] = []
        var bypassList: [Tap] = []
        var switches: [GraphBypass] = []
        for id in plan.order {
            let node = graph.node(id)!
            let kernel = kernels[id]!
            let first = sumList.count, firstPort = portList.count
            sumList += node.inputs.map { sum(.plugin(node: id, port: $0)) }
            portList += (node.inputs + node.outputs).map { bufferOf[.plugin(node: id, port: $0)]! }
            var step = Step(firstSum: first, sumCount: node.inputs.count, firstPort: firstPort, portCount: portList.count - firstPort,
                            inputCount: node.inputs.count, context: kernel.context, connect: kernel.connect, run: kernel.run,
                            bypass: nil, firstBypassTap: bypassList.count)
            if let bypass = kernel.bypass {
                switches.append(bypass)
                step.bypass = UnsafeRawPointer(Unmanaged.passUnretained(bypass).toOpaque())
                for port in node.inputs {
                    var tap = Tap(graphInput: -1, buffer: bufferOf[.plugin(node: id, port: port)], delay: node.latency, line: nil, capacity: 0, write: 0)
                    if node.latency > 0 {
                        tap.capacity = node.latency + maximumFrames
                        tap.line = zeros(tap.capacity)
                    }
                    bypassList.append(tap)
                }
            }
            stepList.append(step)
        }
        firstOutputSum = sumList.count
        sumList += (0 ..< graph.outputCount).map { sum(.graphOutput($0)) }
        taps = .allocate(capacity: tapList.count)
        _ = taps.initialize(from: tapList)
        bypassTaps = .allocate(capacity: bypassList.count)
        _ = bypassTaps.initialize(from: bypassList)
        self.bindings = .allocate(capacity: bindings.count)
        _ = self.bindings.initialize(from: bindings)
        self.switches = switches
        sums = .allocate(capacity: sumList.count)
        _ = sums.initialize(from: sumList)
        steps = .allocate(capacity: stepList.count)
        _ = steps.initialize(from: stepList)
        portBuffers = .allocate(capacity: portList.count)
        _ = portBuffers.initialize(from: portList)
        buffers = made
        router = .passRetained(GraphMIDIRouter(graph: graph, plan: plan, kernels: kernels))
    }

    deinit {
        buffers.forEach { $0.deallocate() }
        taps.deallocate()
        bypassTaps.deallocate()
        bindings.deallocate()
        sums.deallocate()
        steps.deallocate()
        portBuffers.deallocate()
        router.release()
    }

    /// Runs one cycle of `frames` (at most ``maximumFrames``): the graph's inputs in `inputs` (one
    /// buffer per input channel), its outputs written into `outputs` (every sample; silence for
    /// an output nothing feeds); first, the control changes in `midi` (the graph's MIDI input)
    /// set the controls bound to them. `midi` goes where `midi_in` is connected; what is
    /// connected to `midi_out` goes into `midiOutput` (when given).
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func process(inputs: UnsafeBufferPointer<UnsafePointer<Float>>, outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frames: Int,
                        midi: MIDIEventList = MIDIEventList(events: nil, count: 0), midiOutput: MIDIOutputList? = nil) {
        let frames = min(frames, maximumFrames)
        if bindings.count > 0 {
            let bindings = self.bindings
            MIDIControlChanges.forEach(in: midi) { channel, controller, value in
                for index in 0 ..< bindings.count where bindings[index].channel == channel && bindings[index].controller == controller {
                    let binding = bindings[index]
                    binding.target.pointee = binding.minimum + (binding.maximum - binding.minimum) * Float(value) / 127
                }
            }
        }
        var dropped = 0
        router._withUnsafeGuaranteedRef { if !$0.isEmpty { $0.beginCycle(frames: frames) } }
        for index in 0 ..< steps.count {
            let step = steps[index]
            for sum in step.firstSum ..< step.firstSum + step.sumCount {
                mix(sum, into: sums[sum].buffer!, inputs: inputs, frames: frames)
            }
            let bypassed = step.bypass.map { Unmanaged<GraphBypass>.fromOpaque($0)._withUnsafeGuaranteedRef { $0.isOn } } ?? false
            dropped += router._withUnsafeGuaranteedRef { $0.isEmpty ? 0 : $0.deliver(step: index, midi: midi, bypassed: bypassed) }
            if step.bypass != nil {
                // Every input through its delay: into the output of the same number when bypassed.
                let outputCount = step.portCount - step.inputCount
                for port in 0 ..< step.inputCount {
                    let input = UnsafePointer(portBuffers[step.firstPort + port])
                    let output = bypassed && port < outputCount ? portBuffers[step.firstPort + step.inputCount + port] : nil
                    output?.update(repeating: 0, count: frames)
                    delay(in: bypassTaps, step.firstBypassTap + port, input, adding: output, frames: frames)
                }
                if bypassed {
                    for port in min(step.inputCount, outputCount) ..< outputCount {
                        portBuffers[step.firstPort + step.inputCount + port].update(repeating: 0, count: frames)
                    }
                    continue
                }
            }
            // The plugin's own code, which the performance annotations cannot see into:
            // real-time safe by GraphNodeKernel's contract.
            for port in 0 ..< step.portCount {
                let buffer = portBuffers[step.firstPort + port]
                _unsafePerformance { step.connect(step.context, port, buffer) }
            }
            _unsafePerformance { step.run(step.context, frames) }
        }
        for index in firstOutputSum ..< sums.count {
            let channel = sums[index].graphOutput
            if channel < outputs.count { mix(index, into: outputs[channel], inputs: inputs, frames: frames) }
        }
        if let midiOutput { dropped += router._withUnsafeGuaranteedRef { $0.write(midi: midi, into: midiOutput) } }
        if dropped > 0 { droppedMIDIEvents.store(droppedMIDIEvents.load(ordering: .relaxed) &+ dropped, ordering: .relaxed) }
    }

    /// Sets `destination`'s first `frames` samples to the sum of sum `index`'s taps, each through
    /// its delay line.
    @inline(__always)
    private func mix(_ index: Int, into destination: UnsafeMutablePointer<Float>, inputs: UnsafeBufferPointer<UnsafePointer<Float>>, frames: Int) {
        destination.update(repeating: 0, count: frames)
        let first = sums[index].firstTap
        for tap in first ..< first + sums[index].tapCount {
            let source: UnsafePointer<Float>
            if let buffer = taps[tap].buffer {
                source = UnsafePointer(buffer)
            } else if taps[tap].graphInput < inputs.count {
                source = inputs[taps[tap].graphInput]
            } else {
                continue
            }
            delay(in: taps, tap, source, adding: destination, frames: frames)
        }
    }

    /// Puts `frames` of `source` through tap `tap`'s delay line (of `table`), adding what comes
    /// out into `destination` (nil: only the line is fed).
    @inline(__always)
    private func delay(in table: UnsafeMutableBufferPointer<Tap>, _ tap: Int, _ source: UnsafePointer<Float>,
                       adding destination: UnsafeMutablePointer<Float>?, frames: Int) {
        guard let line = table[tap].line else {
            if let destination { for frame in 0 ..< frames { destination[frame] += source[frame] } }
            return
        }
        // Each frame goes into the line, and the one `delay` frames older comes out.
        let capacity = table[tap].capacity, delay = table[tap].delay
        var write = table[tap].write
        var read = write >= delay ? write - delay : write + capacity - delay
        for frame in 0 ..< frames {
            line[write] = source[frame]
            if let destination { destination[frame] += line[read] }
            write += 1
            if write == capacity { write = 0 }
            read += 1
            if read == capacity { read = 0 }
        }
        table[tap].write = write
    }
}
