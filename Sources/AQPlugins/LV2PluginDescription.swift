/// What an installed plugin is (LV2, or LADSPA through ``LADSPACatalog``), as `aqjack plugins` lists it (schema `aqjack.plugins/1`,
/// docs/CLI.md "aqjack plugins"): value types, made from lilv's world on the thread that asks.
public struct LV2PluginDescription: Sendable, Encodable {
    public let uri: String
    public let name: String
    /// The plugin's class label, e.g. "Amplifier Plugin", or nil.
    public let className: String?
    public let ports: [LV2PortDescription]
    /// The control output port that reports the plugin's latency (`lv2:reportsLatency` /
    /// designation `lv2:latency`), or nil.
    public let latencyPort: String?
    /// The control input designated `lv2:enabled` (1 runs the plugin, 0 has it bypass itself,
    /// keeping its latency), or nil: how the graph bypasses it (``LV2GraphNode/setBypassed(_:)``).
    public let enabledPort: String?
    /// Features the plugin requires (`lv2:requiredFeature`), URIs.
    public let requiredFeatures: [String]
    /// Whether the plugin declares `lv2:hardRTCapable`: the live host may run it on the JACK thread.
    public let isHardRealtimeCapable: Bool
    public let presets: [LV2Preset]
    /// The plugin's format: an LV2 plugin (named by its URI), or a LADSPA one (named
    /// `urn:ladspa:ID`, with its ``label``; described by ``LADSPACatalog``).
    public var format: PluginFormat = .lv2
    /// A LADSPA plugin's label (what `--plugin` also takes); nil for LV2.
    public var label: String?

    public var audioInputs: [LV2PortDescription] { ports.filter { $0.kind == .audio && $0.direction == .input } }
    public var audioOutputs: [LV2PortDescription] { ports.filter { $0.kind == .audio && $0.direction == .output } }
    public var controlInputs: [LV2PortDescription] { ports.filter { $0.kind == .control && $0.direction == .input } }
    /// Event inputs that take MIDI (atom sequences supporting `midi:MidiEvent`).
    public var midiInputs: [LV2PortDescription] { ports.filter { $0.kind == .atom && $0.direction == .input && $0.supportsMIDI } }
    /// Event outputs that carry MIDI (atom sequences supporting `midi:MidiEvent`).
    public var midiOutputs: [LV2PortDescription] { ports.filter { $0.kind == .atom && $0.direction == .output && $0.supportsMIDI } }
    /// The ports that carry one float per frame, which a host connects to its channels and a
    /// graph connects to each other: the audio inputs (outputs) in port order, then the CV ones
    /// (control voltage) in port order.
    public var signalInputs: [LV2PortDescription] { audioInputs + ports.filter { $0.kind == .cv && $0.direction == .input } }
    public var signalOutputs: [LV2PortDescription] { audioOutputs + ports.filter { $0.kind == .cv && $0.direction == .output } }
}

/// One port of a plugin.
public struct LV2PortDescription: Sendable, Encodable {
    public enum Kind: String, Sendable, Encodable { case audio, control, cv, atom, other }
    public enum Direction: String, Sendable, Encodable { case input, output }
    public let index: Int
    public let symbol: String
    public let name: String
    public let kind: Kind
    public let direction: Direction
    /// For control ports: the default, minimum and maximum the plugin declares (nil when it
    /// declares none).
    public let defaultValue: Float?
    public let minimum: Float?
    public let maximum: Float?
    public let isInteger: Bool
    public let isToggled: Bool
    public let isOptional: Bool
    /// For atom ports: whether they carry MIDI events.
    public let supportsMIDI: Bool

    enum CodingKeys: String, CodingKey {
        case index, symbol, name, kind, direction, defaultValue = "default", minimum, maximum
        case isInteger = "integer", isToggled = "toggled", isOptional = "optional", supportsMIDI = "midi"
    }

    /// "gain (-70 ... 70, default 0)": for messages and listings.
    public var rangeText: String {
        func text(_ value: Float) -> String {
            value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
        }
        let bounds = switch (minimum, maximum) {
        case let (minimum?, maximum?): "\(text(minimum)) ... \(text(maximum))"
        case let (minimum?, nil): "at least \(text(minimum))"
        case let (nil, maximum?): "at most \(text(maximum))"
        case (nil, nil): "no declared range"
        }
        return bounds + (defaultValue.map { ", default \(text($0))" } ?? "")
    }
}

/// A preset of a plugin: its URI and label.
public struct LV2Preset: Sendable, Encodable {
    public let uri: String
    public let label: String
}
