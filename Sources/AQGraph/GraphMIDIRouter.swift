import AQCore

/// What a node's kernel offers for MIDI: `input(context, port, events, count)` hands MIDI input
/// `port` (as the node lists them) the cycle's events for it (`count` ``MIDIEvent``s, frames
/// within the cycle, valid until the node's run returns), before its run; `output(context, port,
/// count)` gives, after its run, the events MIDI output `port` wrote in it (its count through
/// `count`), valid until the node's next run. Real-time safe; the process thread.
public struct GraphNodeMIDI {
    public let input: @convention(c) (_ context: UnsafeMutableRawPointer, _ port: Int, _ events: UnsafeRawPointer?, _ count: Int) -> Void
    public let output: @convention(c) (_ context: UnsafeMutableRawPointer, _ port: Int, _ count: UnsafeMutablePointer<Int>) -> UnsafeRawPointer?

    public init(input: @escaping @convention(c) (UnsafeMutableRawPointer, Int, UnsafeRawPointer?, Int) -> Void,
                output: @escaping @convention(c) (UnsafeMutableRawPointer, Int, UnsafeMutablePointer<Int>) -> UnsafeRawPointer?) {
        self.input = input
        self.output = output
    }
}

/// The MIDI half of a ``GraphRunner``: for each MIDI destination (a node's MIDI input,
/// `midi_out`) the events of its sources (`midi_in`, nodes' MIDI outputs) merged in frame order
/// (stable: among equal frames, in the order connected) into room made at init (1,024 events a
/// destination a cycle; more are dropped and counted). A source the plan delays (plugin delay
/// compensation) passes through a ``MIDIDelayLine``; otherwise events pass on in the cycle they
/// were made. A bypassed node passes its k-th MIDI input to its k-th MIDI output, as late as its
/// latency (as its audio is).
///
/// Threads: made off the process thread; ``deliver(step:midi:bypassed:)`` and
/// ``write(midi:into:)`` on the process thread, real-time safe.
final class GraphMIDIRouter {
    /// A source: `step` -1 for the graph's MIDI input, else the run-order index of the node
    /// whose MIDI output `port` it is; held back `delay` frames, and `bypassDelay` more while
    /// that node is bypassed, through delay line `line` (-1: none, both are 0).
    private struct Source {
        var step: Int
        var port: Int
        var delay = 0
        var bypassDelay = 0
        var line = -1
    }

    /// A destination's merged events of this cycle: `count` in `events`, from sources
    /// `firstSource ..< firstSource + sourceCount`.
    private struct Merge {
        var firstSource: Int
        var sourceCount: Int
        var events: UnsafeMutablePointer<MIDIEvent>
        var count: Int
    }

    /// A node in run order: its kernel's context and MIDI functions (nil for a node without
    /// MIDI ports), its MIDI inputs' merges from `firstMerge`, and whether it ran this cycle.
    private struct Node {
        var context: UnsafeMutableRawPointer
        var midi: GraphNodeMIDI?
        var firstMerge: Int
        var inputCount: Int
        var ran: Bool
    }

    static let capacity = 1024

    private let sources: UnsafeMutableBufferPointer<Source>
    private let merges: UnsafeMutableBufferPointer<Merge>
    private let nodes: UnsafeMutableBufferPointer<Node>
    private let storage: UnsafeMutablePointer<MIDIEvent>
    private let lines: UnsafeMutableBufferPointer<MIDIDelayLine>
    /// The current cycle: its first frame on the router's clock (frames since the first cycle)
    /// and its length. Process thread.
    private var cycleStart: Int64 = 0
    private var cycleFrames = 0
    /// The merge of `midi_out`, or -1 when nothing is connected to it.
    private let outputMerge: Int
    /// Whether any MIDI connection exists (else the runner skips MIDI entirely).
    let isEmpty: Bool

    init(graph: PluginGraph, plan: GraphPlan, kernels: [String: GraphNodeKernel]) {
        let stepOf = Dictionary(uniqueKeysWithValues: plan.order.enumerated().map { ($1, $0) })
        var sourceList: [Source] = []
        var mergeList: [(first: Int, count: Int)] = []
        var lineCount = 0
        func merge(_ destination: GraphEndpoint) {
            let first = sourceList.count
            for feed in plan.midiFeeds[destination] ?? [] {
                var source: Source
                switch feed.source {
                case .plugin(let id, let port):
                    guard let step = stepOf[id], let node = graph.node(id), let index = node.midiOutputs.firstIndex(of: port) else { continue }
                    source = Source(step: step, port: index)
                    // Bypassed, a node passes its MIDI through as late as its audio: its latency.
                    if kernels[id]?.bypass != nil { source.bypassDelay = node.latency }
                default:
                    source = Source(step: -1, port: 0)
                }
                source.delay = feed.delay
                if source.delay > 0 || source.bypassDelay > 0 {
                    source.line = lineCount
                    lineCount += 1
                }
                sourceList.append(source)
            }
            mergeList.append((first, sourceList.count - first))
        }
        var nodeList: [Node] = []
        for id in plan.order {
            let node = graph.node(id)!
            let kernel = kernels[id]!
            nodeList.append(Node(context: kernel.context, midi: kernel.midi, firstMerge: mergeList.count, inputCount: node.midiInputs.count, ran: false))
            for port in node.midiInputs { merge(.plugin(node: id, port: port)) }
        }
        outputMerge = plan.midiFeeds[.midiOutput] == nil ? -1 : mergeList.count
        if outputMerge >= 0 { merge(.midiOutput) }
        isEmpty = plan.midiFeeds.isEmpty
        storage = .allocate(capacity: max(1, mergeList.count * Self.capacity))
        sources = .allocate(capacity: sourceList.count)
        _ = sources.initialize(from: sourceList)
        merges = .allocate(capacity: mergeList.count)
        for (index, merge) in mergeList.enumerated() {
            (merges.baseAddress! + index).initialize(to: Merge(firstSource: merge.first, sourceCount: merge.count,
                                                               events: storage + index * Self.capacity, count: 0))
        }
        nodes = .allocate(capacity: nodeList.count)
        _ = nodes.initialize(from: nodeList)
        lines = .allocate(capacity: lineCount)
        for index in 0 ..< lineCount { (lines.baseAddress! + index).initialize(to: MIDIDelayLine()) }
    }

    deinit {
        lines.forEach { $0.free() }
        lines.deallocate()
        storage.deallocate()
        sources.deallocate()
        merges.deallocate()
        nodes.deallocate()
    }

    /// Starts a cycle of `frames`: the delay lines' clock moves on by the last one's length.
    @inline(__always)
    func beginCycle(frames: Int) {
        cycleStart += Int64(cycleFrames)
        cycleFrames = frames
    }

    /// Before node `step` runs (or is passed by, `bypassed`): merges each of its MIDI inputs
    /// and, when it runs, hands them to it. `midi` is the graph's MIDI input this cycle.
    /// - Returns: events dropped for want of room.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    func deliver(step: Int, midi: MIDIEventList, bypassed: Bool) -> Int {
        let node = nodes[step]
        var dropped = 0
        for port in 0 ..< node.inputCount {
            dropped += fill(node.firstMerge + port, midi: midi)
            if !bypassed, let kernel = node.midi {
                let merged = merges[node.firstMerge + port]
                // The plugin's side: opaque to the checks, real-time safe by GraphNodeMIDI's contract.
                _unsafePerformance { kernel.input(node.context, port, UnsafeRawPointer(merged.events), merged.count) }
            }
        }
        nodes[step].ran = !bypassed
        return dropped
    }

    /// After every node: merges what feeds `midi_out` into `list` (the driver's MIDI output).
    /// - Returns: events dropped for want of room.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    func write(midi: MIDIEventList, into list: MIDIOutputList) -> Int {
        guard outputMerge >= 0 else { return 0 }
        let dropped = fill(outputMerge, midi: midi)
        let merged = merges[outputMerge]
        let count = min(merged.count, list.capacity)
        for index in 0 ..< count { list.events[index] = merged.events[index] }
        list.count.pointee = count
        return dropped + merged.count - count
    }

    /// Merges merge `index`'s sources into its room, in frame order; returns events dropped.
    @inline(__always)
    private func fill(_ index: Int, midi: MIDIEventList) -> Int {
        let merge = merges[index]
        var count = 0, dropped = 0
        for slot in merge.firstSource ..< merge.firstSource + merge.sourceCount {
            let source = sources[slot]
            var (events, available) = events(of: source, midi: midi)
            if source.line >= 0 {
                // (Not `&&`: its autoclosure would retain self on the process thread.)
                var bypassed = false
                if source.step >= 0 { bypassed = !nodes[source.step].ran }
                let passed = lines[source.line].pass(events, count: available, delay: source.delay + (bypassed ? source.bypassDelay : 0),
                                                     cycleStart: cycleStart, frames: cycleFrames)
                (events, available) = (passed.events, passed.count)
                dropped += passed.dropped
            }
            guard let events else { continue }
            for event in 0 ..< available {
                if count < Self.capacity {
                    // Insertion in frame order, after the events of the same frame already in.
                    var at = count
                    while at > 0 && merge.events[at - 1].frame > events[event].frame {
                        merge.events[at] = merge.events[at - 1]
                        at -= 1
                    }
                    merge.events[at] = events[event]
                    count += 1
                } else {
                    dropped += 1
                }
            }
        }
        merges[index].count = count
        return dropped
    }

    /// The events `source` has this cycle.
    @inline(__always)
    private func events(of source: Source, midi: MIDIEventList) -> (UnsafePointer<MIDIEvent>?, Int) {
        guard source.step >= 0 else { return (midi.events, midi.count) }
        let node = nodes[source.step]
        if node.ran {
            guard let kernel = node.midi else { return (nil, 0) }
            var count = 0
            let events = _unsafePerformance { kernel.output(node.context, source.port, &count) }
            return (events?.assumingMemoryBound(to: MIDIEvent.self), count)
        }
        // Bypassed: its MIDI input of the same number passes through.
        guard source.port < node.inputCount else { return (nil, 0) }
        let merged = merges[node.firstMerge + source.port]
        return (UnsafePointer(merged.events), merged.count)
    }
}
