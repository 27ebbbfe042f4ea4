import AQCore
import CLADSPASupport
import Foundation

/// One running instance of a LADSPA plugin (``LADSPACatalog``): every port connected to host
/// memory (a buffer of ``maximumBlock`` frames per audio port, a float per control port, each
/// control input at its default), activated, runs of up to ``maximumBlock`` frames. LADSPA has
/// no presets and no state beyond the control values (which graph files keep).
///
/// Not thread-safe: one thread at a time. ``run(frames:)`` touches only the memory set up here;
/// what the plugin does inside is its own (LADSPA's `HARD_RT_CAPABLE` property says whether it
/// promises real-time safety).
public final class LADSPAPluginInstance: PluginInstance {
    public let description: LV2PluginDescription
    public let sampleRate: Double
    public let maximumBlock: Int
    public let fixedBlock: Int? = nil
    public var primingFrames: Int { min(64, maximumBlock) }

    /// The library's code stays loaded while the catalog that opened it lives.
    private let catalog: LADSPACatalog
    private let context: UnsafeMutablePointer<aq_ladspa_instance>
    /// One float per port (used by control ports).
    private let controls: UnsafeMutablePointer<Float>
    private var sampleBuffers: [Int: UnsafeMutablePointer<Float>] = [:]
    private var tables: [UnsafeMutableBufferPointer<UInt32>] = []

    /// Instantiates `plugin` of `catalog` at `sampleRate`, its control inputs at their defaults
    /// (or their lower bound, or 0, clamped into the range), and activates it.
    /// - Throws: a runtime error when the plugin refuses to instantiate.
    public init(catalog: LADSPACatalog, plugin: LADSPACatalog.Plugin, sampleRate: Double, maximumBlock: Int = 4096) throws(PluginError) {
        self.catalog = catalog
        self.sampleRate = sampleRate
        self.maximumBlock = maximumBlock
        description = LADSPACatalog.describe(plugin, sampleRate: sampleRate)
        let descriptor = plugin.descriptor
        guard let handle = descriptor.pointee.instantiate(descriptor, UInt(sampleRate.rounded())) else {
            throw PluginError(.runtime, "the LADSPA plugin '\(plugin.name)' (\(plugin.label), \(plugin.uri)) refused to instantiate at \(Int(sampleRate)) Hz")
        }
        context = .allocate(capacity: 1)
        context.initialize(to: aq_ladspa_instance(descriptor: descriptor, handle: handle))
        controls = .allocate(capacity: max(1, description.ports.count))
        controls.initialize(repeating: 0, count: max(1, description.ports.count))
        for port in description.ports {
            if port.kind == .control {
                var value = port.defaultValue ?? port.minimum ?? 0
                if let minimum = port.minimum { value = max(value, minimum) }
                if let maximum = port.maximum { value = min(value, maximum) }
                controls[port.index] = value
                aq_ladspa_connect(context, UInt32(port.index), controls + port.index)
            } else {
                let buffer = UnsafeMutablePointer<Float>.allocate(capacity: maximumBlock)
                buffer.initialize(repeating: 0, count: maximumBlock)
                sampleBuffers[port.index] = buffer
                aq_ladspa_connect(context, UInt32(port.index), buffer)
            }
        }
        descriptor.pointee.activate?(handle)
    }

    /// Instantiates the plugin `identifier` names in `world`'s catalog.
    public convenience init(world: LV2World, identifier: String, sampleRate: Double, maximumBlock: Int = 4096) throws(PluginError) {
        let catalog = world.ladspa
        try self.init(catalog: catalog, plugin: catalog.plugin(identifier), sampleRate: sampleRate, maximumBlock: maximumBlock)
    }

    deinit {
        let descriptor = context.pointee.descriptor.pointee
        descriptor.deactivate?(context.pointee.handle)
        descriptor.cleanup?(context.pointee.handle)
        context.deallocate()
        controls.deallocate()
        sampleBuffers.values.forEach { $0.deallocate() }
        tables.forEach { $0.deallocate() }
    }

    // MARK: Controls

    public func apply(_ settings: [LV2Stage.Setting]) throws(PluginError) {
        for setting in settings {
            switch setting {
            case let .control(symbol, value): controls[try checkedControlPort(symbol, value: value)] = value
            case let .preset(name): _ = try presetValues(name)
            }
        }
    }

    public func control(_ symbol: String) -> Float? {
        description.ports.first { $0.kind == .control && $0.symbol == symbol }.map { controls[$0.index] }
    }

    public func controlInputValue(_ symbol: String) -> UnsafeMutablePointer<Float>? {
        description.controlInputs.first { $0.symbol == symbol }.map { controls + $0.index }
    }

    public func checkedControlPort(_ symbol: String, value: Float) throws(PluginError) -> Int {
        guard let port = description.controlInputs.first(where: { $0.symbol == symbol }) else {
            let known = description.controlInputs.map(\.symbol)
            throw PluginError(.usage, "the LADSPA plugin '\(description.name)' has no control input '\(symbol)': "
                              + (known.isEmpty ? "it has no control inputs" : "expected one of \(known.joined(separator: ", "))"))
        }
        if let minimum = port.minimum, value < minimum { throw Self.outOfRange(symbol, value, port, description) }
        if let maximum = port.maximum, value > maximum { throw Self.outOfRange(symbol, value, port, description) }
        return port.index
    }

    private static func outOfRange(_ symbol: String, _ value: Float, _ port: LV2PortDescription, _ description: LV2PluginDescription) -> PluginError {
        PluginError(.usage, "\(symbol)=\(value) is out of range for '\(description.name)': expected \(port.rangeText)")
    }

    public var latencyFrames: Int {
        guard let symbol = description.latencyPort, let value = control(symbol), value.isFinite, value > 0 else { return 0 }
        return Int(value.rounded())
    }

    /// LADSPA has no presets.
    public var presets: [LV2Preset] { [] }

    /// LADSPA has no presets.
    public func savePreset(_ label: String, values: [String: Float]) throws(PluginError) -> LV2Preset {
        throw PluginError(.usage, "the LADSPA plugin '\(description.name)' cannot keep a preset '\(label)': LADSPA has no presets; a graph file (save FILE) keeps its control values")
    }

    /// LADSPA has no presets.
    public func presetValues(_ name: String) throws(PluginError) -> [(symbol: String, value: Float)] {
        throw PluginError(.usage, "the LADSPA plugin '\(description.name)' has no preset '\(name)': LADSPA plugins have no presets; set controls by symbol")
    }

    // MARK: State (none beyond the controls)

    /// Makes `directory` (a graph file keeps the control values; a LADSPA plugin has nothing else).
    public func saveState(to directory: String) throws(PluginError) {
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw PluginError(.runtime, "cannot make the state folder '\(directory)': \(error.localizedDescription)")
        }
    }

    /// Nothing to restore: false.
    public func restoreState(from directory: String) throws(PluginError) -> Bool { false }

    // MARK: Running

    public func hostPorts() -> PluginHostPorts {
        func indices(_ ports: [LV2PortDescription]) -> UnsafeBufferPointer<UInt32> {
            let buffer = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: max(ports.count, 1))
            for (slot, port) in ports.enumerated() { buffer[slot] = UInt32(port.index) }
            tables.append(buffer)
            return UnsafeBufferPointer(start: buffer.baseAddress, count: ports.count)
        }
        return PluginHostPorts(
            handle: UnsafeMutableRawPointer(context), connect: aq_ladspa_connect, run: aq_ladspa_run,
            audioInputs: indices(description.audioInputs), audioOutputs: indices(description.audioOutputs),
            controls: controls, portCount: description.ports.count,
            eventInputs: UnsafeBufferPointer(start: nil, count: 0), eventOutputs: UnsafeBufferPointer(start: nil, count: 0),
            midiInput: nil, sequenceCapacity: 0, sequenceType: 0, chunkType: 0, midiEventType: 0, maximumBlock: maximumBlock)
    }

    public func samples(port index: Int) -> UnsafeMutablePointer<Float>? { sampleBuffers[index] }

    public func run(frames: Int) {
        precondition(frames > 0 && frames <= maximumBlock, "a LADSPA run of \(frames) frames; expected 1 ... \(maximumBlock)")
        aq_ladspa_run(context, UInt32(frames))
    }

    /// LADSPA's deactivate and activate (the plugin forgets its signal state, keeps its controls).
    public func reset() {
        let descriptor = context.pointee.descriptor.pointee
        descriptor.deactivate?(context.pointee.handle)
        descriptor.activate?(context.pointee.handle)
    }
}
