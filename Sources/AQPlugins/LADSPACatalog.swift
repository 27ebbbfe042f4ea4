import CLADSPASupport
import Foundation
import Glibc

/// The installed LADSPA plugins: every library (`*.so`) in the folders of `LADSPA_PATH` (colon
/// separated; when unset, `~/.ladspa`, `/usr/local/lib/ladspa` and `/usr/lib/ladspa`, as
/// ladspa-sdk's tools look), opened with dlopen and kept open while the catalog lives (instances
/// run its code). A plugin is named `urn:ladspa:ID` (its unique ID) or by its label.
///
/// Threads: one at a time (it is made lazily by ``LV2World/ladspa``).
public final class LADSPACatalog {
    /// One plugin of a library.
    public struct Plugin: @unchecked Sendable {
        public let id: UInt
        public let label: String
        public let name: String
        public let library: String
        let descriptor: UnsafePointer<LADSPA_Descriptor>
        /// `urn:ladspa:ID`.
        public var uri: String { PluginFormat.ladspaPrefix + String(id) }
    }

    /// Every plugin, by ID (the first library's when two share one).
    public private(set) var plugins: [Plugin] = []
    /// Libraries that would not open, with dlerror's words.
    public private(set) var failures: [String] = []
    private var libraries: [UnsafeMutableRawPointer] = []

    public init(path: String? = ProcessInfo.processInfo.environment["LADSPA_PATH"]) {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        let folders = (path?.split(separator: ":").map(String.init)).flatMap { $0.isEmpty ? nil : $0 }
            ?? [home + "/.ladspa", "/usr/local/lib/ladspa", "/usr/lib/ladspa"]
        var seen = Set<UInt>()
        for folder in folders {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".so") }.sorted()
            for name in names {
                let path = folder + "/" + name
                guard let library = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                    failures.append("\(path): \(dlerror().map { String(cString: $0) } ?? "dlopen failed")")
                    continue
                }
                var found = false
                var index: UInt = 0
                while let descriptor = aq_ladspa_descriptor(library, index) {
                    index += 1
                    let plugin = descriptor.pointee
                    guard seen.insert(plugin.UniqueID).inserted, let label = plugin.Label, plugin.run != nil, plugin.connect_port != nil,
                          plugin.instantiate != nil else { continue }
                    plugins.append(Plugin(id: plugin.UniqueID, label: String(cString: label), name: plugin.Name.map { String(cString: $0) } ?? String(cString: label),
                                          library: path, descriptor: descriptor))
                    found = true
                }
                if found { libraries.append(library) } else { dlclose(library) }
            }
        }
        plugins.sort { $0.id < $1.id }
    }

    deinit { libraries.forEach { dlclose($0) } }

    /// The plugin `identifier` names: `urn:ladspa:ID` or a label (the lowest ID's, when two
    /// libraries use one label).
    /// - Throws: a usage error naming the identifier (and labels close to it) when none matches.
    public func plugin(_ identifier: String) throws(PluginError) -> Plugin {
        if identifier.hasPrefix(PluginFormat.ladspaPrefix) {
            if let id = UInt(identifier.dropFirst(PluginFormat.ladspaPrefix.count)), let plugin = plugins.first(where: { $0.id == id }) { return plugin }
        } else if let plugin = plugins.first(where: { $0.label == identifier }) {
            return plugin
        }
        let key = identifier.lowercased()
        let near = plugins.filter { $0.label.lowercased().contains(key) || key.contains($0.label.lowercased()) }.prefix(3)
        throw PluginError(.usage, "no installed LADSPA plugin is '\(identifier)' (a label, or urn:ladspa:ID)"
                          + (near.isEmpty ? "" : " (did you mean \(near.map { "'\($0.label)'" }.joined(separator: ", "))?)")
                          + "; `aqjack plugins` lists the \(plugins.count) installed")
    }

    /// What plugin `identifier` is, its ranges and defaults at `sampleRate` (a bound LADSPA gives
    /// as a fraction of the rate is multiplied by it).
    public func describe(_ identifier: String, sampleRate: Double = 48000) throws(PluginError) -> LV2PluginDescription {
        Self.describe(try plugin(identifier), sampleRate: sampleRate)
    }

    /// Every plugin whose URI, label or name contains `pattern` (any case; all when nil).
    public func describeAll(matching pattern: String? = nil) -> [LV2PluginDescription] {
        plugins.filter { plugin in
            guard let pattern else { return true }
            return [plugin.uri, plugin.label, plugin.name].contains { $0.localizedCaseInsensitiveContains(pattern) }
        }.map { Self.describe($0) }
    }

    static func describe(_ plugin: Plugin, sampleRate: Double = 48000) -> LV2PluginDescription {
        let descriptor = plugin.descriptor.pointee
        var ports: [LV2PortDescription] = []
        var symbols = Set<String>()
        for index in 0 ..< Int(descriptor.PortCount) {
            let kinds = descriptor.PortDescriptors[index]
            let name = descriptor.PortNames[index].map { String(cString: $0) } ?? "port \(index + 1)"
            var symbol = LADSPAPorts.symbol(of: name)
            if !symbols.insert(symbol).inserted {
                symbol += "_\(index)"
                symbols.insert(symbol)
            }
            let isControl = kinds & Int32(LADSPA_PORT_CONTROL) != 0
            let hint = descriptor.PortRangeHints[index]
            let range: (default: Float?, minimum: Float?, maximum: Float?) = isControl ? LADSPAPorts.range(hint, sampleRate: sampleRate) : (nil, nil, nil)
            ports.append(LV2PortDescription(
                index: index, symbol: symbol, name: name, kind: isControl ? .control : .audio,
                direction: kinds & Int32(LADSPA_PORT_OUTPUT) != 0 ? .output : .input,
                defaultValue: range.default, minimum: range.minimum, maximum: range.maximum,
                isInteger: isControl && hint.HintDescriptor & Int32(LADSPA_HINT_INTEGER) != 0,
                isToggled: isControl && hint.HintDescriptor & Int32(LADSPA_HINT_TOGGLED) != 0,
                isOptional: false, supportsMIDI: false))
        }
        // LADSPA has no latency designation: hosts (Ardour, Carla) read a control output named "latency".
        let latency = ports.first { $0.kind == .control && $0.direction == .output && $0.name.lowercased() == "latency" }
        return LV2PluginDescription(
            uri: plugin.uri, name: plugin.name, className: nil, ports: ports, latencyPort: latency?.symbol, enabledPort: nil,
            requiredFeatures: [], isHardRealtimeCapable: descriptor.Properties & Int32(LADSPA_PROPERTY_HARD_RT_CAPABLE) != 0,
            presets: [], format: .ladspa, label: plugin.label)
    }
}

/// How LADSPA's port names and range hints read as aqjack's port descriptions.
enum LADSPAPorts {
    /// A port's symbol from its name: lower case, runs of anything but letters and digits as
    /// one `_` ("Input (Left)" is `input_left`), never empty or starting with a digit.
    static func symbol(of name: String) -> String {
        var symbol = ""
        for scalar in name.lowercased().unicodeScalars {
            if ("a" ... "z").contains(scalar) || ("0" ... "9").contains(scalar) {
                symbol.unicodeScalars.append(scalar)
            } else if !symbol.isEmpty, !symbol.hasSuffix("_") {
                symbol += "_"
            }
        }
        while symbol.hasSuffix("_") { symbol.removeLast() }
        if symbol.isEmpty || symbol.first!.isNumber { symbol = "p_" + symbol }
        return symbol
    }

    /// A control port's default, minimum and maximum from its hint (ladspa.h's rules: the
    /// bounds times the rate under SAMPLE_RATE; LOW, MIDDLE and HIGH between them, on a log scale
    /// under LOGARITHMIC; no default hint: nil).
    static func range(_ hint: LADSPA_PortRangeHint, sampleRate: Double) -> (default: Float?, minimum: Float?, maximum: Float?) {
        let flags = hint.HintDescriptor
        func has(_ flag: Int32) -> Bool { flags & flag == flag }
        let scale = has(Int32(LADSPA_HINT_SAMPLE_RATE)) ? Float(sampleRate) : 1
        let minimum = has(Int32(LADSPA_HINT_BOUNDED_BELOW)) ? hint.LowerBound * scale : nil
        let maximum = has(Int32(LADSPA_HINT_BOUNDED_ABOVE)) ? hint.UpperBound * scale : nil
        let logarithmic = has(Int32(LADSPA_HINT_LOGARITHMIC))
        func between(_ weight: Float) -> Float? {
            guard let minimum, let maximum else { return minimum ?? maximum }
            if logarithmic, minimum > 0, maximum > 0 { return expf(logf(minimum) * (1 - weight) + logf(maximum) * weight) }
            return minimum * (1 - weight) + maximum * weight
        }
        let value: Float? = switch flags & Int32(LADSPA_HINT_DEFAULT_MASK) {
        case Int32(LADSPA_HINT_DEFAULT_MINIMUM): minimum
        case Int32(LADSPA_HINT_DEFAULT_LOW): between(0.25)
        case Int32(LADSPA_HINT_DEFAULT_MIDDLE): between(0.5)
        case Int32(LADSPA_HINT_DEFAULT_HIGH): between(0.75)
        case Int32(LADSPA_HINT_DEFAULT_MAXIMUM): maximum
        case Int32(LADSPA_HINT_DEFAULT_0): 0
        case Int32(LADSPA_HINT_DEFAULT_1): 1
        case Int32(LADSPA_HINT_DEFAULT_100): 100
        case Int32(LADSPA_HINT_DEFAULT_440): 440
        default: nil
        }
        return (value, minimum, maximum)
    }
}
