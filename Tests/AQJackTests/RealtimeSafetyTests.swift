import AQCore
import AQGraph
import AQJack
import AQPlugins
import AQServerSuite
import AQTestSupport
import CRTProbe
import Foundation
import Synchronization
import Testing

extension JackServerSuite {
    /// The process threads, in steady state, make no heap call and take no mutex: counted by
    /// CRTProbe, which replaces malloc, free and pthread_mutex_lock in this test binary.
    @Suite("Real-time safety of the process thread", .enabled(if: aq_probe_is_active() != 0, "CRTProbe is compiled out under sanitizers"))
    struct RealtimeSafetyTests {
        @Test("the probe counts allocations on a watched thread (control)")
        func probeSeesAllocations() {
            let counted = UnsafeCounter()
            let thread = Thread {
                aq_probe_watch_current_thread(nil)
                aq_probe_reset_and_enable()
                let array = [Int](repeating: 7, count: 1000 + Int.random(in: 0 ..< 10))
                counted.value = array.count > 0 ? aq_probe_allocation_count() : -1
                aq_probe_disable()
            }
            thread.start()
            while counted.value == 0 { usleep(1000) }
            #expect(counted.value >= 1)
        }

        @Test("capture (64 channels) and generator process threads: zero allocations, frees and mutex locks in steady state")
        func steadyStateIsAllocationFree() throws {
            let watchedBefore = aq_probe_watched_thread_count()
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("rtgen"), channelCount: 64,
                                                threadInit: aq_probe_watch_current_thread)
            let capture = try CaptureClient(name: TestServer.uniqueClientName("rtcap"), channelCount: 64, capacityFrames: 1 << 15)
            try capture.client.setThreadInitCallback(aq_probe_watch_current_thread)
            let verifier = Mutex(TestSignalVerifier(channelCount: 64))
            let sink = CaptureSink(reader: capture.reader) { cycle, samples in verifier.withLock { $0.check(cycle, samples) } }
            try capture.activate()
            try capture.connect(from: generator.portNames)
            usleep(500_000)   // warm-up: first cycles, graph changes, page faults
            // JACK runs the thread-init callback on every thread it creates for a client (3 per
            // client with jackd2 1.9.21): the process threads and the others are all watched.
            #expect(aq_probe_watched_thread_count() - watchedBefore >= 2)
            // Count on the two process threads only: JACK's notification threads may allocate
            // when they report an xrun (seen in a clean-clone CI run: 1 malloc, 4 mutex locks).
            var processThreads = [capture.client.processThreadID, generator.client.processThreadID]
            #expect(processThreads.allSatisfy { $0 != 0 })
            aq_probe_count_only(&processThreads, 2)
            defer { aq_probe_count_only(nil, 0) }
            aq_probe_reset_and_enable()
            let cyclesBefore = capture.processor.recordedCycleCount.load(ordering: .relaxed)
            usleep(3_000_000)
            aq_probe_disable()
            let cycles = capture.processor.recordedCycleCount.load(ordering: .relaxed) - cyclesBefore
            let allocations = aq_probe_allocation_count()
            let frees = aq_probe_free_count()
            let locks = aq_probe_mutex_lock_count()
            let checked = verifier.withLock { $0 }   // before deactivation silences the inputs
            try capture.client.deactivate()
            sink.stop()
            _ = generator
            print("process threads over \(cycles) cycles: allocations \(allocations), frees \(frees), mutex locks \(locks)")
            #expect(cycles > 1000)   // 3 s at 48 kHz / 128 = 1125 cycles
            #expect(allocations == 0)
            #expect(frees == 0)
            #expect(locks == 0)
            // The capture kept working meanwhile: frames verified, nothing dropped. (Bit-exactness is
            // the bit-exact tests' job; a server stall here can garble the cycle it hits.)
            let xruns = capture.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(checked.verifiedFrameCount > 100_000 && checked.droppedFrameCount == 0, "\(checked.summary)")
            if xruns == 0 && checked.discontinuityCount == 0 { #expect(checked.wrongSampleCount == 0, "\(checked.summary)") }
        }
    }
}

extension JackServerSuite.RealtimeSafetyTests {
    @Test("playback process thread (16 channels, volume ramps and pan changing, starts waiting for a connection): zero allocations, frees and mutex locks")
    func playbackIsAllocationFree() throws {
        let client = try JackClient(name: TestServer.uniqueClientName("rtplay"), exactName: true)
        let ports = try client.registerPorts(prefix: "out_", count: 16, direction: .output)
        let (processor, feeder) = PlaybackProcessor.make(channelCount: 16, capacityFrames: 8192)
        let watchedBefore = aq_probe_watched_thread_count()
        try client.setThreadInitCallback(aq_probe_watch_current_thread)
        try client.activate(processor: processor, outputs: ports)
        var processThread = [client.processThreadID]
        aq_probe_count_only(&processThread, 1)
        defer { aq_probe_count_only(nil, 0) }
        for port in ports.prefix(2) { try client.connect(port.name, to: "system:playback_\(port.shortName.dropFirst(4))") }
        // A feeder thread keeps the ring full, as the queue thread does.
        // It records its longest time between two writes (ns): a thread of normal priority can be
        // kept off the CPU longer than the ring lasts without the server skipping a cycle.
        let feeding = UnsafeCounter()
        let longestFeedGap = UnsafeCounter()
        let feederThread = Thread {
            let chunk = [Float](repeating: 0.25, count: 16 * 256)
            var last = DispatchTime.now().uptimeNanoseconds
            while feeding.value == 0 {
                // As full as the ring takes (256 frames a write), as the queue thread keeps it:
                // one write a wake-up added 256 frames per 5 ms at worst, barely ahead of 48 kHz.
                while chunk.withUnsafeBufferPointer({ feeder.write($0.baseAddress!, frameCount: 256) }) > 0 {}
                let now = DispatchTime.now().uptimeNanoseconds
                longestFeedGap.value = max(longestFeedGap.value, Int(now - last))
                last = now
                feeder.waitForCycle(milliseconds: 5)
            }
            feeding.value = 2
        }
        feederThread.start()
        processor.play(fromFrame: processor.nextCycleFrame.load(ordering: .relaxed) + 512)
        usleep(500_000)
        #expect(aq_probe_watched_thread_count() > watchedBefore)
        aq_probe_reset_and_enable()
        let playedBefore = processor.playedFrameCount.load(ordering: .relaxed)
        for step in 0 ..< 30 {
            processor.setGain(step % 2 == 0 ? 0.2 : 0.9, rampFrames: 2400)
            processor.setPan(step % 2 == 0 ? -0.5 : 0.5)
            usleep(100_000)
        }
        // Starts that wait for a connection, the process thread asking JACK each cycle: one that
        // is in the graph (out_1 → system:playback_1: the next cycle), one that is not (out_6:
        // the latest frame, after 19 cycles of asking).
        let period = UInt64(client.bufferSize)
        let rate = client.sampleRate
        let connectedNext = processor.nextCycleFrame.load(ordering: .relaxed)
        processor.play(onceOutput: 0, isConnectedTo: "system:playback_1", noLaterThan: connectedNext + 48000)
        usleep(100_000)
        let connectedStart = processor.firstPlayedFrame.load(ordering: .acquiring)
        let unconnectedLatest = processor.nextCycleFrame.load(ordering: .relaxed) + 20 * period
        processor.play(onceOutput: 5, isConnectedTo: "system:playback_6", noLaterThan: unconnectedLatest)
        usleep(200_000)
        let unconnectedStart = processor.firstPlayedFrame.load(ordering: .acquiring)
        aq_probe_disable()
        #expect(connectedStart <= connectedNext + period, "next cycle \(connectedNext), start \(connectedStart)")
        #expect(unconnectedStart == unconnectedLatest)
        let played = processor.playedFrameCount.load(ordering: .relaxed) - playedBefore
        let allocations = aq_probe_allocation_count()
        let frees = aq_probe_free_count()
        let locks = aq_probe_mutex_lock_count()
        let xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        feeding.value = 1
        while feeding.value != 2 { usleep(1000) }
        try client.deactivate()
        client.close()
        print("playback process thread over \(played) frames: allocations \(allocations), frees \(frees), mutex locks \(locks)")
        #expect(played > 48000 * 2)
        #expect(allocations == 0)
        #expect(frees == 0)
        #expect(locks == 0)
        // The feeder keeps ahead unless the host stalls it: the server then reports xruns (a
        // loaded CI run had 128 frames of underrun in one), or the feeder itself was kept off the
        // CPU for longer than the ring lasts (8192 frames: 171 ms; another run had 128 frames of
        // underrun with no xrun). Neither: no underrun.
        let underruns = processor.underrunFrameCount.load(ordering: .relaxed)
        let feederStarved = longestFeedGap.value >= (8192 - 2 * Int(period)) * 1_000_000_000 / rate
        print("playback underruns \(underruns) frames, xruns \(xruns), feeder's longest gap \(longestFeedGap.value / 1_000_000) ms")
        if !feederStarved { #expect(underruns <= xruns * Int(period), "\(underruns) frames of underrun, \(xruns) xruns") }
        if xruns == 0 && !feederStarved { #expect(underruns == 0) }
    }
}

final class UnsafeCounter: @unchecked Sendable {
    var value = 0
}

extension JackServerSuite.RealtimeSafetyTests {
    /// What the probe counted on a live host's process thread while its `gain` was set every
    /// millisecond for 3 s.
    struct LiveHostProbe {
        var cycles = 0, changes = 0, allocations = 0, frees = 0, locks = 0
    }

    /// Runs plugin `uri` of `world` as a live host fed by a generator (its outputs also to
    /// `listener`'s inputs, when given) and counts the process thread's heap calls and locks
    /// while `gain` is set to `gains(k)` at the k-th millisecond for 3 s.
    static func probeLiveHost(world: LV2World, uri: String, role: String, listener: CaptureClient? = nil,
                              gains: (Int) -> Float) throws -> LiveHostProbe {
        let generator = try GeneratorClient(name: TestServer.uniqueClientName(role + "gen"), channelCount: 1)
        let client = try JackClient(name: TestServer.uniqueClientName(role), exactName: true)
        let host = try LV2LiveHost(world: world, uri: uri, settings: [], driver: JackDriver(client: client))
        try client.setThreadInitCallback(aq_probe_watch_current_thread)
        try host.activate()
        defer { try? client.deactivate(); client.close() }
        _ = try client.connect(generator.portNames[0], to: host.audioInputs[0])
        if let listener { try listener.connect(from: host.audioOutputs) }
        return try probeWhileChanging(host, client: client, symbol: "gain", to: gains)
    }

    /// After a warm-up, counts the heap calls and locks of `client`'s process thread while
    /// control `symbol` of `host` is set to `values(k)` at the k-th millisecond for 3 s.
    static func probeWhileChanging(_ host: LV2LiveHost, client: JackClient, symbol: String, to values: (Int) -> Float) throws -> LiveHostProbe {
        usleep(500_000)   // warm-up
        var processThreads = [client.processThreadID]
        #expect(processThreads[0] != 0)
        aq_probe_count_only(&processThreads, 1)
        defer { aq_probe_count_only(nil, 0) }
        let cyclesBefore = host.processor.cycleCount.load(ordering: .relaxed)
        var probe = LiveHostProbe()
        aq_probe_reset_and_enable()
        let until = Date().addingTimeInterval(3)
        while Date() < until {
            try host.set(symbol, to: values(probe.changes))
            probe.changes += 1
            usleep(1000)
        }
        aq_probe_disable()
        probe.cycles = host.processor.cycleCount.load(ordering: .relaxed) - cyclesBefore
        probe.allocations = aq_probe_allocation_count()
        probe.frees = aq_probe_free_count()
        probe.locks = aq_probe_mutex_lock_count()
        return probe
    }

    @Test("live LV2 host (swh amp, its gain changed every millisecond: every cycle): zero allocations, frees and mutex locks on the process thread")
    func liveHostIsAllocationFree() throws {
        let probe = try Self.probeLiveHost(world: LV2World(), uri: "http://plugin.org.uk/swh-plugins/amp", role: "rthost") { Float($0 % 13) - 6 }
        print("live host process thread: \(probe)")
        #expect(probe.cycles > 1000 && probe.changes > probe.cycles)
        #expect(probe.allocations == 0 && probe.frees == 0 && probe.locks == 0)
    }

    @Test("live LV2 host of a MIDI plugin (x42 miditranspose: a MIDI output port; its transpose changed every millisecond) fed a note every 10 ms, its output read by another client: zero allocations, frees and mutex locks on the process thread, and the transposed events reach the reader")
    func midiOutputIsAllocationFree() throws {
        let clock = try JackClient(name: TestServer.uniqueClientName("rtmidiclock"))
        let start = UInt64(clock.estimatedFrameTime) + 12_000
        clock.close()
        let notes = (0 ..< 500).map { (frame: start + UInt64($0) * 480, note: UInt8(48 + $0 % 24)) }
        let sender = try MIDINoteClient(name: TestServer.uniqueClientName("rtmidinotes"), notes: notes, lengthFrames: 240)
        let capture = try MIDICaptureClient(name: TestServer.uniqueClientName("rtmidicap"))
        let client = try JackClient(name: TestServer.uniqueClientName("rtmidihost"), exactName: true)
        let host = try LV2LiveHost(world: LV2World(), uri: "http://gareus.org/oss/lv2/midifilter#miditranspose", settings: [], driver: JackDriver(client: client))
        try client.setThreadInitCallback(aq_probe_watch_current_thread)
        try host.activate()
        defer { try? client.deactivate(); client.close() }
        _ = try client.connect(sender.portName, to: host.midiInputs[0])
        _ = try client.connect(host.midiOutputs[0], to: capture.portName)
        let probe = try Self.probeWhileChanging(host, client: client, symbol: "transpose") { Float($0 % 13 - 6) }
        print("MIDI plugin's process thread: \(probe), \(capture.events.count) events read")
        #expect(probe.cycles > 1000 && probe.changes > probe.cycles)
        #expect(probe.allocations == 0 && probe.frees == 0 && probe.locks == 0)
        // Every note sent once the host was connected comes out as a note-on at its frame, 6
        // semitones down to 6 up (the plugin also re-sounds held notes when the transpose changes).
        let ons = Dictionary(capture.events.filter { $0.bytes[0] == 0x90 }.map { ($0.frame, Int($0.bytes[1])) }, uniquingKeysWith: { first, _ in first })
        let firstHeard = capture.events.first?.frame ?? .max, lastHeard = capture.events.last?.frame ?? 0
        let heard = notes.filter { $0.frame >= firstHeard && $0.frame + 480 < lastHeard }
        let missing = heard.filter { note in ons[note.frame].map { abs($0 - Int(note.note)) > 6 } ?? true }
        #expect(heard.count > 200 && missing.isEmpty, "\(heard.count) notes sent while heard; not at their frame or out of range: \(missing.count), first \(missing.prefix(3)); heard from \(firstHeard)")
        #expect(host.processor.droppedMIDIEvents.load(ordering: .relaxed) == 0)
    }

    @Test("live LV2 host of a plugin that needs the worker (the tests' worker-gain: its gain changed every millisecond, so every run schedules work and takes a response): zero allocations, frees and mutex locks on the process thread, and the worker's gains reach the output")
    func workerPluginIsAllocationFree() throws {
        let bundles = try WorkerPluginFixture.build()
        defer { try? FileManager.default.removeItem(atPath: bundles) }
        let capture = try CaptureClient(name: TestServer.uniqueClientName("rtworkcap"), channelCount: 1, capacityFrames: 1 << 20)
        try capture.activate()
        let world = LV2World(additionalBundles: [bundles + "/worker-gain.lv2"])
        let probe = try Self.probeLiveHost(world: world, uri: WorkerPluginFixture.uri, role: "rtwork", listener: capture) { 0.25 + Float($0 % 12) * 0.25 }
        print("worker plugin's process thread: \(probe)")
        #expect(probe.cycles > 1000 && probe.changes > probe.cycles)
        #expect(probe.allocations == 0 && probe.frees == 0 && probe.locks == 0)
        // The output is the input times the gains the worker answered: several of them, so
        // work was scheduled and answered over and over on the real-time path.
        var gains = Set<Float>()
        while let _ = capture.reader.readCycle({ record, samples in
            for frame in 0 ..< record.frameCount {
                let input = TestSignal.sample(channel: 0, frame: UInt32(truncatingIfNeeded: record.frameTime + UInt64(frame)))
                if input != 0, samples[frame] != 0 { gains.insert((samples[frame] / input * 4).rounded() / 4) }
            }
        }) {}
        #expect(gains.count >= 6, "gains seen at the output: \(gains.sorted())")
    }
}

extension JackServerSuite.RealtimeSafetyTests {
    @Test("transport-following playback (8 channels; the transport started, relocated while rolling and stopped: slow-sync calls and seeks on the process thread): zero allocations, frees and mutex locks")
    func transportPlaybackIsAllocationFree() throws {
        let client = try JackClient(name: TestServer.uniqueClientName("rttransport"), exactName: true)
        let ports = try client.registerPorts(prefix: "out_", count: 8, direction: .output)
        let (processor, feeder) = TransportPlaybackProcessor.make(channelCount: 8, capacityFrames: 48000, readyFrames: 4096, meterWindowFrames: 2400)
        let watchedBefore = aq_probe_watched_thread_count()
        try client.setThreadInitCallback(aq_probe_watch_current_thread)
        client.stopTransport()
        try client.activate(processor: processor, outputs: ports)
        var processThread = [client.processThreadID]
        aq_probe_count_only(&processThread, 1)
        defer { aq_probe_count_only(nil, 0) }
        // The feeder thread: services seeks, keeps the ring full (a constant, as a file would).
        let feeding = UnsafeCounter()
        let feederThread = Thread {
            let chunk = [Float](repeating: 0.25, count: 8 * 1024)
            while feeding.value == 0 {
                _ = feeder.serviceSeek(milliseconds: 20)
                if !feeder.hasPendingSeek, feeder.writableFrameCount >= 1024 {
                    chunk.withUnsafeBufferPointer { feeder.write($0.baseAddress!, frameCount: 1024) }
                } else {
                    feeder.waitForCycle(milliseconds: 5)
                }
            }
            feeding.value = 2
        }
        feederThread.start()
        usleep(300_000)
        #expect(aq_probe_watched_thread_count() > watchedBefore)
        aq_probe_reset_and_enable()
        try client.locateTransport(to: 96_000)
        client.startTransport()
        usleep(800_000)
        try client.locateTransport(to: 480_000)
        usleep(800_000)
        client.stopTransport()
        usleep(200_000)
        aq_probe_disable()
        let allocations = aq_probe_allocation_count()
        let frees = aq_probe_free_count()
        let locks = aq_probe_mutex_lock_count()
        feeding.value = 1
        while feeding.value != 2 { usleep(1000) }
        try client.deactivate()
        client.close()
        let played = processor.playedFrameCount.load(ordering: .relaxed)
        print("transport playback: played \(played), missed \(processor.missedFrameCount.load(ordering: .relaxed)), seeks \(processor.seekCount.load(ordering: .relaxed)); allocations \(allocations), frees \(frees), mutex locks \(locks)")
        #expect(played > 48000 && processor.seekCount.load(ordering: .relaxed) >= 2)
        #expect(allocations == 0)
        #expect(frees == 0)
        #expect(locks == 0)
    }
}

extension JackServerSuite.RealtimeSafetyTests {
    @Test("plugin graph host (swh amp into swh's fastLookaheadLimiter beside a dry path, two channels; midi_in to midi_out delayed 240 frames with them, a note every 5 ms) with a new graph swapped in every 100 ms, the amp's gain set and the limiter bypassed or not at each: zero allocations, frees and mutex locks on the process thread, every swap taken")
    func graphSwapsAreAllocationFree() throws {
        let world = LV2World()
        let amp = try LV2GraphNode(id: "amp", instance: LV2PluginInstance(world: world, uri: "http://plugin.org.uk/swh-plugins/amp", sampleRate: 48000, maximumBlock: 1024))
        let limiter = try LV2GraphNode(id: "lim", instance: LV2PluginInstance(world: world, uri: "http://plugin.org.uk/swh-plugins/fastLookaheadLimiter",
                                                                             sampleRate: 48000, maximumBlock: 1024))
        /// The graph with or without the amp before the limiter.
        func graph(withAmp: Bool) throws -> PluginGraph {
            var graph = PluginGraph(inputs: 2, outputs: 2)
            try graph.add(limiter.node)
            if withAmp { try graph.add(amp.node) }
            for channel in 0 ..< 2 {
                let port = "in_\(channel + 1)"
                if withAmp, channel == 0 {
                    try graph.connect(.graphInput(0), to: .plugin(node: "amp", port: "input"))
                    try graph.connect(.plugin(node: "amp", port: "output"), to: .plugin(node: "lim", port: port))
                } else {
                    try graph.connect(.graphInput(channel), to: .plugin(node: "lim", port: port))
                }
                try graph.connect(.plugin(node: "lim", port: "out_\(channel + 1)"), to: .graphOutput(channel))
                try graph.connect(.graphInput(channel), to: .graphOutput(channel))
            }
            // Through a MIDI delay line: the events wait the limiter's 240 frames.
            try graph.connect(.midiInput, to: .midiOutput)
            return graph
        }
        let kernels = ["amp": amp.kernel, "lim": limiter.kernel]
        let generator = try GeneratorClient(name: TestServer.uniqueClientName("rtgraphgen"), channelCount: 2)
        let client = try JackClient(name: TestServer.uniqueClientName("rtgraph"), exactName: true)
        let driver = JackDriver(client: client)
        let host = try GraphHost(driver: driver, inputs: 2, outputs: 2, midi: true)
        let first = try graph(withAmp: true)
        try host.run(GraphRunner(graph: first, plan: GraphPlan(first), kernels: kernels, maximumFrames: 1024))
        try client.setThreadInitCallback(aq_probe_watch_current_thread)
        try host.start()
        defer { host.stop(); client.close() }
        for channel in 0 ..< 2 { _ = try client.connect(generator.portNames[channel], to: host.inputs[channel]) }
        let noteStart = UInt64(client.estimatedFrameTime) + 4_800
        let notes = try MIDINoteClient(name: TestServer.uniqueClientName("rtgraphnotes"), notes: (0 ..< 900).map { (noteStart + UInt64($0) * 240, UInt8(40 + $0 % 40)) },
                                       lengthFrames: 120)
        _ = try client.connect(notes.portName, to: host.midiInput!)
        #expect(driver.processingLatency == 240)
        usleep(500_000)   // warm-up
        var processThreads = [client.processThreadID]
        #expect(processThreads[0] != 0)
        aq_probe_count_only(&processThreads, 1)
        defer { aq_probe_count_only(nil, 0) }
        // Each runner is made (and the one it replaces released) on this thread, which the
        // probe does not count; the hand-over itself is what the process thread does.
        var swaps = 0, taken = 0
        aq_probe_reset_and_enable()
        let until = Date().addingTimeInterval(3)
        while Date() < until {
            let next = try graph(withAmp: swaps % 2 == 1)
            if try host.run(GraphRunner(graph: next, plan: GraphPlan(next), kernels: kernels, maximumFrames: 1024)) { taken += 1 }
            swaps += 1
            // Controls changed and the limiter bypassed while it runs (the control socket's set
            // and bypass): queued here, applied on the process thread.
            try amp.set("gain", to: Float(swaps % 12))
            limiter.bypass.isOn = swaps % 3 == 0
            usleep(100_000)
        }
        aq_probe_disable()
        let allocations = aq_probe_allocation_count(), frees = aq_probe_free_count(), locks = aq_probe_mutex_lock_count()
        print("graph host's process thread over \(swaps) swaps, control changes and bypasses: allocations \(allocations), frees \(frees), mutex locks \(locks)")
        #expect(swaps >= 20 && taken == swaps)
        #expect(allocations == 0 && frees == 0 && locks == 0)
        withExtendedLifetime((amp, limiter, notes)) {}
    }

    @Test("record -m's MIDI capture (MIDIRecordingProcessor) fed a note every 5 ms on two ports, its ring read as it fills: zero allocations, frees and mutex locks on the process thread, every event read at its frame")
    func midiRecordingIsAllocationFree() throws {
        let clock = try JackClient(name: TestServer.uniqueClientName("rtmidirecclock"))
        let start = UInt64(clock.estimatedFrameTime) + 12_000
        clock.close()
        let notes = (0 ..< 600).map { (frame: start + UInt64($0) * 240, note: UInt8(48 + $0 % 24)) }
        let first = try MIDINoteClient(name: TestServer.uniqueClientName("rtmidirecA"), notes: notes, lengthFrames: 120)
        let second = try MIDINoteClient(name: TestServer.uniqueClientName("rtmidirecB"), notes: notes, lengthFrames: 60)
        let processor = MIDIRecordingProcessor(ringBytes: 1 << 16)
        let client = try JackClient(name: TestServer.uniqueClientName("rtmidirec"), exactName: true)
        let ports = try [client.registerPort("midi_in_1", direction: .input, isMIDI: true), client.registerPort("midi_in_2", direction: .input, isMIDI: true)]
        try client.setThreadInitCallback(aq_probe_watch_current_thread)
        try client.activate(processor: processor, midiInputs: ports)
        defer { try? client.deactivate(); client.close() }
        _ = try client.connect(first.portName, to: ports[0].name)
        _ = try client.connect(second.portName, to: ports[1].name)
        usleep(200_000)
        var processThreads = [client.processThreadID]
        aq_probe_count_only(&processThreads, 1)
        defer { aq_probe_count_only(nil, 0) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: processor.readBufferBytes, alignment: 16)
        defer { buffer.deallocate() }
        var read: [(port: Int, frame: UInt32, bytes: [UInt8])] = []
        aq_probe_reset_and_enable()
        let until = Date().addingTimeInterval(3.5)
        while Date() < until {
            while let event = processor.read(into: buffer) { read.append((event.port, event.frame, Array(event.bytes))) }
            usleep(5000)
        }
        aq_probe_disable()
        let allocations = aq_probe_allocation_count(), frees = aq_probe_free_count(), locks = aq_probe_mutex_lock_count()
        while let event = processor.read(into: buffer) { read.append((event.port, event.frame, Array(event.bytes))) }
        print("MIDI recording's process thread: allocations \(allocations), frees \(frees), mutex locks \(locks), \(read.count) events read")
        #expect(allocations == 0 && frees == 0 && locks == 0)
        #expect(processor.droppedEvents.load(ordering: .relaxed) == 0)
        // Every note-on read is one sent, at its frame, on both ports.
        let sent = Dictionary(uniqueKeysWithValues: notes.map { (UInt32(truncatingIfNeeded: $0.frame), $0.note) })
        let ons = read.filter { $0.bytes.first == 0x90 }
        #expect(ons.count > 800 && ons.allSatisfy { sent[$0.frame] == $0.bytes[1] }, "\(ons.count) note-ons; first wrong: \(String(describing: ons.first { sent[$0.frame] != $0.bytes[1] }))")
        #expect(Set(ons.map(\.port)) == [0, 1])
    }
}

extension JackServerSuite.RealtimeSafetyTests {
    @Test("a live graph under a control load (what the control socket drives): amp into the limiter, 100 commands a second for 10 s (gain set, values read, the limiter bypassed and back, a node added and removed every second) while a MIDI client moves the mapped gain every 10 ms: zero allocations, frees and mutex locks on the process thread, every command taken")
    func liveGraphUnderCommandLoad() throws {
        let generator = try GeneratorClient(name: TestServer.uniqueClientName("rtlivegen"), channelCount: 1)
        let start = UInt64(generator.client.estimatedFrameTime) + 24_000
        let changes = (0 ..< 1_200).map { (frame: start + UInt64($0) * 480, bytes: [0xB0, 7, UInt8($0 % 128)] as [UInt8]) }
        let controller = try MIDINoteClient(name: TestServer.uniqueClientName("rtlivecc"), messages: changes)
        let client = try JackClient(name: TestServer.uniqueClientName("rtlive"), exactName: true)
        let live = try LiveGraph(world: LV2World(), driver: JackDriver(client: client), inputs: 1, outputs: 1)
        try live.add("http://plugin.org.uk/swh-plugins/amp", id: "amp")
        try live.add("http://plugin.org.uk/swh-plugins/fastLookaheadLimiter", id: "lim")
        for (source, destination) in [("in_1", "amp:input"), ("amp:output", "lim:in_1"), ("lim:out_1", "out_1")] { try live.connect(source, destination) }
        try live.mapMIDI("amp", "gain", channel: 1, controller: 7, minimum: -12, maximum: 12)
        try client.setThreadInitCallback(aq_probe_watch_current_thread)
        try live.start()
        defer { live.stop(); client.close() }
        _ = try client.connect(generator.portNames[0], to: live.host.inputs[0])
        _ = try client.connect(controller.portName, to: try #require(live.host.midiInput))
        usleep(500_000)   // warm-up
        var processThreads = [client.processThreadID]
        aq_probe_count_only(&processThreads, 1)
        defer { aq_probe_count_only(nil, 0) }
        var commands = 0, refused = 0
        aq_probe_reset_and_enable()
        let until = Date().addingTimeInterval(10)
        while Date() < until {
            do throws(GraphError) {
                switch commands % 100 {
                case 50: try live.add("http://plugin.org.uk/swh-plugins/amp", id: "extra")
                case 99: try live.remove("extra")
                case let step where step % 4 == 0: try live.set("amp", "gain", to: Float(step % 24 - 12))
                case let step where step % 4 == 1: try live.bypass("lim", step % 8 == 1)
                default: _ = try live.value("lim", "attenuation") + live.value("amp", "gain")
                }
            } catch {
                refused += 1
            }
            commands += 1
            usleep(10_000)
        }
        aq_probe_disable()
        let allocations = aq_probe_allocation_count(), frees = aq_probe_free_count(), locks = aq_probe_mutex_lock_count()
        let sent = controller.processor.sentCount.load(ordering: .relaxed)
        print("live graph's process thread over \(commands) commands and \(sent) MIDI control changes: allocations \(allocations), frees \(frees), mutex locks \(locks), xruns \(client.notifications.xrunCount.load(ordering: .relaxed))")
        #expect(commands >= 800 && refused == 0 && sent >= 500)
        #expect(allocations == 0 && frees == 0 && locks == 0)
    }

    @Test("play FILE.mid's sequence player (MIDISequenceProcessor) sending a note every 5 ms, then stopped with notes sounding: zero allocations, frees and mutex locks on the process thread, every event at its frame, the sounding notes turned off")
    func midiPlaybackIsAllocationFree() throws {
        // 600 notes 240 frames apart, each 1,000 frames long (four sound at once), then SysEx.
        var events: [(offset: UInt64, bytes: [UInt8])] = []
        for index in 0 ..< 600 {
            events.append((UInt64(index) * 240, [0x90 | UInt8(index % 4), UInt8(40 + index % 40), 100]))
            events.append((UInt64(index) * 240 + 1000, [0x80 | UInt8(index % 4), UInt8(40 + index % 40), 0]))
        }
        events.sort { $0.offset < $1.offset }
        let processor = MIDISequenceProcessor(events: events)
        let capture = try MIDICaptureClient(name: TestServer.uniqueClientName("rtmidiplaycap"))
        let client = try JackClient(name: TestServer.uniqueClientName("rtmidiplay"), exactName: true)
        let port = try client.registerPort("midi_out", direction: .output, isMIDI: true)
        try client.setThreadInitCallback(aq_probe_watch_current_thread)
        try client.activate(processor: processor, midiOutputs: [port])
        defer { try? client.deactivate(); client.close() }
        _ = try client.connect(port.name, to: capture.portName)
        usleep(200_000)
        var processThreads = [client.processThreadID]
        aq_probe_count_only(&processThreads, 1)
        defer { aq_probe_count_only(nil, 0) }
        let start = client.estimatedFrameTime &+ 4800
        aq_probe_reset_and_enable()
        processor.start(atFrame: start)
        usleep(2_000_000)   // 96,000 frames: about 390 notes of 600
        processor.stop()
        for _ in 0 ..< 100 where !processor.isDone.load(ordering: .acquiring) { usleep(10_000) }
        usleep(100_000)
        aq_probe_disable()
        let allocations = aq_probe_allocation_count(), frees = aq_probe_free_count(), locks = aq_probe_mutex_lock_count()
        let got = capture.events
        print("MIDI playback's process thread: allocations \(allocations), frees \(frees), mutex locks \(locks), \(got.count) events")
        #expect(allocations == 0 && frees == 0 && locks == 0)
        let done = processor.isDone.load(ordering: .relaxed)
        #expect(done)
        // The events sent are the sequence's first ones at their frames (late ones counted),
        // then a note-off for each note still on: every note-on has its note-off. Events the
        // port could not carry are counted (midiEventsLost): the captured ones are matched to
        // the sequence by their bytes, in order, and only those counted may be missing.
        let sent = processor.sentEvents.load(ordering: .relaxed), late = processor.lateEvents.load(ordering: .relaxed)
        let lost = Int(client.processTiming.midiEventsLost)
        #expect(sent > 500 && got.count > sent - lost, "\(sent) sent, \(lost) lost, \(got.count) captured")
        // After a server xrun the capture client may run a cycle under the next cycle's frame
        // time (seen in CI with 2,000 xruns: frames one period off their content, nothing
        // dropped); an event one period off is then the capture's, not the player's.
        let xruns = client.notifications.xrunCount.load(ordering: .relaxed), period = Int64(client.bufferSize)
        var next = 0, missing = 0, offFrame: [String] = [], relabelled = 0
        for event in got.prefix(sent - lost) {
            while next < sent, events[next].bytes != event.bytes {
                next += 1
                missing += 1
            }
            guard next < sent else { break }
            let error = Int64(event.frame) - Int64(start) - Int64(events[next].offset)
            if error != 0 {
                if xruns > 0, abs(error) == period { relabelled += 1 } else { offFrame.append("\(event) for \(events[next])") }
            }
            next += 1
        }
        if relabelled > 0 { print("MIDI playback: \(relabelled) events captured one period off after \(xruns) xruns") }
        #expect(missing <= lost, "\(missing) events of the sequence not captured, \(lost) counted lost")
        #expect(offFrame.count <= late, "\(offFrame.count) events off their frame, \(late) counted late; first \(offFrame.first ?? "")")
        var sounding = Set<[UInt8]>()
        for event in got {
            let key = [event.bytes[0] & 0x0F, event.bytes[1]]
            if event.bytes[0] & 0xF0 == 0x90 { sounding.insert(key) } else { sounding.remove(key) }
        }
        #expect(sounding.isEmpty && got.count > sent, "still sounding: \(sounding)")
    }
}
