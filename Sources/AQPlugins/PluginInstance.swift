import AQCore

/// A running plugin instance of either format aqjack hosts: LV2 (``LV2PluginInstance``) or LADSPA
/// (``LADSPAPluginInstance``). What the queues' stages (``LV2Stage``), the graph's nodes
/// (``LV2GraphNode``) and the live graph need of one; ``PluginFormat/instantiate(world:identifier:sampleRate:maximumBlock:realtime:)``
/// makes the right one for an identifier.
///
/// Not thread-safe: one thread at a time; ``run(frames:)`` on the thread the stream runs on, or
/// through ``hostPorts()`` on the process thread.
public protocol PluginInstance: AnyObject {
    /// Ports (by symbol), ranges, latency port, presets.
    var description: LV2PluginDescription { get }
    /// The most frames one run may have.
    var maximumBlock: Int { get }
    /// The frames every run must have (a plugin that requires fixed blocks), or nil.
    var fixedBlock: Int? { get }
    /// The frames of the first run a host gives a fresh instance on silence (to read its latency).
    var primingFrames: Int { get }
    /// The plugin's latency in frames, as it reports it after its latest run (0 when it does not).
    var latencyFrames: Int { get }
    /// Applies control values and presets in order.
    func apply(_ settings: [LV2Stage.Setting]) throws(PluginError)
    /// The current value of control port `symbol` (input or output), or nil.
    func control(_ symbol: String) -> Float?
    /// Where the plugin reads control input `symbol` from, valid while the instance lives.
    func controlInputValue(_ symbol: String) -> UnsafeMutablePointer<Float>?
    /// The port index of control input `symbol` after checking `value` against its range.
    func checkedControlPort(_ symbol: String, value: Float) throws(PluginError) -> Int
    /// The plugin's presets (sorted by label), those saved by ``savePreset(_:)`` included.
    var presets: [LV2Preset] { get }
    /// Saves the instance's settings (`values` by symbol where given) as the user's preset
    /// `label` (LV2 only).
    @discardableResult
    func savePreset(_ label: String, values: [String: Float]) throws(PluginError) -> LV2Preset
    /// The values preset `name` holds, checked, without applying them.
    func presetValues(_ name: String) throws(PluginError) -> [(symbol: String, value: Float)]
    /// Saves the instance's state into `directory` (made if missing).
    func saveState(to directory: String) throws(PluginError)
    /// Restores a state saved in `directory`; false when none is saved there.
    func restoreState(from directory: String) throws(PluginError) -> Bool
    /// What the process thread needs to connect and run the instance.
    func hostPorts() -> PluginHostPorts
    /// The instance's own buffer for audio port `index` (``maximumBlock`` frames), or nil.
    func samples(port index: Int) -> UnsafeMutablePointer<Float>?
    /// Runs `frames` frames on what its buffers hold.
    func run(frames: Int)
    /// Returns the plugin to its state after activation, keeping its control values.
    func reset()
}

extension LV2PluginInstance: PluginInstance {}

/// The plugin formats, and which one an identifier names: `urn:ladspa:ID` or a LADSPA label (a
/// word without `:`, as `analyseplugin` prints it) name a LADSPA plugin; anything else is an
/// LV2 URI.
public enum PluginFormat: String, Sendable, Encodable {
    case lv2
    case ladspa

    /// The URI prefix of LADSPA plugins' identifiers (followed by the unique ID).
    public static let ladspaPrefix = "urn:ladspa:"

    public init(identifier: String) {
        self = identifier.hasPrefix(Self.ladspaPrefix) || !identifier.contains(":") ? .ladspa : .lv2
    }

    /// Instantiates the plugin `identifier` names.
    /// - Throws: what ``LV2PluginInstance`` and ``LADSPAPluginInstance`` throw.
    public static func instantiate(world: LV2World, identifier: String, sampleRate: Double, maximumBlock: Int = 4096,
                                   realtime: Bool = false) throws(PluginError) -> any PluginInstance {
        switch PluginFormat(identifier: identifier) {
        case .lv2: try LV2PluginInstance(world: world, uri: identifier, sampleRate: sampleRate, maximumBlock: maximumBlock, realtime: realtime)
        case .ladspa: try LADSPAPluginInstance(world: world, identifier: identifier, sampleRate: sampleRate, maximumBlock: maximumBlock)
        }
    }
}
