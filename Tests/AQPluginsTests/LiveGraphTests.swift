import AQCore
import AQGraph
import AQPlugins
import AQTestSupport
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

    @Test("a plugin with an lv2:enabled port is bypassed through it: the tests' enabled-double plugin (64 frames, doubles) reports bypassed = 1 and passes the input 64 frames late, exactly, from the first frame after the command, its latency still published; the list and the saved document say bypassed with enabled = 0; off: doubled again")
    func bypassThroughEnabledPort() throws {
        let folder = try EnabledPluginFixture.build()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let world = LV2World(additionalBundles: [folder + "/enabled-double.lv2"])
        #expect(try world.describe(EnabledPluginFixture.uri).enabledPort == "enabled")
        #expect(try world.describe(LiveHostOfflineTests.limiter).enabledPort == nil)
        let driver = OfflineDriver(name: "live", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: world, driver: driver, inputs: 1, outputs: 1)
        try live.add(EnabledPluginFixture.uri, id: "dbl")
        try live.connect("in_1", "dbl:in")
        try live.connect("dbl:out", "out_1")
        try live.start()
        #expect(live.latency == 64 && driver.processingLatency == 64)
        let delayed = { (frame: Int) -> Float in frame < 64 ? 0 : Self.signal(0, frame - 64) }
        let doubled = Self.render(driver, frames: 1_280)
        #expect(doubled.indices.allSatisfy { doubled[$0] == 2 * delayed($0) })
        #expect(try live.value("dbl", "bypassed") == 0)

        try live.bypass("dbl", true)
        let bypassed = Self.render(driver, frames: 1_280)
        let wrong = bypassed.indices.filter { bypassed[$0] != delayed(1_280 + $0) }
        #expect(wrong.count == 0, "bypassed: \(wrong.count) frames are not the input 64 frames before, the first at \(wrong.first ?? -1)")
        // The plugin bypassed itself: the host's delay line stayed off.
        #expect(try live.value("dbl", "bypassed") == 1 && live.nodes["dbl"]?.bypass.isOn == false)
        #expect(live.nodes["dbl"]?.isBypassed == true && live.latency == 64 && driver.processingLatency == 64)
        let saved = try #require(live.document.nodes.first)
        #expect(saved.bypass && saved.controls["enabled"] == 0)

        try live.bypass("dbl", false)
        let again = Self.render(driver, frames: 1_280)
        #expect(again.indices.allSatisfy { again[$0] == 2 * delayed(2_560 + $0) })
        #expect(try live.value("dbl", "bypassed") == 0 && live.nodes["dbl"]?.isBypassed == false)
    }

    @Test("the LADSPA limiter in a live graph beside a dry path (offline driver): 240 frames of latency published, every output sample exactly twice the input 240 frames before (the denormal guard's 4.6e-26 where that was silence); bypass keeps the 240 frames; the saved document names it urn:ladspa:1913")
    func ladspaLimiter() throws {
        let driver = OfflineDriver(name: "ladspa", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.add("fastLookaheadLimiter", id: "lim")
        for (source, destination) in [("in_1", "lim:input_1"), ("lim:output_1", "out_1"), ("in_1", "out_1")] { try live.connect(source, destination) }
        try live.start()
        #expect(live.latency == 240 && driver.processingLatency == 240)
        let signal = { (frame: Int) -> Float in frame < 0 ? 0 : sin(Float(frame) * 0.01) * 0.25 }
        let out = LiveHostOfflineTests.render(driver, channels: 1, frames: 4_800) { _, frame in signal(frame) }[0]
        // (Where the input was silence, the limiter's denormal guard: 4.6e-26, as the LV2 one's.)
        let wrong = (0 ..< 4_800).filter { signal($0 - 240) != 0 && out[$0] != 2 * signal($0 - 240) || abs(out[$0]) > 1e-20 && signal($0 - 240) == 0 }
        #expect(wrong.count == 0, "\(wrong.count) frames are not twice the input 240 frames before, the first at \(wrong.first ?? -1)")
        try live.bypass("lim", true)
        #expect(live.latency == 240 && live.nodes["lim"]?.isBypassed == true)
        #expect(live.document.nodes.first?.uri == "urn:ladspa:1913" && live.document.nodes.first?.bypass == true)
    }

    @Test("the driver's transport reaches a plugin that takes time:Position (the tests' own, which reports the last position it was given): stopped at the first run (speed 0, frame 0); started (speed 1, frame 0); located to 48000 while rolling (frame 48000); stopped (speed 0, where it stopped): one position each time the transport is not where the last cycle left it, none while it rolls on")
    func transportPosition() throws {
        let folder = try TimePluginFixture.build()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let world = LV2World(additionalBundles: [folder + "/time-position.lv2"])
        let driver = OfflineDriver(name: "time", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: world, driver: driver, inputs: 1, outputs: 1)
        try live.add(TimePluginFixture.uri, id: "t")
        try live.start()
        func told() throws -> [Float] { try ["positions", "speed", "frame", "bar", "bar_beat", "bpm"].map { try live.value("t", $0) } }
        _ = Self.render(driver, frames: 1_280)
        #expect(try told() == [1, 0, 0, 0, 0, 0])
        driver.startTransport()
        _ = Self.render(driver, frames: 1_280)
        #expect(try told() == [2, 1, 0, 0, 0, 0])
        try driver.locateTransport(to: 48_000)
        _ = Self.render(driver, frames: 1_280)
        #expect(try told() == [3, 1, 48_000, 0, 0, 0])
        driver.stopTransport()
        _ = Self.render(driver, frames: 1_280)
        #expect(try told() == [4, 0, 49_280, 0, 0, 0])
        // A timebase master at 120 beats a minute in 4/4 (the driver's): a new tempo is told at
        // once; frame 49,280 is bar 0, beat 2 + 102/1920 (bars and beats from 0, 1920 ticks a beat);
        // 112,000 (located) bar 1, beat 1280/1920.
        driver.setTimebase(beatsPerMinute: 120)
        _ = Self.render(driver, frames: 128)
        let tempo = try told()
        #expect(tempo == [5, 0, 49_280, 0, Float(2) + Float(102.0 / 1920), 120], "\(tempo)")
        try driver.locateTransport(to: 112_000)
        _ = Self.render(driver, frames: 128)
        let located = try told()
        #expect(located == [6, 0, 112_000, 1, Float(0) + Float(1280.0 / 1920), 120], "\(located)")
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
        let cases: [(GraphError.Kind, String, () throws(GraphError) -> Void)] = [
            (.notFound, "no installed LV2 plugin has the URI 'urn:nothing'", { () throws(GraphError) in try live.add("urn:nothing") }),
            (.exists, "a node 'a' is already in the graph; expected a new id", { () throws(GraphError) in try live.add(LiveHostOfflineTests.amp, id: "a") }),
            (.invalid, "'a b' cannot be a node id: expected 1 to 64 letters, digits, '.', '_' or '-'", { () throws(GraphError) in try live.add(LiveHostOfflineTests.amp, id: "a b") }),
            (.notFound, "node 'c' ('Simple amplifier') has no control input 'level'; expected one of gain", { () throws(GraphError) in try live.add(LiveHostOfflineTests.amp, id: "c", settings: [.control(symbol: "level", value: 1)]) }),
            (.notFound, "no node 'z' in the graph; it has 'a', 'b'", { () throws(GraphError) in try live.set("z", "gain", to: 1) }),
            (.notFound, "node 'a' ('Simple amplifier') has no control input 'level'; expected one of gain", { () throws(GraphError) in try live.set("a", "level", to: 1) }),
            (.invalid, "gain=100.0 is out of range for 'Simple amplifier': expected -70 ... 70", { () throws(GraphError) in try live.set("a", "gain", to: 100) }),
            (.cycle, "connecting b:output -> a:input would make a cycle: a -> b -> a; a graph's paths must not loop", { () throws(GraphError) in try live.connect("b:output", "a:input") }),
            (.exists, "a:output -> b:input is already connected", { () throws(GraphError) in try live.connect("a:output", "b:input") }),
            (.notFound, "b:output -> out_1 is not connected", { () throws(GraphError) in try live.disconnect("b:output", "out_1") }),
            (.notFound, "a:out: node 'a' has no output 'out'; expected one of output", { () throws(GraphError) in try live.connect("a:out", "out_1") }),
            (.invalid, "'in_0' is not an endpoint: expected in_N or out_N (N from 1) or NODE:PORT", { () throws(GraphError) in try live.connect("in_0", "a:input") }),
            (.notFound, "no node 'z' in the graph; it has 'a', 'b'", { () throws(GraphError) in try live.remove("z") }),
            (.notFound, "node 'a' ('Simple amplifier') has no control 'level'; expected one of gain", { () throws(GraphError) in _ = try live.value("a", "level") }),
        ]
        for (kind, words, call) in cases {
            do throws(GraphError) {
                try call()
                Issue.record("not refused: \(words)")
            } catch {
                #expect(error.kind == kind, "\(words)")
                #expect(error.description.hasPrefix(words), "got: \(error.description)")
            }
            #expect(live.graph == before && live.nodes.count == 2)
        }
    }

    /// amp (+6 dB, set while running) into the limiter (+3 dB input gain), beside a dry path
    /// into the same output, on a fresh driver; the graph built before the first frame.
    static func builtGraph(_ driver: OfflineDriver) throws -> LiveGraph {
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.add(LiveHostOfflineTests.amp, id: "amp")
        try live.add(LiveHostOfflineTests.limiter, id: "lim", settings: [.control(symbol: "ingain", value: 3)])
        for (source, destination) in [("in_1", "amp:input"), ("amp:output", "lim:in_1"), ("lim:out_1", "out_1"), ("in_1", "out_1")] {
            try live.connect(source, destination)
        }
        try live.set("amp", "gain", to: 6)
        try live.start()
        return live
    }

    @Test("save, then load into a new host on a new driver: the same document, the plugins' state folders beside the file, and every output sample the same as the saved graph's over the same input, bit-exact")
    func saveAndLoad() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-graph-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/rack.json"

        let first = OfflineDriver(name: "saved", sampleRate: 48000, bufferSize: 128)
        defer { first.close() }
        let saved = try Self.builtGraph(first)
        try saved.save(to: path)
        #expect(FileManager.default.fileExists(atPath: folder + "/rack.json.state/lim/state.ttl"))
        let original = Self.render(first, frames: 9_600)

        let second = OfflineDriver(name: "loaded", sampleRate: 48000, bufferSize: 128)
        defer { second.close() }
        let loaded = try LiveGraph(world: LV2World(), driver: second, inputs: 1, outputs: 1)
        try loaded.load(from: path)
        try loaded.start()
        #expect(loaded.document == saved.document)
        #expect(loaded.latency == 240 && second.processingLatency == 240)
        let again = Self.render(second, frames: 9_600)
        let different = original.indices.filter { original[$0] != again[$0] }
        #expect(different.count == 0 && original.contains { $0 != 0 }, "\(different.count) samples differ, the first at \(different.first ?? -1)")
    }

    @Test("a graph file that cannot be loaded is refused naming what is wrong, and the running graph stays: no file, not JSON, another schema, other channel counts, an unknown plugin, a value out of range, a connection that makes a cycle")
    func badGraphFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-badgraph-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let driver = OfflineDriver(name: "live", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try Self.builtGraph(driver)
        let before = live.document
        let amp = LiveHostOfflineTests.amp
        func graph(_ nodes: String, _ connections: String, inputs: Int = 1) -> String {
            #"{"schema": "aqjack.graph/1", "inputs": \#(inputs), "outputs": 1, "nodes": [\#(nodes)], "connections": [\#(connections)]}"#
        }
        let cases: [(name: String, text: String?, kind: GraphError.Kind, words: String)] = [
            ("missing.json", nil, .failed, "cannot read the graph file '\(folder)/missing.json': No such file or directory"),
            ("text.json", "rack: amp", .invalid, "'\(folder)/text.json' is not a graph file (JSON of schema aqjack.graph/1)"),
            ("schema.json", #"{"schema": "other/2", "inputs": 1, "outputs": 1, "nodes": [], "connections": []}"#, .invalid, "'\(folder)/schema.json' has schema 'other/2'; expected aqjack.graph/1"),
            ("lacks.json", #"{"schema": "aqjack.graph/1", "inputs": 1, "outputs": 1, "nodes": []}"#, .invalid, "'\(folder)/lacks.json' is not a graph file: it lacks \"connections\""),
            ("wide.json", graph("", "", inputs: 2), .invalid, "'\(folder)/wide.json' is a graph of 2 inputs and 1 outputs; this one has 1 and 1"),
            ("huge.json", graph("", "", inputs: 100_000), .invalid, "'\(folder)/huge.json' has 100000 inputs and 1 outputs; expected 0 to 256 of each"),
            ("unknown.json", graph(#"{"id": "x", "uri": "urn:nothing", "controls": {}, "bypass": false}"#, ""), .notFound, "no installed LV2 plugin has the URI 'urn:nothing'"),
            ("range.json", graph(#"{"id": "a", "uri": "\#(amp)", "controls": {"gain": 500}, "bypass": false}"#, ""), .invalid, "gain=500.0 is out of range for 'Simple amplifier'"),
            ("cycle.json", graph(#"{"id": "a", "uri": "\#(amp)", "controls": {}, "bypass": false}"#, #"["a:output", "a:input"]"#), .cycle, "'\(folder)/cycle.json', connection 1: connecting a:output -> a:input would make a cycle"),
        ]
        for (name, text, kind, words) in cases {
            if let text { try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8) }
            do throws(GraphError) {
                try live.load(from: folder + "/" + name)
                Issue.record("\(name) was loaded")
            } catch {
                #expect(error.kind == kind, "\(name): \(error.kind)")
                #expect(error.description.hasPrefix(words), "\(name): \(error.description)")
            }
            #expect(live.document == before, "\(name) changed the graph")
        }
    }

    @Test("a plugin whose latency changes while it runs (swh amPitchshift, its buffer size set from 4 to 7): refreshLatency compensates the new latency and publishes it to the driver")
    func latencyRepublished() throws {
        let driver = OfflineDriver(name: "live", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.add("http://plugin.org.uk/swh-plugins/amPitchshift", id: "pitch", settings: [.control(symbol: "size", value: 4)])
        try live.connect("in_1", "pitch:input")
        try live.connect("pitch:output", "out_1")
        try live.start()
        let before = live.latency
        #expect(try live.refreshLatency() == false)
        try live.set("pitch", "size", to: 7)
        _ = Self.render(driver, frames: 1_280)
        #expect(try live.refreshLatency() == true)
        let reported = Int(try live.value("pitch", "latency"))
        #expect(live.latency != before && live.latency == reported, "\(before) then \(live.latency), the plugin reports \(reported)")
        #expect(driver.processingLatency == live.latency)
    }

    /// Renders `frames` through the driver's one input with `midi` on the graph's MIDI input
    /// (frames from the driver's start).
    static func render(_ driver: OfflineDriver, frames: Int, midi: [OfflineDriver.MIDIMessage]) -> [Float] {
        let start = Int(driver.currentFrame)
        return LiveHostOfflineTests.render(driver, channels: 1, frames: frames, input: { channel, frame in signal(channel, start + frame) }, midi: midi)[0]
    }

    @Test("a MIDI controller mapped to the amp's gain (channel 1, CC 7, 0 to 12 dB): CC 7 = 127 at frame 1000 sets 12 dB from the start of its cycle (frame 896), exactly; learn maps the next controller (channel 3, CC 20) over the gain's whole range; both saved in the document; get reports what the controller set")
    func midiControllers() throws {
        let driver = OfflineDriver(name: "live", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        #expect(live.host.midiInput == "live:midi_in")
        try live.add(LiveHostOfflineTests.amp, id: "amp")
        try live.connect("in_1", "amp:input")
        try live.connect("amp:output", "out_1")
        try live.mapMIDI("amp", "gain", channel: 1, controller: 7, minimum: 0, maximum: 12)
        try live.start()
        let mapped = Self.render(driver, frames: 2_048, midi: [.init(frame: 1_000, bytes: [0xB0, 7, 127])])
        let twelve = powf(10, Float(12) * 0.05)
        let wrong = mapped.indices.filter { mapped[$0] != Self.signal(0, $0) * ($0 < 896 ? 1 : twelve) }
        #expect(wrong.count == 0, "\(wrong.count) samples wrong, the first at \(wrong.first ?? -1)")
        #expect(try live.value("amp", "gain") == 12)

        try live.learnMIDI("amp", "gain")
        #expect(try live.completeLearning() == nil)
        // The controller learned moves nothing yet; it is mapped after it comes.
        _ = Self.render(driver, frames: 256, midi: [.init(frame: 2_100, bytes: [0xB2, 20, 0])])
        let learned = try #require(try live.completeLearning())
        #expect(learned == GraphDocument.MIDIMapping(id: "amp", symbol: "gain", channel: 3, controller: 20, minimum: -70, maximum: 70))
        #expect(live.document.midi == [GraphDocument.MIDIMapping(id: "amp", symbol: "gain", channel: 1, controller: 7, minimum: 0, maximum: 12), learned])
        let start = Int(driver.currentFrame)
        let moved = Self.render(driver, frames: 1_280, midi: [.init(frame: UInt64(start), bytes: [0xB2, 20, 64])])
        let gain = Float(-70) + (Float(70) - Float(-70)) * Float(64) / 127
        let coefficient = powf(10, gain * 0.05)
        let off = moved.indices.filter { moved[$0] != Self.signal(0, start + $0) * coefficient }
        #expect(off.count == 0, "\(off.count) samples are not at \(gain) dB, the first at \(off.first ?? -1)")
        #expect(try live.value("amp", "gain") == gain)
        try live.remove("amp")
        #expect(live.mappings.isEmpty)
    }

    @Test("MIDI mappings refused by kind: a channel or controller out of range, bounds outside the control's range, an unknown node or control; learn on a control without a range")
    func midiRefusals() throws {
        let driver = OfflineDriver(name: "live", sampleRate: 48000, bufferSize: 128)
        defer { driver.close() }
        let live = try LiveGraph(world: LV2World(), driver: driver, inputs: 1, outputs: 1)
        try live.add(LiveHostOfflineTests.amp, id: "amp")
        let cases: [(GraphError.Kind, String, () throws(GraphError) -> Void)] = [
            (.invalid, "MIDI channel 0: expected 1 to 16", { () throws(GraphError) in try live.mapMIDI("amp", "gain", channel: 0, controller: 7) }),
            (.invalid, "controller 128: expected 0 to 127", { () throws(GraphError) in try live.mapMIDI("amp", "gain", channel: 1, controller: 128) }),
            (.invalid, "gain=100.0 is out of range for 'Simple amplifier'", { () throws(GraphError) in try live.mapMIDI("amp", "gain", channel: 1, controller: 7, minimum: 0, maximum: 100) }),
            (.notFound, "no node 'x' in the graph", { () throws(GraphError) in try live.mapMIDI("x", "gain", channel: 1, controller: 7) }),
            (.notFound, "node 'amp' ('Simple amplifier') has no control input 'level'", { () throws(GraphError) in try live.learnMIDI("amp", "level") }),
        ]
        for (kind, words, call) in cases {
            do throws(GraphError) {
                try call()
                Issue.record("not refused: \(words)")
            } catch {
                #expect(error.kind == kind && error.description.hasPrefix(words), "\(error.kind): \(error.description)")
            }
        }
        #expect(live.mappings.isEmpty && !live.isLearning)
    }
}
