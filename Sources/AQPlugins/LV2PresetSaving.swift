import CLilv
import Foundation

/// Saving an instance's settings as an LV2 preset of the user's, where jalv and Carla save
/// theirs: a bundle `PLUGIN_LABEL.preset.lv2` (names reduced to letters, digits, `-` and `_`;
/// `-2`, `-3` ... after a name another label took) in ``LV2PluginInstance/userPresetDirectory``
/// holding `manifest.ttl` and `LABEL.ttl`, the
/// preset `a pset:Preset` that `lv2:appliesTo` the plugin with its label as `rdfs:label`.
/// Every LV2 host that reads `~/.lv2` lists it; this process lists it at once.
extension LV2PluginInstance {
    /// `$HOME/.lv2` (the first folder of LV2's default search path, `LV2_PATH`).
    public static var userPresetDirectory: String {
        (ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.lv2"
    }

    /// The most characters a preset's label may have.
    public static let presetLabelLimit = 100

    /// Saves the instance's control inputs' values (those in `values` by symbol instead: a live
    /// graph's settings not yet applied) and its own state as the preset `label`, replacing a
    /// preset of this plugin saved before under the same label. The plugin may be running. The preset is then in ``presets`` and
    /// ``loadPreset(_:)`` and ``presetValues(_:)`` find it.
    /// - Returns: the preset (its URI is its file's).
    /// - Throws: a usage error for an empty label, one longer than ``presetLabelLimit`` or one
    ///   with control characters; a runtime error naming the folder when it cannot be written.
    @discardableResult
    public func savePreset(_ label: String, values: [String: Float] = [:]) throws(PluginError) -> LV2Preset {
        guard !label.trimmingCharacters(in: .whitespaces).isEmpty, label.count <= Self.presetLabelLimit,
              !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw PluginError(.usage, "'\(label)' cannot name a preset: expected 1 to \(Self.presetLabelLimit) characters, not only spaces, no control characters")
        }
        // The names of a preset of this plugin saved under this label before, else the first
        // free ones: labels that reduce to the same word ("Warm é", "Warm ü") keep apart.
        let stem = Self.fileWord(description.name) + "_" + Self.fileWord(label)
        var bundle = "", file = "", uri = "", found = false
        for number in 1 ... 1000 where !found {
            let word = number == 1 ? Self.fileWord(label) : Self.fileWord(label) + "-\(number)"
            bundle = Self.userPresetDirectory + "/" + (number == 1 ? stem : stem + "-\(number)") + ".preset.lv2"
            file = word + ".ttl"
            uri = URL(fileURLWithPath: bundle + "/" + file).absoluteString
            found = presets.contains(where: { $0.uri == uri && $0.label == label }) || !FileManager.default.fileExists(atPath: bundle)
        }
        guard found else {
            throw PluginError(.runtime, "cannot save the preset '\(label)' of '\(description.name)': 1,000 folders named after it are taken in '\(Self.userPresetDirectory)'")
        }
        do {
            try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        } catch {
            throw PluginError(.runtime, "cannot save the preset '\(label)' of '\(description.name)': cannot make '\(bundle)': \(error.localizedDescription)")
        }
        // A preset saved before under this label: its statements go, the new ones are read.
        let presetNode = world.node(uri)
        if presets.contains(where: { $0.uri == uri }) { lilv_world_unload_resource(world.world, presetNode) }
        let state = try takeState(files: bundle, values: values)
        defer { lilv_state_free(state) }
        lilv_state_set_label(state, label)
        let code = lilv_state_save(world.world, world.urids.mapFeature, world.urids.unmapFeature, state, uri, bundle, file)
        guard code == 0 else {
            throw PluginError(.runtime, "cannot save the preset '\(label)' of '\(description.name)' in '\(bundle)' (lilv_state_save: \(code))")
        }
        let bundleNode = world.node(URL(fileURLWithPath: bundle + "/", isDirectory: true).absoluteString)
        lilv_world_unload_bundle(world.world, bundleNode)
        lilv_world_load_bundle(world.world, bundleNode)
        presets = world.presets(of: plugin)
        return presets.first { $0.uri == uri } ?? LV2Preset(uri: uri, label: label)
    }

    /// `text` for a file name: letters and digits (ASCII), `-` and `_` kept, anything else `_`.
    static func fileWord(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0" ... "9").contains($0) || $0 == "-" || $0 == "_") ? Character($0) : "_" })
    }
}
