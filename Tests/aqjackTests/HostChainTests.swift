import AQCore
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    /// `aqjack host URI URI ...`: a chain of plugins run as a plugin graph on the server.
    @Suite("aqjack host with a chain of plugins")
    struct HostChainTests {
        @Test("host amp --set gain=6 amp --set gain=0 between the generator and a recording queue: every sample is the generator's × powf(10, 6/20), exactly (the second amp's coefficient is 1); the summary names both plugins")
        func ampChainLive() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("chaingen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "chainrec")
            let name = TestServer.uniqueClientName("hostchain")
            let (host, out, err) = try HostCommandTests.startHost([PluginConvertTests.amp, "--set", "gain=6", PluginConvertTests.amp, "--set", "gain=0",
                                                                   "-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                                  name: name, expectPort: "out_1")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            usleep(1_000_000)
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            HostCommandTests.expectGained(log, by: powf(10, 6.0 / 20), generator: generator)
            let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
            #expect(summary?["plugins"] as? [String] == [PluginConvertTests.amp, PluginConvertTests.amp])
            #expect(summary?["latencyFrames"] as? Int == 0 && summary?["exitReason"] as? String == "interrupt")
        }

        @Test("host amp --set gain=6 limiter (the issue's example): the mono amp runs once per channel of the stereo limiter; JACK shows the limiter's 240 frames on out_1 and out_2")
        func monoAmpIntoStereoLimiter() throws {
            let name = TestServer.uniqueClientName("hostamplim")
            let (host, out, err) = try HostCommandTests.startHost([PluginConvertTests.amp, "--set", "gain=6", PluginConvertTests.limiter], name: name, expectPort: "out_2")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let listing = try AQJackCommand.run(["--ports", "\(name):*", "--json"])
            host.terminate()
            let hostExit = host.exitStatus()
            #expect(hostExit.status == 0, "\(String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))")
            for port in ["out_1", "out_2"] {
                #expect(HostCommandTests.latency(of: "\(name):\(port)", "capture", in: listing.standardOutput) == [240, 240], "\(listing.standardOutput)")
            }
            let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
            #expect(summary?["inputs"] as? [String] == ["\(name):in_1", "\(name):in_2"] && summary?["latencyFrames"] as? Int == 240)
        }

        @Test("host limiter limiter: the chain's latency, 480 frames (240 each), is what JACK shows on its outputs (capture) and inputs (playback)")
        func limiterChainLatency() throws {
            let name = TestServer.uniqueClientName("hostlimlim")
            let (host, out, err) = try HostCommandTests.startHost([PluginConvertTests.limiter, PluginConvertTests.limiter], name: name, expectPort: "out_2")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let listing = try AQJackCommand.run(["--ports", "\(name):*", "--json"])
            host.terminate()
            let hostExit = host.exitStatus()
            #expect(hostExit.status == 0, "\(String(decoding: (try? Data(contentsOf: err)) ?? Data(), as: UTF8.self))")
            let latency = { (port: String, mode: String) in HostCommandTests.latency(of: "\(name):\(port)", mode, in: listing.standardOutput) }
            #expect(latency("out_1", "capture") == [480, 480], "\(listing.standardOutput)")
            #expect(latency("out_2", "capture") == [480, 480])
            #expect(latency("in_1", "playback") == [480, 480])
            let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]
            #expect(summary?["latencyFrames"] as? Int == 480 && summary?["exitReason"] as? String == "terminate")
        }
    }
}
