/// A plugin instance as the graph runs it, whatever its format: `connect` gives it the buffer
/// of each of its audio ports (inputs, then outputs, in the node's port order) and `run`
/// processes that many frames in them. Both are called on the process thread, every cycle
/// (connect, then run: so a runner built for an edited graph never touches an instance another
/// runner is running), and must be real-time safe. C function pointers over an unretained context, so the process thread calls
/// them without a reference count.
public struct GraphNodeKernel {
    public let context: UnsafeMutableRawPointer
    public let connect: @convention(c) (_ context: UnsafeMutableRawPointer, _ port: Int, _ buffer: UnsafeMutablePointer<Float>) -> Void
    public let run: @convention(c) (_ context: UnsafeMutableRawPointer, _ frames: Int) -> Void

    public init(context: UnsafeMutableRawPointer,
                connect: @escaping @convention(c) (UnsafeMutableRawPointer, Int, UnsafeMutablePointer<Float>) -> Void,
                run: @escaping @convention(c) (UnsafeMutableRawPointer, Int) -> Void) {
        self.context = context
        self.connect = connect
        self.run = run
    }
}

/// Runs a ``GraphPlan`` cycle by cycle: for each node in order, sums what feeds each of its
/// inputs (each source through its compensating delay) and runs it; then sums the graph's
/// outputs. Every buffer and delay line is made at init, so ``process(inputs:outputs:frames:)``
/// allocates nothing, takes no lock and makes no system call.
///
/// Threads: made and released off the process thread (a host swaps a new runner in at a cycle
/// boundary); ``process(inputs:outputs:frames:)`` on one thread at a time, the process thread.
public final class GraphRunner: @unchecked Sendable {
    /// The most frames one ``process(inputs:outputs:frames:)`` call may ask for.
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
    /// buffers are `portCount` of ``portBuffers`` from `firstPort`.
    private struct Step {
        var firstSum: Int
        var sumCount: Int
        var firstPort: Int
        var portCount: Int
        var kernel: GraphNodeKernel
    }

    // Flat tables, made at init and only read (taps' write positions updated) while running, so
    // the process thread touches no Swift array and no reference count.
    private let taps: UnsafeMutableBufferPointer<Tap>
    private let sums: UnsafeMutableBufferPointer<Sum>
    private let steps: UnsafeMutableBufferPointer<Step>
    private let portBuffers: UnsafeMutableBufferPointer<UnsafeMutablePointer<Float>>
    /// The graph outputs' sums, one per output channel, from this index of ``sums``.
    private let firstOutputSum: Int
    private let buffers: [UnsafeMutablePointer<Float>]

    /// Makes every port buffer and delay line of `plan` (frames at most `maximumFrames` a call).
    /// Touches no kernel: they are connected and run by ``process(inputs:outputs:frames:)``.
    /// - Throws: a node of the graph without a kernel.
    public init(graph: PluginGraph, plan: GraphPlan, kernels: [String: GraphNodeKernel], maximumFrames: Int) throws(GraphError) {
        precondition(maximumFrames > 0, "a runner needs room for at least one frame")
        if let missing = graph.nodes.first(where: { kernels[$0.id] == nil }) {
            throw GraphError("node '\(missing.id)' has no plugin instance to run")
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
        for id in plan.order {
            let node = graph.node(id)!
            let first = sumList.count, firstPort = portList.count
            sumList += node.inputs.map { sum(.plugin(node: id, port: $0)) }
            portList += (node.inputs + node.outputs).map { bufferOf[.plugin(node: id, port: $0)]! }
            stepList.append(Step(firstSum: first, sumCount: node.inputs.count, firstPort: firstPort,
                                 portCount: portList.count - firstPort, kernel: kernels[id]!))
        }
        firstOutputSum = sumList.count
        sumList += (0 ..< graph.outputCount).map { sum(.graphOutput($0)) }
        taps = .allocate(capacity: tapList.count)
        _ = taps.initialize(from: tapList)
        sums = .allocate(capacity: sumList.count)
        _ = sums.initialize(from: sumList)
        steps = .allocate(capacity: stepList.count)
        _ = steps.initialize(from: stepList)
        portBuffers = .allocate(capacity: portList.count)
        _ = portBuffers.initialize(from: portList)
        buffers = made
    }

    deinit {
        buffers.forEach { $0.deallocate() }
        taps.deallocate()
        sums.deallocate()
        steps.deallocate()
        portBuffers.deallocate()
    }

    /// Runs one cycle of `frames` (at most ``maximumFrames``): the graph's inputs in `inputs` (one
    /// buffer per input channel), its outputs written into `outputs` (every sample; silence for
    /// an output nothing feeds).
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func process(inputs: UnsafeBufferPointer<UnsafePointer<Float>>, outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frames: Int) {
        let frames = min(frames, maximumFrames)
        for step in 0 ..< steps.count {
            let first = steps[step].firstSum
            for index in first ..< first + steps[step].sumCount {
                mix(index, into: sums[index].buffer!, inputs: inputs, frames: frames)
            }
            let kernel = steps[step].kernel
            let firstPort = steps[step].firstPort
            // The plugin's own code, which the performance annotations cannot see into:
            // real-time safe by GraphNodeKernel's contract.
            for port in 0 ..< steps[step].portCount {
                let buffer = portBuffers[firstPort + port]
                _unsafePerformance { kernel.connect(kernel.context, port, buffer) }
            }
            _unsafePerformance { kernel.run(kernel.context, frames) }
        }
        for index in firstOutputSum ..< sums.count {
            let channel = sums[index].graphOutput
            if channel < outputs.count { mix(index, into: outputs[channel], inputs: inputs, frames: frames) }
        }
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
            guard let line = taps[tap].line else {
                for frame in 0 ..< frames { destination[frame] += source[frame] }
                continue
            }
            // Each frame goes into the line, and the one `delay` frames older comes out.
            let capacity = taps[tap].capacity, delay = taps[tap].delay
            var write = taps[tap].write
            var read = write >= delay ? write - delay : write + capacity - delay
            for frame in 0 ..< frames {
                line[write] = source[frame]
                destination[frame] += line[read]
                write += 1
                if write == capacity { write = 0 }
                read += 1
                if read == capacity { read = 0 }
            }
            taps[tap].write = write
        }
    }
}
