import AQCore
import AQPlugins
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

/// LADSPA plugins (Debian's swh-plugins, cmt, tap-plugins, through ladspa-sdk's header) in
/// `aqjack plugins`, `convert --plugin` and the plugin graph. No server needed.
@Suite("LADSPA plugins: plugins, convert --plugin and the graph (no server needed)")
struct LADSPATests {
    /// swh's amp and limiter as LADSPA labels.
    static let amp = "amp", limiter = "fastLookaheadLimiter"

    @Test("aqjack plugins lists every LADSPA plugin ladspa-sdk's listplugins lists (by unique ID), each as urn:ladspa:ID with its label, format ladspa, ports named by symbols made from their names, ranges from the hints, and the limiter's latency port")
    func listing() throws {
        let listed = try ExternalTool.run("env", ["LADSPA_PATH=/usr/lib/ladspa", "listplugins"])
        let reference = Set(listed.standardOutput.split(separator: "\n").compactMap { line -> String? in
            guard let open = line.lastIndex(of: "("), let slash = line[open...].firstIndex(of: "/") else { return nil }
            return String(line[line.index(after: open) ..< slash])
        })
        let result = try AQJackCommand.run(["plugins", "--json"])
        let plugins = try #require((try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])?["plugins"] as? [[String: Any]])
        let ladspa = plugins.filter { $0["format"] as? String == "ladspa" }
        let ours = Set(ladspa.compactMap { ($0["uri"] as? String)?.replacingOccurrences(of: "urn:ladspa:", with: "") })
        #expect(reference.count > 150 && ours == reference, "missing \(reference.subtracting(ours).sorted()), extra \(ours.subtracting(reference).sorted())")
        let amp = try #require(ladspa.first { $0["uri"] as? String == "urn:ladspa:1181" })
        #expect(amp["label"] as? String == "amp" && amp["name"] as? String == "Simple amplifier")
        let gain = (amp["ports"] as? [[String: Any]])?.first { $0["kind"] as? String == "control" }
        #expect(gain?["symbol"] as? String == "amps_gain_db" && gain?["minimum"] as? Double == -70 && gain?["maximum"] as? Double == 70 && gain?["default"] as? Double == 0)
        let limiter = try #require(ladspa.first { $0["label"] as? String == Self.limiter })
        #expect(limiter["latencyPort"] as? String == "latency")
        #expect(plugins.filter { $0["format"] as? String == "lv2" }.count > 100)
    }

    @Test("convert --plugin amp --set amps_gain_db=6 (LADSPA swh, mono, once per channel on stereo) writes the same file as the LV2 swh amp at gain=6, bit for bit, every sample the input × powf(10, 0.3); the LADSPA limiter below its limit equals the LV2 one, its 240 frames hidden; an unknown label, symbol, out-of-range value or preset exits 2 naming it")
    func convertMatchesLV2() throws {
        let input = try PluginConvertTests.sineFile("ladspa-in", channels: 2, gain: -20)
        let outputs = (1 ... 4).map { ExternalTool.temporaryPath("ladspa-out\($0)", extension: "wav") }
        defer { for path in [input] + outputs { try? FileManager.default.removeItem(atPath: path) } }
        for (output, plugin) in zip(outputs, [[Self.amp, "--set", "amps_gain_db=6"], [PluginConvertTests.amp, "--set", "gain=6"],
                                              [Self.limiter, "--set", "input_gain_db=6"], [PluginConvertTests.limiter, "--set", "ingain=6"]]) {
            let result = try AQJackCommand.run(["convert", input, output, "--plugin"] + plugin)
            try #require(result.status == 0, "\(plugin): \(result.standardError)")
        }
        let dry = try SoundFileContents(path: input).samples
        let ladspaAmp = try SoundFileContents(path: outputs[0]).samples, lv2Amp = try SoundFileContents(path: outputs[1]).samples
        #expect(ladspaAmp == lv2Amp && ladspaAmp.count == dry.count)
        let coefficient = powf(10, 0.3)
        #expect(zip(dry, ladspaAmp).allSatisfy { $0 * coefficient == $1 })
        let ladspaLimiter = try SoundFileContents(path: outputs[2]).samples, lv2Limiter = try SoundFileContents(path: outputs[3]).samples
        #expect(ladspaLimiter == lv2Limiter && ladspaLimiter.count == dry.count && ladspaLimiter.contains { $0 != 0 })

        for (arguments, words) in [(["--plugin", "nosuchlabel"], "no installed LADSPA plugin is 'nosuchlabel'"),
                                   (["--plugin", "urn:ladspa:999999"], "no installed LADSPA plugin is 'urn:ladspa:999999'"),
                                   (["--plugin", Self.amp, "--set", "gain=1"], "has no control input 'gain': expected one of amps_gain_db"),
                                   (["--plugin", Self.amp, "--set", "amps_gain_db=80"], "amps_gain_db=80.0 is out of range for 'Simple amplifier': expected -70 ... 70"),
                                   (["--plugin", Self.amp, "--preset", "loud"], "LADSPA plugins have no presets")] {
            let result = try AQJackCommand.run(["convert", input, outputs[0], "--force"] + arguments)
            #expect(result.status == 2 && result.standardError.contains(words), "\(arguments): \(result.standardError)")
        }
    }
}

extension JackServerSuite {
    @Suite("aqjack host with LADSPA plugins")
    struct LADSPAHostTests {
        @Test("host amp --set amps_gain_db=6 (the LADSPA label) between the generator and a recording: every sample the generator's × powf(10, 0.3), exactly; host fastLookaheadLimiter: JACK shows its 240 frames on out_1")
        func hostLADSPA() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("ladgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "ladrec")
            let name = TestServer.uniqueClientName("hostlad")
            let (host, out, err) = try HostCommandTests.startHost([LADSPATests.amp, "--set", "amps_gain_db=6", "-i", "\(generator.client.name):out_1",
                                                                   "-o", "\(recorder.driver.name):in_1"], name: name, expectPort: "out_1")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            usleep(1_000_000)
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            HostCommandTests.expectGained(log, by: powf(10, 0.3), generator: generator)

            let limiterName = TestServer.uniqueClientName("hostladlim")
            let (limiter, out2, err2) = try HostCommandTests.startHost([LADSPATests.limiter], name: limiterName, expectPort: "out_1")
            defer { for file in [out2, err2] { try? FileManager.default.removeItem(at: file) } }
            let listing = try AQJackCommand.run(["--ports", "\(limiterName):*", "--json"])
            #expect(HostCommandTests.latency(of: "\(limiterName):out_1", "capture", in: listing.standardOutput) == [240, 240], "\(listing.standardOutput)")
            limiter.interrupt()
            #expect(limiter.exitStatus().status == 0)
        }
    }
}
