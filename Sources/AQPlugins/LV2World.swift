import CLilv
import Foundation

/// The installed LV2 plugins, as lilv finds them (`LV2_PATH`, else `~/.lv2`, `/usr/lib/lv2`,
/// `/usr/local/lib/lv2` ...): descriptions for listings and messages, and the plugins that
/// ``LV2PluginInstance`` instantiates.
///
/// Loading reads every bundle's Turtle (143 plugins of swh-lv2 and mda-lv2: tens of
/// milliseconds). lilv's world is not thread-safe: one thread at a time (a mutex-free class;
/// the owner serialises).
public final class LV2World: @unchecked Sendable {
    let world: OpaquePointer
    /// The URID map every instance of this world shares.
    public let urids = URIDMap()
    private var nodes: [String: OpaquePointer] = [:]

    /// What lilv and serd said while reading the bundles (a bundle's Turtle that does not
    /// parse), one line each, for the caller to report in its own words.
    public let loadMessages: [String]

    /// Loads every installed bundle, and each folder of `additionalBundles` (a bundle's path,
    /// `NAME.lv2`: plugins kept outside the LV2 path, as a host loads one the user points at).
    public init(additionalBundles: [String] = []) {
        let world = lilv_world_new()!
        self.world = world
        loadMessages = (try? LilvMessages.capturing { () throws(PluginError) in
            lilv_world_load_all(world)
            for bundle in additionalBundles {
                // lilv wants the bundle's URI, ending in '/'.
                let folder = bundle.hasSuffix("/") ? bundle : bundle + "/"
                guard let uri = lilv_new_file_uri(world, nil, folder) else { continue }
                lilv_world_load_bundle(world, uri)
                lilv_node_free(uri)
            }
        })?.1 ?? []
    }

    deinit {
        nodes.values.forEach { lilv_node_free($0) }
        lilv_world_free(world)
    }

    /// A URI node, kept for the world's lifetime.
    func node(_ uri: String) -> OpaquePointer {
        if let node = nodes[uri] { return node }
        let node = lilv_new_uri(world, uri)!
        nodes[uri] = node
        return node
    }

    /// Every installed plugin's URI, sorted.
    public var pluginURIs: [String] {
        var uris: [String] = []
        let plugins = lilv_world_get_all_plugins(world)
        var iterator = lilv_plugins_begin(plugins)
        while !lilv_plugins_is_end(plugins, iterator) {
            if let plugin = lilv_plugins_get(plugins, iterator) { uris.append(String(cString: lilv_node_as_uri(lilv_plugin_get_uri(plugin)))) }
            iterator = lilv_plugins_next(plugins, iterator)
        }
        return uris.sorted()
    }

    /// The plugin with `uri`.
    /// - Throws: a usage error naming the URI (and close matches) when no installed plugin has it.
    func plugin(_ uri: String) throws(PluginError) -> OpaquePointer {
        let plugins = lilv_world_get_all_plugins(world)
        let uriNode = lilv_new_uri(world, uri)
        defer { lilv_node_free(uriNode) }
        if let uriNode, let plugin = lilv_plugins_get_by_uri(plugins, uriNode) { return plugin }
        let tail = uri.split(separator: "/").last.map { String($0).lowercased() } ?? uri.lowercased()
        let near = pluginURIs.filter { $0.lowercased().hasSuffix(tail) || $0.lowercased().contains("/" + tail) }.prefix(3)
        throw PluginError(.usage, "no installed LV2 plugin has the URI '\(uri)'"
                          + (near.isEmpty ? "" : " (did you mean \(near.map { "'\($0)'" }.joined(separator: ", "))?)")
                          + "; `aqjack plugins` lists the \(lilv_plugins_size(plugins)) installed")
    }

    /// The installed LADSPA plugins, found at the first use.
    public private(set) lazy var ladspa = LADSPACatalog()

    /// What the plugin `uri` names is: ports with ranges, latency, features, presets. A LADSPA
    /// identifier (``PluginFormat``) is described by ``ladspa``.
    public func describe(_ uri: String) throws(PluginError) -> LV2PluginDescription {
        if PluginFormat(identifier: uri) == .ladspa { return try ladspa.describe(uri) }
        return describe(plugin: try plugin(uri))
    }

    /// Every installed plugin whose URI or name contains `pattern` (case-insensitive; all when
    /// nil): the LV2 ones sorted by URI, then the LADSPA ones by ID (``ladspa``). The filter
    /// comes first: describing a plugin loads its presets.
    public func describeAll(matching pattern: String? = nil) -> [LV2PluginDescription] {
        describeAllLV2(matching: pattern) + ladspa.describeAll(matching: pattern)
    }

    private func describeAllLV2(matching pattern: String?) -> [LV2PluginDescription] {
        pluginURIs.compactMap { uri -> LV2PluginDescription? in
            guard let plugin = try? plugin(uri) else { return nil }
            if let pattern {
                let name = take(lilv_plugin_get_name(plugin)) ?? ""
                guard uri.localizedCaseInsensitiveContains(pattern) || name.localizedCaseInsensitiveContains(pattern) else { return nil }
            }
            return describe(plugin: plugin)
        }
    }

    func describe(plugin: OpaquePointer) -> LV2PluginDescription {
        let uri = String(cString: lilv_node_as_uri(lilv_plugin_get_uri(plugin)))
        let name = take(lilv_plugin_get_name(plugin)) ?? uri
        let className = lilv_plugin_get_class(plugin).flatMap { lilv_plugin_class_get_label($0) }.map { String(cString: lilv_node_as_string($0)) }
        let count = Int(lilv_plugin_get_num_ports(plugin))
        var minimums = [Float](repeating: .nan, count: count)
        var maximums = [Float](repeating: .nan, count: count)
        var defaults = [Float](repeating: .nan, count: count)
        lilv_plugin_get_port_ranges_float(plugin, &minimums, &maximums, &defaults)
        let latencyIndex = lilv_plugin_has_latency(plugin) ? Int(lilv_plugin_get_latency_port_index(plugin)) : nil
        var ports: [LV2PortDescription] = []
        for index in 0 ..< count {
            guard let port = lilv_plugin_get_port_by_index(plugin, UInt32(index)) else { continue }
            let symbol = String(cString: lilv_node_as_string(lilv_port_get_symbol(plugin, port)))
            let kind: LV2PortDescription.Kind =
                lilv_port_is_a(plugin, port, node(LV2URI.audioPort)) ? .audio
                : lilv_port_is_a(plugin, port, node(LV2URI.controlPort)) ? .control
                : lilv_port_is_a(plugin, port, node(LV2URI.cvPort)) ? .cv
                : lilv_port_is_a(plugin, port, node(LV2URI.atomPort)) ? .atom : .other
            func value(_ values: [Float]) -> Float? { kind == .control && !values[index].isNaN ? values[index] : nil }
            ports.append(LV2PortDescription(
                index: index, symbol: symbol, name: take(lilv_port_get_name(plugin, port)) ?? symbol, kind: kind,
                direction: lilv_port_is_a(plugin, port, node(LV2URI.outputPort)) ? .output : .input,
                defaultValue: value(defaults), minimum: value(minimums), maximum: value(maximums),
                isInteger: lilv_port_has_property(plugin, port, node(LV2URI.integer)),
                isToggled: lilv_port_has_property(plugin, port, node(LV2URI.toggled)),
                isOptional: lilv_port_has_property(plugin, port, node(LV2URI.connectionOptional)),
                supportsMIDI: kind == .atom && lilv_port_supports_event(plugin, port, node(LV2URI.midiEvent))))
        }
        return LV2PluginDescription(
            uri: uri, name: name, className: className, ports: ports,
            latencyPort: latencyIndex.flatMap { index in ports.first { $0.index == index }?.symbol },
            enabledPort: lilv_plugin_get_port_by_designation(plugin, node(LV2URI.inputPort), node(LV2URI.enabled))
                .map { String(cString: lilv_node_as_string(lilv_port_get_symbol(plugin, $0))) },
            requiredFeatures: strings(lilv_plugin_get_required_features(plugin)),
            isHardRealtimeCapable: lilv_plugin_has_feature(plugin, node(LV2URI.hardRTCapable)),
            presets: presets(of: plugin))
    }

    /// The plugin's presets with their labels (each preset's resource loaded), sorted by label.
    func presets(of plugin: OpaquePointer) -> [LV2Preset] {
        guard let related = lilv_plugin_get_related(plugin, node(LV2URI.preset)) else { return [] }
        defer { lilv_nodes_free(related) }
        var presets: [LV2Preset] = []
        var iterator = lilv_nodes_begin(related)
        while !lilv_nodes_is_end(related, iterator) {
            if let preset = lilv_nodes_get(related, iterator) {
                lilv_world_load_resource(world, preset)
                let uri = String(cString: lilv_node_as_uri(preset))
                let label = take(lilv_world_get(world, preset, node(LV2URI.rdfsLabel), nil)) ?? uri
                presets.append(LV2Preset(uri: uri, label: label))
            }
            iterator = lilv_nodes_next(related, iterator)
        }
        return presets.sorted { $0.label < $1.label }
    }

    /// The string of a node lilv handed over (and frees it), or nil.
    private func take(_ node: OpaquePointer?) -> String? {
        guard let node else { return nil }
        defer { lilv_node_free(node) }
        return String(cString: lilv_node_as_string(node))
    }

    /// The strings of a node collection lilv handed over (and frees it).
    private func strings(_ collection: UnsafeMutableRawPointer?) -> [String] {
        guard let collection else { return [] }
        defer { lilv_nodes_free(collection) }
        var result: [String] = []
        var iterator = lilv_nodes_begin(collection)
        while !lilv_nodes_is_end(collection, iterator) {
            if let item = lilv_nodes_get(collection, iterator) { result.append(String(cString: lilv_node_as_string(item))) }
            iterator = lilv_nodes_next(collection, iterator)
        }
        return result
    }
}
