import AQCore
import AQJack
import AQMedia
import AQServerSuite
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

/// `aqjack convert IN OUT --graph FILE`: a saved graph rendered offline. No server needed.
@Suite("convert --graph: a saved plugin graph rendered offline (no server needed)")
struct GraphConvertTests {
    /// amp (gain `gain` dB) into swh's fastLookaheadLimiter (240 frames, at 0 dB: not limiting
    /// anything the amp lets through), beside a dry path into the same output, `channels` wide
    /// when 1 (a graph of 1 input and 1 output).
    static func writeGraph(_ path: String, gain: Float) throws {
        let text = """
        {"schema": "aqjack.graph/1", "inputs": 1, "outputs": 1,
         "nodes": [{"id": "amp", "uri": "\(PluginConvertTests.amp)", "controls": {"gain": \(gain)}, "bypass": false},
                   {"id": "lim", "uri": "\(PluginConvertTests.limiter)", "controls": {}, "bypass": false}],
         "connections": [["in_1", "amp:input"], ["amp:output", "lim:in_1"], ["lim:out_1", "out_1"], ["in_1", "out_1"]]}
        """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("amp +6 dB into the limiter beside a dry path: the output has the input's frames, aligned (the 240 frames of latency hidden), each the input × (1 + powf(10, 0.3)) to within float rounding; --graph with --lv2, a missing file and a graph of other channels than the stream's are refused (2, 1, 2) naming what is wrong")
    func rendersAligned() throws {
        let graph = ExternalTool.temporaryPath("convgraph", extension: "json")
        defer { try? FileManager.default.removeItem(atPath: graph) }
        try Self.writeGraph(graph, gain: 6)
        let input = try PluginConvertTests.sineFile("convgraphin", channels: 1, gain: -20)
        let output = ExternalTool.temporaryPath("convgraphout", extension: "wav")
        defer { for path in [input, output] { try? FileManager.default.removeItem(atPath: path) } }
        let converted = try AQJackCommand.run(["convert", input, output, "--graph", graph])
        #expect(converted.status == 0, "\(converted.standardError)")
        let dry = try SoundFileContents(path: input), wet = try SoundFileContents(path: output)
        #expect(wet.frames == dry.frames && wet.channels == 1)
        let coefficient = 1 + powf(10, 0.3)
        let far = dry.samples.indices.filter { abs(wet.samples[$0] - dry.samples[$0] * coefficient) > 1e-6 }
        #expect(far.count == 0 && dry.samples.contains { abs($0) > 0.09 }, "\(far.count) frames off, the first at \(far.first ?? -1)")

        let both = try AQJackCommand.run(["convert", input, output, "--force", "--graph", graph, "--lv2", PluginConvertTests.amp])
        #expect(both.status == 2 && both.standardError.contains("--graph and --plugin"), "\(both.standardError)")
        let missing = try AQJackCommand.run(["convert", input, output, "--force", "--graph", graph + ".none"])
        #expect(missing.status == 1 && missing.standardError.contains("cannot read the graph file"), "\(missing.standardError)")
        let wide = try AQJackCommand.run(["convert", input, output, "--force", "-c", "2", "--graph", graph])
        #expect(wide.status == 2 && wide.standardError.contains("is a graph of 1 input and 1 output; the stream has 2 channels"), "\(wide.standardError)")
    }
}

extension JackServerSuite {
    @Suite("convert --graph against aqjack host --graph on JACK")
    struct GraphConvertLiveTests {
        @Test("the same graph file (amp at -20 dB into the limiter, beside a dry path; 240 frames) hosted on JACK between the generator and a recording, and converted offline from a file of the generator's frames: every converted frame N is the recorded frame 240 after the generator's frame N, bit-exact")
        func matchesLiveHost() throws {
            let graph = temporaryPath("livegraph-\(getpid()).json")
            defer { try? FileManager.default.removeItem(atPath: graph) }
            try GraphConvertTests.writeGraph(graph, gain: -20)
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("gcgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "gcrec")
            let name = TestServer.uniqueClientName("hostgc")
            let (host, out, err) = try HostCommandTests.startHost(["--graph", graph, "-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                                  name: name, expectPort: "out_1")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            usleep(1_000_000)
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")

            // What the host played, by JACK frame (a frame before the host ran, or after it stopped, is 0).
            var live: [UInt32: Float] = [:]
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for (offset, sample) in delivery.samples.enumerated() where sample != 0 { live[first &+ UInt32(offset)] = sample }
            }
            // (Its first 240 frames hold the limiter's output of the silence it starts with: its
            // denormal guard, 4.6e-26, beside the dry path's delay line of zeros.)
            let firstPlayed = try #require(live.keys.min { Int32(bitPattern: $0 &- $1) < 0 })
            // The generator's frames from 10 cycles later on (the host running them), converted offline.
            let start = firstPlayed &+ 1_280, frames = 36_000
            let input = temporaryPath("livegraph-\(getpid())-in.wav"), output = temporaryPath("livegraph-\(getpid())-out.wav")
            defer { for path in [input, output] { try? FileManager.default.removeItem(atPath: path) } }
            try writeSignal(input, frames: frames, from: start)
            let converted = try AQJackCommand.run(["convert", input, output, "--graph", graph])
            #expect(converted.status == 0, "\(converted.standardError)")
            let offline = try SoundFileContents(path: output)
            #expect(offline.frames == frames)
            var checked = 0, wrong = 0
            for index in 0 ..< offline.frames {
                guard let recorded = live[start &+ UInt32(index) &+ 240] else { continue }
                checked += 1
                if recorded != offline.samples[index] {
                    if wrong < 5 { print("frame \(index): live \(recorded), offline \(offline.samples[index]), input \(TestSignal.sample(channel: 0, frame: start &+ UInt32(index)))") }
                    wrong += 1
                }
            }
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            print("convert --graph against the live host: \(checked) frames compared, \(wrong) differ, \(xruns) xruns")
            #expect(checked > 24_000 && checked <= frames && wrong <= xruns * 2 * 128, "\(checked) frames compared, \(wrong) differ, \(xruns) xruns")
            if xruns == 0 { #expect(wrong == 0) }
        }

        /// A float WAV of `frames` frames, frame `i` holding the generator's sample of JACK frame `from + i`.
        func writeSignal(_ path: String, frames: Int, from: UInt32) throws {
            let format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: AudioFormatValues.linearPCM,
                                                     mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                                     mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 1,
                                                     mBitsPerChannel: 32, mReserved: 0)
            let writer = try AudioFileWriter(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true)
            let samples = (0 ..< frames).map { TestSignal.sample(channel: 0, frame: from &+ UInt32($0)) }
            try samples.withUnsafeBytes { _ = try writer.writePackets($0.baseAddress!, byteCount: $0.count, startPacket: 0, packetCount: frames) }
            try writer.close()
        }
    }
}
