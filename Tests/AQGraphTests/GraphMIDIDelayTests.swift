import AQCore
import AQGraph
import Testing

/// A node of the tests' own with MIDI: its audio a delay of `latency` frames (reported), its MIDI
/// input handed on to its MIDI output as it came (at the same frames), and a bypass switch.
final class MIDIPassKernel {
    let audio: TestKernel
    let bypass = GraphBypass()
    var events: UnsafeRawPointer?
    var count = 0

    init(latency: Int) { audio = TestKernel(.delay(latency)) }

    var kernel: GraphNodeKernel {
        GraphNodeKernel(context: Unmanaged.passUnretained(self).toOpaque(), connect: { context, port, buffer in
            let me = Unmanaged<MIDIPassKernel>.fromOpaque(context).takeUnretainedValue()
            me.audio.kernel.connect(me.audio.kernel.context, port, buffer)
        }, run: { context, frames in
            let me = Unmanaged<MIDIPassKernel>.fromOpaque(context).takeUnretainedValue()
            me.audio.kernel.run(me.audio.kernel.context, frames)
        }, bypass: bypass, midi: GraphNodeMIDI(input: { context, _, events, count in
            let me = Unmanaged<MIDIPassKernel>.fromOpaque(context).takeUnretainedValue()
            me.events = events
            me.count = count
        }, output: { context, _, count in
            let me = Unmanaged<MIDIPassKernel>.fromOpaque(context).takeUnretainedValue()
            count.pointee = me.count
            return me.events
        }))
    }
}

/// Plugin delay compensation of MIDI connections, run frame by frame (no server needed).
@Suite("Plugin graph runner: MIDI delayed with the audio")
struct GraphMIDIDelayTests {
    /// Runs `runner` for `total` frames in cycles of the given lengths (repeated), one silent
    /// input channel, `sent` on the graph's MIDI input (absolute frames); `bypassFrom` turns
    /// `bypass` on from the cycle holding that frame. Returns what left on the MIDI output, at
    /// absolute frames.
    static func run(_ runner: GraphRunner, total: Int, cycles: [Int], sent: [(frame: Int, bytes: [UInt8])],
                    bypass: GraphBypass? = nil, bypassFrom: Int = .max) -> [(frame: Int, bytes: [UInt8])] {
        let input = UnsafeMutablePointer<Float>.allocate(capacity: runner.maximumFrames)
        input.initialize(repeating: 0, count: runner.maximumFrames)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: runner.maximumFrames)
        let outEvents = UnsafeMutablePointer<MIDIEvent>.allocate(capacity: 1024)
        let outCount = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        let bytes = sent.map { event in
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: event.bytes.count)
            copy.initialize(from: event.bytes, count: event.bytes.count)
            return copy
        }
        defer {
            input.deallocate()
            output.deallocate()
            outEvents.deallocate()
            outCount.deallocate()
            bytes.forEach { $0.deallocate() }
        }
        var received: [(frame: Int, bytes: [UInt8])] = []
        var done = 0, next = 0
        while done < total {
            let frames = min(cycles[next % cycles.count], total - done)
            next += 1
            if done + frames > bypassFrom { bypass?.isOn = true }
            let events = sent.indices.filter { sent[$0].frame >= done && sent[$0].frame < done + frames }.map {
                MIDIEvent(frame: UInt32(sent[$0].frame - done), size: UInt32(sent[$0].bytes.count), bytes: UnsafePointer(bytes[$0]))
            }
            outCount.pointee = 0
            events.withUnsafeBufferPointer { list in
                [UnsafePointer(input)].withUnsafeBufferPointer { inputs in
                    [output].withUnsafeBufferPointer { outputs in
                        runner.process(inputs: inputs, outputs: outputs, frames: frames, midi: MIDIEventList(events: list.baseAddress, count: list.count),
                                       midiOutput: MIDIOutputList(events: outEvents, capacity: 1024, count: outCount))
                    }
                }
            }
            for index in 0 ..< outCount.pointee {
                let event = outEvents[index]
                received.append((done + Int(event.frame), Array(UnsafeBufferPointer(start: event.bytes, count: Int(event.size)))))
            }
            done += frames
        }
        return received
    }

    /// Notes, a controller and a 20-byte SysEx at frames across cycle boundaries.
    static let sent: [(frame: Int, bytes: [UInt8])] = [
        (0, [0x90, 60, 100]), (127, [0x80, 60, 0]), (128, [0xB0, 7, 99]), (300, [0x90, 62, 90]), (301, [0x80, 62, 0]),
        (1_000, [0xF0] + (1 ... 18).map { UInt8($0) } + [0xF7]), (2_500, [0x90, 64, 80]),
    ]

    @Test("midi_in -> midi_out beside a dry path and a 240-frame delay plugin: every event leaves 240 frames late with its bytes (a SysEx too), in cycles of 128, 7 and 64 frames")
    func midiOutputAlignedWithTheAudio() throws {
        var graph = try TestGraphs.dryBesideDelay()
        try graph.connect(.midiInput, to: .midiOutput)
        let plan = GraphPlan(graph)
        #expect(plan.latency == 240)
        let limiter = TestKernel(.delay(240))
        let runner = try GraphRunner(graph: graph, plan: plan, kernels: ["lim": limiter.kernel], maximumFrames: 128)
        let received = Self.run(runner, total: 4_000, cycles: [128, 7, 64], sent: Self.sent)
        #expect(received.map(\.frame) == Self.sent.map { $0.frame + 240 }, "\(received.map(\.frame))")
        #expect(received.map(\.bytes) == Self.sent.map(\.bytes))
        withExtendedLifetime(limiter) {}
    }

    @Test("a node of 100 frames that hands its MIDI on as it came: its MIDI output leaves undelayed, and from its bypass on (its audio through its 100-frame delay line) its MIDI input 100 frames late, as the audio")
    func bypassKeepsTheLatencyForMIDI() throws {
        var graph = PluginGraph(inputs: 1, outputs: 1)
        try graph.add(GraphNode(id: "fx", inputs: ["in"], outputs: ["out"], midiInputs: ["min"], midiOutputs: ["mout"], latency: 100))
        try graph.connect(.graphInput(0), to: .plugin(node: "fx", port: "in"))
        try graph.connect(.plugin(node: "fx", port: "out"), to: .graphOutput(0))
        try graph.connect(.midiInput, to: .plugin(node: "fx", port: "min"))
        try graph.connect(.plugin(node: "fx", port: "mout"), to: .midiOutput)
        let fx = MIDIPassKernel(latency: 100)
        let runner = try GraphRunner(graph: graph, plan: GraphPlan(graph), kernels: ["fx": fx.kernel], maximumFrames: 128)
        // Bypassed from the cycle that holds frame 900 on: the events from 1,000 on are 100 late.
        let received = Self.run(runner, total: 4_000, cycles: [128, 7, 64], sent: Self.sent, bypass: fx.bypass, bypassFrom: 900)
        #expect(received.map(\.frame) == Self.sent.map { $0.frame >= 1_000 ? $0.frame + 100 : $0.frame }, "\(received.map(\.frame))")
        #expect(received.map(\.bytes) == Self.sent.map(\.bytes))
        withExtendedLifetime(fx) {}
    }
}
