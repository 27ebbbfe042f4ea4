import AQPlugins
import Foundation
import Glibc

/// `aqjack plugins [PATTERN] [--json]`: the installed LV2 plugins (what lilv finds, as `lv2ls`
/// lists them) and LADSPA plugins (``LADSPACatalog``), with their audio, control and MIDI ports, control ranges, latency and presets.
/// PATTERN keeps the plugins whose URI or name contains it (case-insensitive). `--json` prints
/// `{"schema": "aqjack.plugins/1", "plugins": [...]}` (docs/CLI.md, "aqjack plugins").
///
/// `--check` runs each of them for one second of noise, each in a child process
/// (``PluginCheckRun``), and lists the ones that fail with the reason: exit 0 when none fails,
/// 1 otherwise. `--check-one URI` is that child: it prints the ``PluginCheck/Outcome`` as JSON.
struct PluginsCommand {
    var pattern: String?
    var json = false
    var check = false
    /// `--check-one URI`: the child of `--check`.
    var checkOne: String?

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("--json"): json = true
            case .option("--check"): check = true
            case .option("--check-one"): checkOne = try cursor.value(for: "--check-one", expected: "a plugin URI (what --check runs in each child)")
            case let .option(option):
                throw UsageError(message: "unknown option '\(option)' for plugins: expected --json or --check (and an optional PATTERN)")
            case let .operand(text):
                guard pattern == nil else { throw UsageError(message: "plugins takes one PATTERN; got '\(pattern!)' and '\(text)'") }
                pattern = text
            }
        }
    }

    struct Listing: Encodable {
        let schema = "aqjack.plugins/1"
        let plugins: [LV2PluginDescription]
    }

    struct CheckReport: Encodable {
        let schema = "aqjack.plugin-check/1"
        let checked: Int
        let failed: Int
        let plugins: [PluginCheck.Outcome]
    }

    func run() -> Int32 {
        if let checkOne {
            let outcome = PluginCheck.run(world: LV2World(), uri: checkOne)
            print(String(decoding: (try? JSONEncoder().encode(outcome)) ?? Data(), as: UTF8.self))
            return outcome.passed ? ExitStatus.success : ExitStatus.failure
        }
        let world = LV2World.loadedReporting()
        if check { return runChecks(uris: world.describeAll(matching: pattern).map(\.uri)) }
        let plugins = world.describeAll(matching: pattern)
        printSummary(Listing(plugins: plugins), json: json) { text(plugins) }
        return ExitStatus.success
    }

    /// `--check`: a line for each failure as it comes (text), then the count.
    private func runChecks(uris: [String]) -> Int32 {
        let outcomes = PluginCheckRun(uris: uris).run { outcome in
            guard !json, !outcome.passed else { return }
            print("FAIL \(outcome.uri): \(outcome.reason ?? "no reason given")")
            fflush(nil)
        }
        let failed = outcomes.filter { !$0.passed }.count
        printSummary(CheckReport(checked: outcomes.count, failed: failed, plugins: outcomes), json: json) {
            "checked \(outcomes.count) plugin\(outcomes.count == 1 ? "" : "s") for 1 s of white noise each: \(outcomes.count - failed) passed, \(failed) failed"
        }
        return failed == 0 ? ExitStatus.success : ExitStatus.failure
    }

    private func text(_ plugins: [LV2PluginDescription]) -> String {
        guard !plugins.isEmpty else { return pattern.map { "no installed LV2 plugin matches '\($0)'" } ?? "no LV2 plugins are installed (lilv looks in LV2_PATH, ~/.lv2, /usr/lib/lv2 ...)" }
        var lines: [String] = []
        for plugin in plugins {
            lines.append("\(plugin.uri)  \(plugin.name)" + (plugin.label.map { "  (LADSPA label \($0))" } ?? ""))
            let cvIn = plugin.signalInputs.count - plugin.audioInputs.count, cvOut = plugin.signalOutputs.count - plugin.audioOutputs.count
            let counts = [("CV in", cvIn), ("CV out", cvOut), ("MIDI in", plugin.midiInputs.count), ("MIDI out", plugin.midiOutputs.count)]
            lines.append("  audio in \(plugin.audioInputs.count), out \(plugin.audioOutputs.count)"
                         + counts.filter { $0.1 > 0 }.map { ", \($0.0) \($0.1)" }.joined()
                         + (plugin.latencyPort.map { ", reports latency (\($0))" } ?? "")
                         + (plugin.presets.isEmpty ? "" : ", \(plugin.presets.count) preset\(plugin.presets.count == 1 ? "" : "s")"))
            for port in plugin.controlInputs {
                lines.append("  --set \(port.symbol)=  \(port.name): \(port.rangeText)")
            }
        }
        lines.append("\(plugins.count) plugin\(plugins.count == 1 ? "" : "s")")
        return lines.joined(separator: "\n")
    }
}
