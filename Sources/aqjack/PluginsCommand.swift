import AQPlugins
import Foundation

/// `aqjack plugins [PATTERN] [--json]`: the installed LV2 plugins (what lilv finds, as `lv2ls`
/// lists them), with their audio, control and MIDI ports, control ranges, latency and presets.
/// PATTERN keeps the plugins whose URI or name contains it (case-insensitive). `--json` prints
/// `{"schema": "aqjack.plugins/1", "plugins": [...]}` (docs/CLI.md, "aqjack plugins").
struct PluginsCommand {
    var pattern: String?
    var json = false

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("--json"): json = true
            case let .option(option):
                throw UsageError(message: "unknown option '\(option)' for plugins: expected --json (and an optional PATTERN)")
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

    func run() -> Int32 {
        let plugins = LV2World.loadedReporting().describeAll(matching: pattern)
        printSummary(Listing(plugins: plugins), json: json) { text(plugins) }
        return ExitStatus.success
    }

    private func text(_ plugins: [LV2PluginDescription]) -> String {
        guard !plugins.isEmpty else { return pattern.map { "no installed LV2 plugin matches '\($0)'" } ?? "no LV2 plugins are installed (lilv looks in LV2_PATH, ~/.lv2, /usr/lib/lv2 ...)" }
        var lines: [String] = []
        for plugin in plugins {
            lines.append("\(plugin.uri)  \(plugin.name)")
            let midi = plugin.midiInputs.count
            lines.append("  audio in \(plugin.audioInputs.count), out \(plugin.audioOutputs.count)" + (midi > 0 ? ", MIDI in \(midi)" : "")
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
