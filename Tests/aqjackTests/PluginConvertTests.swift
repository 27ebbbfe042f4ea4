import AQPlugins
import AQTestSupport
import Foundation
import Testing

/// `aqjack convert --lv2` and `aqjack plugins` against the real plugins of Debian's swh-lv2 and
/// mda-lv2 (installed by Scripts/setup.sh), compared with lilv's own `lv2ls`. No server needed.
@Suite("LV2 plugins: aqjack plugins and convert --lv2 (no server needed)")
struct PluginConvertTests {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"
    static let limiter = "http://plugin.org.uk/swh-plugins/fastLookaheadLimiter"
    static let artificialLatency = "http://plugin.org.uk/swh-plugins/artificialLatency"
    static let jx10 = "http://drobilla.net/plugins/mda/JX10"

    /// A float WAV of `channels` sines (440 Hz × channel number) at `gain` dB, 1 s at 48 kHz.
    static func sineFile(_ name: String, channels: Int = 2, gain: Double = -12) throws -> String {
        let path = ExternalTool.temporaryPath(name, extension: "wav")
        var arguments = ["-V1", "-n", "-r", "48000", "-c", String(channels), "-e", "floating-point", "-b", "32", path, "synth", "1"]
        for channel in 1 ... channels { arguments += ["sine", String(440 * channel)] }
        arguments += ["gain", String(gain)]
        let made = try ExternalTool.run("sox", arguments)
        #expect(made.status == 0, "\(made.standardError)")
        return path
    }

    static func channel(_ samples: [Float], _ channel: Int, of channels: Int) -> [Float] {
        stride(from: channel, to: samples.count, by: channels).map { samples[$0] }
    }

    static func rms(_ values: [Float]) -> Double {
        (values.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(values.count, 1))).squareRoot()
    }

    @Test("convert --lv2 swh amp --set gain=6: +6.00 dB ± 0.01 on every channel, every frame kept")
    func ampGain() throws {
        let input = try Self.sineFile("lv2-amp-in", channels: 3)
        let output = ExternalTool.temporaryPath("lv2-amp-out", extension: "wav")
        defer { for path in [input, output] { try? FileManager.default.removeItem(atPath: path) } }
        let result = try AQJackCommand.run(["convert", input, output, "--lv2", Self.amp, "--set", "gain=6"])
        #expect(result.status == 0, "\(result.standardError)")
        let before = try SoundFileContents(path: input), after = try SoundFileContents(path: output)
        #expect(after.frames == before.frames)
        #expect(after.channels == 3)
        for channel in 0 ..< 3 {
            let gain = 20 * log10(Self.rms(Self.channel(after.samples, channel, of: 3)) / Self.rms(Self.channel(before.samples, channel, of: 3)))
            #expect(abs(gain - 6) <= 0.01, "channel \(channel + 1): \(gain) dB")
        }
    }

    @Test("a plugin's reported latency is compensated: through the 240-frame look-ahead limiter (signal below its limit) the output's frame n is the input's frame n, the same length")
    func limiterLatencyCompensated() throws {
        let input = try Self.sineFile("lv2-limit-in", gain: -20)
        let output = ExternalTool.temporaryPath("lv2-limit-out", extension: "wav")
        defer { for path in [input, output] { try? FileManager.default.removeItem(atPath: path) } }
        let result = try AQJackCommand.run(["convert", input, output, "--lv2", Self.limiter])
        #expect(result.status == 0, "\(result.standardError)")
        let before = try SoundFileContents(path: input).samples, after = try SoundFileContents(path: output).samples
        #expect(after.count == before.count)
        let error = zip(before, after).map { Double($0 - $1) }
        let snr = 10 * log10(before.reduce(0.0) { $0 + Double($1) * Double($1) } / max(error.reduce(0.0) { $0 + $1 * $1 }, 1e-30))
        #expect(snr >= 60, "SNR \(snr) dB against the input, unshifted")
    }

    @Test("swh artificialLatency reports latency without delaying: a compensating host shifts its output earlier by exactly that many frames")
    func artificialLatencyShift() throws {
        let input = try Self.sineFile("lv2-latency-in", channels: 1)
        let output = ExternalTool.temporaryPath("lv2-latency-out", extension: "wav")
        defer { for path in [input, output] { try? FileManager.default.removeItem(atPath: path) } }
        let listing = try AQJackCommand.run(["plugins", Self.artificialLatency, "--json"])
        #expect(listing.status == 0)
        // Its delay control is in milliseconds: 10 ms at 48 kHz is 480 frames.
        let result = try AQJackCommand.run(["convert", input, output, "--lv2", Self.artificialLatency, "--set", "delay=10"])
        #expect(result.status == 0, "\(result.standardError)")
        let before = try SoundFileContents(path: input).samples, after = try SoundFileContents(path: output).samples
        #expect(after.count == before.count)
        #expect(Array(after.prefix(before.count - 480)) == Array(before.dropFirst(480)))
        #expect(after.suffix(480).allSatisfy { $0 == 0 })
    }

    @Test("bad plugin input is a usage error (exit 2) naming what was wrong and what was expected")
    func badInput() throws {
        let input = try Self.sineFile("lv2-bad-in", channels: 3)
        let output = ExternalTool.temporaryPath("lv2-bad-out", extension: "wav")
        defer { for path in [input, output] { try? FileManager.default.removeItem(atPath: path) } }
        let cases: [([String], [String])] = [
            (["--lv2", "http://example.org/no-such-plugin"], ["no installed LV2 plugin has the URI 'http://example.org/no-such-plugin'", "aqjack plugins"]),
            (["--lv2", Self.amp, "--set", "volume=3"], ["no control input 'volume'", "expected one of gain"]),
            (["--lv2", Self.amp, "--set", "gain=100"], ["gain=100.0 is out of range", "expected -70 ... 70"]),
            (["--set", "gain=6", "--lv2", Self.amp], ["--set applies to the plugin before it"]),
            (["--lv2", Self.amp, "--set", "gain"], ["--set 'gain': expected SYMBOL=VALUE"]),
            (["--lv2", Self.limiter], ["has 2 audio inputs and 2 outputs", "the stream has 3 channels"]),
            (["--lv2", Self.amp, "--preset", "Loud"], ["has no preset 'Loud'", "it has no presets"]),
        ]
        for (options, phrases) in cases {
            let result = try AQJackCommand.run(["convert", input, output] + options)
            #expect(result.status == 2, "\(options): exit \(result.status), \(result.standardError)")
            for phrase in phrases { #expect(result.standardError.contains(phrase), "\(options): \(result.standardError)") }
            #expect(!FileManager.default.fileExists(atPath: output), "\(options) left an output")
        }
    }

    @Test("presets load by label (any case) and by URI to the same control values, which differ from the defaults (mda JX10's 52)")
    func presets() throws {
        let world = LV2World()
        let byLabel = try LV2PluginInstance(world: world, uri: Self.jx10, sampleRate: 48000)
        let presets = byLabel.description.presets
        #expect(presets.count == 52)
        let preset = try #require(presets.dropFirst(3).first)
        try byLabel.loadPreset(preset.label.uppercased())
        let byURI = try LV2PluginInstance(world: world, uri: Self.jx10, sampleRate: 48000)
        try byURI.loadPreset(preset.uri)
        let symbols = byLabel.description.controlInputs.map(\.symbol)
        let loaded = symbols.map { byLabel.control($0) }
        #expect(loaded == symbols.map { byURI.control($0) })
        let defaults = byLabel.description.controlInputs.map(\.defaultValue)
        #expect(zip(loaded, defaults).contains { $0 != $1 }, "preset '\(preset.label)' left every control at its default")
        #expect(throws: PluginError.self) { try byURI.loadPreset("no such preset") }
    }

    @Test("aqjack plugins --json lists every LV2 plugin lv2ls lists (format lv2), with ports, ranges, latency, MIDI and presets")
    func listing() throws {
        let reference = try ExternalTool.run("lv2ls", [])
        #expect(reference.status == 0)
        let expected = Set(reference.standardOutput.split(separator: "\n").map(String.init))
        let result = try AQJackCommand.run(["plugins", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let listing = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        #expect(listing?["schema"] as? String == "aqjack.plugins/1")
        let plugins = (listing?["plugins"] as? [[String: Any]] ?? []).filter { $0["format"] as? String == "lv2" }
        #expect(Set(plugins.compactMap { $0["uri"] as? String }) == expected)
        #expect(plugins.count == expected.count && expected.count >= 100)
        func plugin(_ uri: String) -> [String: Any]? { plugins.first { $0["uri"] as? String == uri } }
        let gain = (plugin(Self.amp)?["ports"] as? [[String: Any]])?.first { $0["symbol"] as? String == "gain" }
        #expect(gain?["kind"] as? String == "control" && gain?["minimum"] as? Double == -70 && gain?["maximum"] as? Double == 70)
        #expect(plugin(Self.limiter)?["latencyPort"] as? String == "latency")
        let jx10 = plugin(Self.jx10)
        #expect((jx10?["ports"] as? [[String: Any]])?.contains { $0["midi"] as? Bool == true && $0["direction"] as? String == "input" } == true)
        #expect((jx10?["presets"] as? [[String: Any]])?.count == 52)
    }

    @Test("plugins --check runs every installed plugin (Debian's, and two of the tests' own on LV2_PATH) for 1 s of noise, each in a child: it completes and lists every plugin; the plugin that aborts in instantiate is named as crashed (SIGABRT) while the others go on; the lv2:enabled plugin and swh amp pass; exit 1 since one failed")
    func checkEveryPlugin() throws {
        let crashing = try FeaturePluginFixture.build(), passing = try EnabledPluginFixture.build()
        defer { for folder in [crashing, passing] { try? FileManager.default.removeItem(atPath: folder) } }
        let environment = ["LV2_PATH": "\(crashing):\(passing):/usr/lib/lv2", "AQJACK_TEST_PLUGIN_ABORT": "1"]
        let listed = try AQJackCommand.run(["plugins", "--json"], environment: environment)
        let all = try #require(try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any])
        let count = (all["plugins"] as? [Any])?.count ?? 0
        let started = Date()
        let result = try AQJackCommand.run(["plugins", "--check", "--json"], environment: environment)
        let seconds = Date().timeIntervalSince(started)
        #expect(result.status == 1, "\(result.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any], "\(result.standardOutput)")
        let outcomes = try #require(report["plugins"] as? [[String: Any]])
        #expect(report["schema"] as? String == "aqjack.plugin-check/1" && report["checked"] as? Int == count && outcomes.count == count && count > 100)
        func outcome(_ uri: String) -> [String: Any]? { outcomes.first { $0["uri"] as? String == uri } }
        let crashed = outcome(FeaturePluginFixture.uri)
        #expect(crashed?["passed"] as? Bool == false && (crashed?["reason"] as? String ?? "").contains("crashed: Aborted (signal 6)"), "\(String(describing: crashed))")
        #expect(outcome(EnabledPluginFixture.uri)?["passed"] as? Bool == true)
        #expect(outcome(EnabledPluginFixture.uri)?["latency"] as? Int == EnabledPluginFixture.latency)
        #expect(outcome(Self.amp)?["passed"] as? Bool == true)
        let failures = outcomes.filter { $0["passed"] as? Bool == false }
        #expect(failures.allSatisfy { !($0["reason"] as? String ?? "").isEmpty })
        #expect(report["failed"] as? Int == failures.count)
        print("plugins --check: \(count) plugins in \(String(format: "%.1f", seconds)) s, \(failures.count) failed: "
              + failures.map { "\($0["uri"] as? String ?? "?"): \($0["reason"] as? String ?? "?")" }.joined(separator: "; "))
    }
}

/// The LV2 worker (`worker:schedule`), with the tests' own plugin that needs it.
@Suite("LV2 worker: a plugin whose gain only its worker sets (no server needed)")
struct PluginWorkerTests {
    @Test("convert --lv2 through a plugin that requires the worker (its gain is 0 until the worker answers): every frame exactly input × the gain the worker answered; a second run gives the same file")
    func workerGain() throws {
        let folder = try WorkerPluginFixture.build()
        let input = try PluginConvertTests.sineFile("lv2-worker-in", channels: 2)
        let outputs = [ExternalTool.temporaryPath("lv2-worker-out1", extension: "wav"), ExternalTool.temporaryPath("lv2-worker-out2", extension: "wav")]
        defer { for path in [input, folder] + outputs { try? FileManager.default.removeItem(atPath: path) } }
        for output in outputs {
            let result = try AQJackCommand.run(["convert", input, output, "--lv2", WorkerPluginFixture.uri, "--set", "gain=0.5"],
                                               environment: ["LV2_PATH": folder])
            try #require(result.status == 0, "\(result.standardError)")
        }
        let before = try SoundFileContents(path: input).samples, after = try SoundFileContents(path: outputs[0]).samples
        #expect(after.count == before.count)
        // The plugin's gain is 0 until its worker answers. The stage primes each instance with
        // a short run when it is made (after --set): that run schedules the work, done at once
        // off the real-time path, and its response is delivered after that run. So every frame,
        // the first included, is exactly half the input: the worker ran, in time.
        let mismatches = zip(before, after).filter { $0.0 * 0.5 != $0.1 }.count
        #expect(mismatches == 0, "\(mismatches) of \(after.count) samples are not input × 0.5")
        #expect(after.contains { $0 != 0 })
        #expect(try SoundFileContents(path: outputs[1]).samples == after, "a second render differs")
    }

    @Test("convert --lv2 through a mono plugin that requires fixed power-of-two blocks and state:makePath (NaN for a run of any other length, or a file it could not make in two new folders), on 2 channels of 10,000 frames (not a whole number of blocks): every frame exactly input × 0.5, none lost, the block's latency compensated")
    func hostFeatures() throws {
        let folder = try FeaturePluginFixture.build()
        let input = ExternalTool.temporaryPath("lv2-block-in", extension: "wav")
        let output = ExternalTool.temporaryPath("lv2-block-out", extension: "wav")
        defer { for path in [input, output, folder] { try? FileManager.default.removeItem(atPath: path) } }
        let made = try ExternalTool.run("sox", ["-V1", "-n", "-r", "48000", "-c", "2", "-e", "floating-point", "-b", "32", input,
                                                "synth", "10000s", "sine", "440", "sine", "660", "gain", "-6"])
        try #require(made.status == 0, "\(made.standardError)")
        let result = try AQJackCommand.run(["convert", input, output, "--lv2", FeaturePluginFixture.uri], environment: ["LV2_PATH": folder])
        try #require(result.status == 0, "\(result.standardError)")
        let before = try SoundFileContents(path: input).samples, after = try SoundFileContents(path: output).samples
        #expect(before.count == 20000 && after.count == before.count)
        let mismatches = zip(before, after).filter { $0.0 * 0.5 != $0.1 }.count
        #expect(mismatches == 0, "\(mismatches) of \(after.count) samples are not input × 0.5")
        #expect(after.contains { $0 != 0 })
    }

    @Test("a plugin that crashes in instantiate takes convert down with it (SIGABRT), but before any output is written: a new output is not made, an existing one (--force) is left byte for byte")
    func crashingPluginLeavesFiles() throws {
        let folder = try FeaturePluginFixture.build()
        let input = try PluginConvertTests.sineFile("lv2-crash-in", channels: 1)
        let fresh = ExternalTool.temporaryPath("lv2-crash-new", extension: "wav")
        let existing = try PluginConvertTests.sineFile("lv2-crash-old", channels: 1, gain: -3)
        defer { for path in [input, fresh, existing, folder] { try? FileManager.default.removeItem(atPath: path) } }
        let before = try Data(contentsOf: URL(fileURLWithPath: existing))
        for (output, force) in [(fresh, [String]()), (existing, ["--force"])] {
            let result = try AQJackCommand.run(["convert", input, output, "--lv2", FeaturePluginFixture.uri] + force,
                                               environment: ["LV2_PATH": folder, "AQJACK_TEST_PLUGIN_ABORT": "1"])
            #expect(!result.terminatedByExit && result.status == SIGABRT, "status \(result.status): \(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(try Data(contentsOf: URL(fileURLWithPath: existing)) == before)
    }

    @Test("aqjack plugins lists the tests' worker plugin from LV2_PATH")
    func workerPluginListed() throws {
        let folder = try WorkerPluginFixture.build()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try AQJackCommand.run(["plugins", "worker-gain"], environment: ["LV2_PATH": folder])
        #expect(result.status == 0 && result.standardOutput.contains(WorkerPluginFixture.uri), "\(result.standardOutput) \(result.standardError)")
    }
}
