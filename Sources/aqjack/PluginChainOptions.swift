import AQPlugins

/// `--plugin URI_OR_LABEL [--set SYMBOL=VALUE ...] [--preset URI_OR_LABEL]`, repeatable: a chain
/// of plugins in the order given, LV2 (a URI) or LADSPA (a label or `urn:ladspa:ID`:
/// ``PluginFormat``); `--lv2` is the same option. Each `--set` and `--preset` applies to the
/// plugin before it (and in their order: a `--set` after a `--preset` overrides the preset's value).
struct PluginChainOptions {
    struct Plugin {
        var uri: String
        var settings: [LV2Stage.Setting] = []
    }
    var plugins: [Plugin] = []

    var isEmpty: Bool { plugins.isEmpty }

    /// Takes `option` when it is one of the chain's; false for another option.
    mutating func parse(_ option: String, from cursor: inout ArgumentCursor) throws(UsageError) -> Bool {
        switch option {
        case "--lv2", "--plugin":
            plugins.append(Plugin(uri: try cursor.value(for: option, expected: "an LV2 plugin URI or a LADSPA label, e.g. \(option) http://plugin.org.uk/swh-plugins/amp or \(option) amp_mono (aqjack plugins lists them)")))
        case "--set":
            let text = try cursor.value(for: "--set", expected: "SYMBOL=VALUE, e.g. --set gain=6")
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, let value = Float(parts[1]), value.isFinite else {
                throw UsageError(message: "--set '\(text)': expected SYMBOL=VALUE with a number, e.g. --set gain=6")
            }
            try appendSetting(.control(symbol: parts[0], value: value), option: "--set")
        case "--preset":
            let name = try cursor.value(for: "--preset", expected: "a preset URI or label of the --lv2 plugin before it")
            try appendSetting(.preset(name), option: "--preset")
        default:
            return false
        }
        return true
    }

    private mutating func appendSetting(_ setting: LV2Stage.Setting, option: String) throws(UsageError) {
        guard !plugins.isEmpty else {
            throw UsageError(message: "\(option) applies to the plugin before it: put --plugin URI_OR_LABEL first, e.g. --plugin http://plugin.org.uk/swh-plugins/amp --set gain=6")
        }
        plugins[plugins.count - 1].settings.append(setting)
    }

    /// The chain's stages for a stream of `channelCount` channels at `sampleRate` Hz.
    func makeStages(world: LV2World, channelCount: Int, sampleRate: Double) throws(PluginError) -> [LV2Stage] {
        var stages: [LV2Stage] = []
        for plugin in plugins {
            stages.append(try LV2Stage(world: world, uri: plugin.uri, settings: plugin.settings, channelCount: channelCount, sampleRate: sampleRate))
        }
        return stages
    }
}

/// The exit status for a plugin error: usage (2) for what the caller asked that the plugin does
/// not have, failure (1) for a plugin that cannot be hosted.
func exitStatus(for error: PluginError) -> Int32 {
    error.kind == .usage ? ExitStatus.usage : ExitStatus.failure
}

extension LV2World {
    /// The installed plugins; what lilv said while reading them (a bundle whose Turtle does not
    /// parse) is reported as warnings with aqjack's prefix.
    static func loadedReporting() -> LV2World {
        let world = LV2World()
        world.reportLoadMessages()
        return world
    }

    func reportLoadMessages() {
        loadMessages.forEach { Diagnostics.warning("lilv: \($0)") }
    }
}
