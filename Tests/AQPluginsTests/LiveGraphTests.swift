import AQCore
import AQGraph
import AQPlugins
import Foundation
import Testing

/// A live graph of real LV2 plugins (swh-lv2) on the offline driver, edited while it runs:
/// every sample checked around each edit, and every refusal's kind and words. No server.
@Suite("Live plugin graph, edited while it runs (offline driver, no server needed)")
struct LiveGraphTests {
    static func signal(_: Int, _ frame: Int) -> Float { sin(Float(frame) * 0.01) * 0.25 }

    /// Renders `frames` of ``signal`` (by frame from the driver's start) through the driver's one input.
    static func render(_ driver: OfflineDriver, frames: Int) -> [Float] {
        let start = Int(driver.currentFrame)
        return LiveHostOfflineTests.render(driver, channels: 1, frames: frames) { channel, frame in signal(channel, start + frame) }[0]
    }

    @Test("amp added, connected and set while running: silence before the connection; 0 dB, then +6 dB from the first frame after set (the input × powf(10, 0.3), exactly); get returns 6; removed: silence again, from the next frame")
    func editsWhileRunning() throws {
        let driver = OfflineDriver(name: "live", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.start()
        #expect(Self.render(driver, frames: 1_280).allSatisfy { $0 == 0 })
        let node = try live.add(LiveHostOfflineTests.amp)
        #expect(node.id == "1" && live.host.inputs == ["live:in_1"] && live.host.outputs == ["live:out_1"])
        try live.connect("in_1", "1:input")
        try live.connect("1:output", "out_1")
        var start = Int(driver.currentFrame)
        let unity = Self.render(driver, frames: 1_280)
        #expect(unity.indices.allSatisfy { unity[$0] == Self.signal(0, start + $0) }, "first wrong at \(String(describing: unity.indices.first { unity[$0] != Self.signal(0, start + $0) }))")
        try live.set("1", "gain", to: 6)
        #expect(try live.value("1", "gain") == 6)
        start = Int(driver.currentFrame)
        let loud = Self.render(driver, frames: 1_280)
        let coefficient = powf(10, 6 * 0.05)
        #expect(loud.indices.allSatisfy { loud[$0] == Self.signal(0, start + $0) * coefficient }, "first wrong at \(String(describing: loud.indices.first { loud[$0] != Self.signal(0, start + $0) * coefficient }))")
        try live.remove("1")
        #expect(live.graph.nodes.isEmpty && live.graph.connections.isEmpty)
        #expect(Self.render(driver, frames: 1_280).allSatisfy { $0 == 0 })
    }

    @Test("the limiter at +6 dB input gain, bypassed and then run again: 240 frames published throughout; bypassed, every frame is the input 240 frames before, exactly, from the first frame after the command; then the limiter's own again (the input × powf(10, 0.3), to within 1e-5)")
    func bypassKeepsLatency() throws {
        let driver = OfflineDriver(name: "live", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.add(LiveHostOfflineTests.limiter, id: "lim", settings: [.control(symbol: "ingain", value: 6)])
        try live.connect("in_1", "lim:in_1")
        try live.connect("lim:out_1", "out_1")
        try live.start()
        #expect(live.latency == 240 && driver.processingLatency == 240)
        let delayed = { (frame: Int) -> Float in frame < 240 ? 0 : Self.signal(0, frame - 240) }
        let gain = powf(10, 6 * 0.05)
        let first = Self.render(driver, frames: 4_800)
        let notGained = (240 ..< 4_800).filter { abs(first[$0] - gain * delayed($0)) > 1e-5 }
        #expect(notGained.count == 0, "\(notGained.count) frames are not the input × \(gain), the first at \(notGained.first ?? -1)")

        try live.bypass("lim", true)
        let bypassed = Self.render(driver, frames: 4_800)
        let wrong = bypassed.indices.filter { bypassed[$0] != delayed(4_800 + $0) }
        #expect(wrong.count == 0, "bypassed: \(wrong.count) frames are not the input 240 frames before, the first at \(wrong.first ?? -1)")
        #expect(live.latency == 240 && driver.processingLatency == 240)

        try live.bypass("lim", false)
        let again = Self.render(driver, frames: 4_800)
        // The limiter's look-ahead still holds what it had when bypassed: from 240 frames on, its own output.
        let notAgain = (240 ..< 4_800).filter { abs(again[$0] - gain * delayed(9_600 + $0)) > 1e-5 }
        #expect(notAgain.count == 0, "\(notAgain.count) frames are not the input × \(gain), the first at \(notAgain.first ?? -1)")
    }

    @Test("refusals name what was wrong, with a kind a client can act on, and leave the graph as it was: unknown URI, node, control, preset or port; an id in use or malformed; a value out of range; a cycle; a connection made twice or never made")
    func refusals() throws {
        let driver = OfflineDriver(name: "live", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.start()
        try live.add(LiveHostOfflineTests.amp, id: "a")
        try live.add(LiveHostOfflineTests.amp, id: "b")
        try live.connect("a:output", "b:input")
        let before = live.graph
        let cases: [(LiveGraphError.Kind, String, () throws(LiveGraphError) -> Void)] = [
            (.notFound, "no installed LV2 plugin has the URI 'urn:nothing'", { () throws(LiveGraphError) in try live.add("urn:nothing") }),
            (.exists, "a node 'a' is already in the graph; expected a new id", { () throws(LiveGraphError) in try live.add(LiveHostOfflineTests.amp, id: "a") }),
            (.invalid, "'a b' cannot be a node id: expected 1 to 64 letters, digits, '.', '_' or '-'", { () throws(LiveGraphError) in try live.add(LiveHostOfflineTests.amp, id: "a b") }),
            (.notFound, "node 'c' ('Simple amplifier') has no control input 'level'; expected one of gain", { () throws(LiveGraphError) in try live.add(LiveHostOfflineTests.amp, id: "c", settings: [.control(symbol: "level", value: 1)]) }),
            (.notFound, "no node 'z' in the graph; it has 'a', 'b'", { () throws(LiveGraphError) in try live.set("z", "gain", to: 1) }),
            (.notFound, "node 'a' ('Simple amplifier') has no control input 'level'; expected one of gain", { () throws(LiveGraphError) in try live.set("a", "level", to: 1) }),
            (.invalid, "gain=100.0 is out of range for 'Simple amplifier': expected -70 ... 70", { () throws(LiveGraphError) in try live.set("a", "gain", to: 100) }),
            (.cycle, "connecting b:output -> a:input would make a cycle: a -> b -> a; a graph's paths must not loop", { () throws(LiveGraphError) in try live.connect("b:output", "a:input") }),
            (.exists, "a:output -> b:input is already connected", { () throws(LiveGraphError) in try live.connect("a:output", "b:input") }),
            (.notFound, "b:output -> out_1 is not connected", { () throws(LiveGraphError) in try live.disconnect("b:output", "out_1") }),
            (.notFound, "a:out: node 'a' has no audio output 'out'; expected one of output", { () throws(LiveGraphError) in try live.connect("a:out", "out_1") }),
            (.invalid, "'in_0' is not an endpoint: expected in_N or out_N (N from 1) or NODE:PORT", { () throws(LiveGraphError) in try live.connect("in_0", "a:input") }),
            (.notFound, "no node 'z' in the graph; it has 'a', 'b'", { () throws(LiveGraphError) in try live.remove("z") }),
            (.notFound, "node 'a' ('Simple amplifier') has no control 'level'; expected one of gain", { () throws(LiveGraphError) in _ = try live.value("a", "level") }),
        ]
        for (kind, words, call) in cases {
            do throws(LiveGraphError) {
                try call()
                Issue.record("not refused: \(words)")
            } catch {
                #expect(error.kind == kind, "\(words)")
                #expect(error.description.hasPrefix(words), "got: \(error.description)")
            }
            #expect(live.graph == before && live.nodes.count == 2)
        }
    }
}
