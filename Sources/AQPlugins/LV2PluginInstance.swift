import AQCore
import CLV2Support
import CLilv
import Foundation

/// One running instance of an LV2 plugin: every port connected to host memory (audio and CV
/// buffers of ``maximumBlock`` frames, a float per control port, an atom sequence buffer per
/// event port), controls set by symbol within their ranges, presets loaded, runs of up to
/// ``maximumBlock`` frames.
///
/// Not thread-safe: one thread at a time. ``run(frames:)`` itself neither allocates nor locks
/// (it touches only the memory set up here), but what a plugin does inside is the plugin's
/// own; the queues call it on their thread, the live host on JACK's process thread (every plugin,
/// as jalv does; one without `lv2:hardRTCapable` is named when it loads).
public final class LV2PluginInstance {
    public let description: LV2PluginDescription
    public let sampleRate: Double
    public let maximumBlock: Int
    /// For a plugin that requires fixed or power-of-two block lengths: the frames every run
    /// gets (a power of two); nil for a plugin that takes any length up to ``maximumBlock``.
    public let fixedBlock: Int?
    /// The fixed block queue stages and offline runs use when nobody chooses one: the largest
    /// power of two up to `maximumBlock` and 1024 frames (21 ms at 48 kHz, added to the
    /// stage's latency, which the queues and `convert` compensate).
    public static func defaultFixedBlock(maximumBlock: Int) -> Int {
        var block = 1
        while block * 2 <= min(maximumBlock, 1024) { block *= 2 }
        return block
    }
    /// The frames of the first run a host gives a fresh instance on silence (to read its
    /// latency port): 64, or the fixed block.
    public var primingFrames: Int { fixedBlock ?? min(64, maximumBlock) }
    /// Where the plugin's `state:makePath` files go: a folder of this instance's own in the
    /// temporary directory, made at the first such file and removed with the instance (a saved
    /// state keeps copies of the files it refers to, as lilv copies them).
    public let scratchDirectory: String
    /// Each atom port buffer's capacity, in bytes.
    public static let sequenceBytes = 8192
    /// Each worker ring's capacity (requests, responses), in bytes.
    static let workerRingBytes = 1 << 16

    let world: LV2World
    let plugin: OpaquePointer
    /// The plugin's presets, sorted by label: the description's, and those saved since
    /// (``savePreset(_:)``). One thread at a time, as the instance.
    public internal(set) var presets: [LV2Preset]
    private let instance: UnsafeMutablePointer<LilvInstance>
    private let features: LV2Features
    /// The worker for the plugin's scheduled work: threaded for the live host, not threaded for
    /// queue stages and offline runs (``init(world:uri:sampleRate:maximumBlock:realtime:)``).
    private let worker: LV2Worker
    /// The plugin's worker interface, when it has one; then runs end with the worker's responses.
    private let hasWorker: Bool
    /// `run` + the worker's responses, for the live host (freed with the instance).
    private let runContext: UnsafeMutablePointer<LV2WorkerRunContext>
    /// One float per port (used by control ports; the others' slots stay unused).
    private let controls: UnsafeMutablePointer<Float>
    /// Audio and CV buffers by port index, and atom buffers by port index.
    private var sampleBuffers: [Int: UnsafeMutablePointer<Float>] = [:]
    private var sequenceBuffers: [Int: UnsafeMutableRawPointer] = [:]
    private let sequenceType: UInt32
    private let chunkType: UInt32
    /// Indices, for the per-run work: atom inputs are cleared, atom outputs readied.
    private let atomInputs: [Int]
    private let atomOutputs: [Int]
    private var active = false
    /// Tables made for ``hostPorts()``, freed with the instance.
    private var hostTables: [UnsafeMutableRawPointer] = []

    /// Instantiates and activates the plugin `uri` at `sampleRate` Hz for runs of at most
    /// `maximumBlock` frames, with every control at its default.
    ///
    /// `realtime`: whether ``run(frames:)`` is called on a real-time thread (the live host). Then
    /// work the plugin schedules is done on a worker thread of its own, its responses delivered
    /// after a later run; otherwise (queue stages, offline) the work is done at once inside the
    /// run that schedules it, so a render is the same every time.
    ///
    /// `blockLength`: for a plugin that requires fixed or power-of-two block lengths, the frames
    /// every run will get (the live host: JACK's period); nil chooses
    /// ``defaultFixedBlock(maximumBlock:)``. Other plugins ignore it.
    ///
    /// - Throws: ``PluginError`` of kind usage for a URI no installed plugin has; of kind
    ///   runtime for a plugin that requires a feature this host lacks (named), power-of-two
    ///   blocks when `blockLength` is not one, whose binary is missing, or that refuses to
    ///   instantiate.
    public init(world: LV2World, uri: String, sampleRate: Double, maximumBlock: Int = 4096, blockLength: Int? = nil,
                realtime: Bool = false) throws(PluginError) {
        let plugin = try world.plugin(uri)
        let description = world.describe(plugin: plugin)
        let missing = description.requiredFeatures.filter { !LV2Features.supported.contains($0) }
        guard missing.isEmpty else {
            throw PluginError(.runtime, "the LV2 plugin '\(description.name)' (\(uri)) requires \(missing.joined(separator: ", ")), which aqjack does not provide (it provides \(LV2Features.supported.sorted().joined(separator: ", ")))")
        }
        // Fixed or power-of-two blocks: every run gets the same power of two (LV2 buf-size).
        var fixedBlock: Int?
        if !LV2Features.fixedBlockFeatures.isDisjoint(with: description.requiredFeatures) {
            let block = blockLength ?? Self.defaultFixedBlock(maximumBlock: maximumBlock)
            guard block > 0, block & (block - 1) == 0, block <= maximumBlock else {
                throw PluginError(.runtime, "the LV2 plugin '\(description.name)' (\(uri)) requires runs of a fixed power-of-two length; "
                                  + "this host runs blocks of \(block) frames: expected a power of two up to \(maximumBlock) (for aqjack host, a JACK period such as 128, 256 or 1024)")
            }
            fixedBlock = block
        }
        self.fixedBlock = fixedBlock
        if let library = lilv_plugin_get_library_uri(plugin), let path = lilv_file_uri_parse(lilv_node_as_uri(library), nil) {
            let file = String(cString: path)
            lilv_free(path)
            guard FileManager.default.fileExists(atPath: file) else {
                throw PluginError(.runtime, "the LV2 plugin '\(description.name)' (\(uri)) is described but its binary '\(file)' is missing: reinstall its bundle")
            }
        }
        self.world = world
        self.plugin = plugin
        self.description = description
        presets = description.presets
        self.sampleRate = sampleRate
        self.maximumBlock = maximumBlock
        scratchDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("aqjack-lv2-\(getpid())-\(UUID().uuidString.prefix(8))").path
        let worker = LV2Worker(threaded: realtime, ringBytes: Self.workerRingBytes)
        features = LV2Features(urids: world.urids, sampleRate: sampleRate, maximumBlock: maximumBlock, fixedBlock: fixedBlock,
                               sequenceBytes: Self.sequenceBytes, pluginName: description.name,
                               worker: worker.schedule, scratchDirectory: scratchDirectory)
        // lilv says why it could not (a library that does not load) on standard error: kept for the message.
        let features = features
        let (instantiated, said) = try LilvMessages.capturing { () throws(PluginError) in lilv_plugin_instantiate(plugin, sampleRate, features.array) }
        guard let made = instantiated else {
            let reason = said.last.map { ": lilv said \($0.trimmingCharacters(in: .whitespaces))" } ?? ""
            throw PluginError(.runtime, "the LV2 plugin '\(description.name)' (\(uri)) refused to instantiate at \(Int(sampleRate)) Hz\(reason)")
        }
        instance = made
        self.worker = worker
        let interface = lilv_instance_get_extension_data(made, LV2URI.workerInterface)
        worker.bind(handle: made.pointee.lv2_handle, interface: interface.map { UnsafePointer($0.assumingMemoryBound(to: LV2_Worker_Interface.self)) })
        hasWorker = interface != nil
        runContext = .allocate(capacity: 1)
        runContext.initialize(to: LV2WorkerRunContext(run: made.pointee.lv2_descriptor.pointee.run, handle: made.pointee.lv2_handle,
                                                      worker: Unmanaged.passUnretained(worker).toOpaque()))
        sequenceType = world.urids.map(LV2URI.atomSequence)
        chunkType = world.urids.map(LV2URI.atomChunk)
        controls = .allocate(capacity: max(description.ports.count, 1))
        controls.initialize(repeating: 0, count: max(description.ports.count, 1))
        var atomInputs: [Int] = [], atomOutputs: [Int] = []
        for port in description.ports {
            switch port.kind {
            case .control:
                controls[port.index] = port.defaultValue ?? port.minimum ?? 0
                lilv_instance_connect_port(instance, UInt32(port.index), controls + port.index)
            case .audio, .cv:
                let buffer = UnsafeMutablePointer<Float>.allocate(capacity: maximumBlock)
                buffer.initialize(repeating: 0, count: maximumBlock)
                sampleBuffers[port.index] = buffer
                lilv_instance_connect_port(instance, UInt32(port.index), buffer)
            case .atom:
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.sequenceBytes, alignment: 8)
                buffer.initializeMemory(as: UInt8.self, repeating: 0, count: Self.sequenceBytes)
                sequenceBuffers[port.index] = buffer
                if port.direction == .input { atomInputs.append(port.index) } else { atomOutputs.append(port.index) }
                lilv_instance_connect_port(instance, UInt32(port.index), buffer)
            case .other:
                // A port of a type this host does not know: optional ones stay unconnected.
                guard port.isOptional else {
                    worker.stop()
                    lilv_instance_free(instance)
                    runContext.deallocate()
                    throw PluginError(.runtime, "the LV2 plugin '\(description.name)' (\(uri)) has port \(port.index) '\(port.symbol)' of a type aqjack cannot connect (expected audio, control, CV or atom ports)")
                }
            }
        }
        self.atomInputs = atomInputs
        self.atomOutputs = atomOutputs
        clearSequences()
        lilv_instance_activate(instance)
        active = true
    }

    deinit {
        // The worker thread first: it may be inside the plugin's work().
        worker.stop()
        if active { lilv_instance_deactivate(instance) }
        lilv_instance_free(instance)
        runContext.deallocate()
        controls.deallocate()
        sampleBuffers.values.forEach { $0.deallocate() }
        sequenceBuffers.values.forEach { $0.deallocate() }
        hostTables.forEach { $0.deallocate() }
        try? FileManager.default.removeItem(atPath: scratchDirectory)
    }

    // MARK: Controls

    /// Sets the control input `symbol` to `value`.
    /// - Throws: a usage error naming the symbol and the plugin's control inputs when it has
    ///   none by that name, or naming the range when `value` is outside it.
    public func setControl(_ symbol: String, to value: Float) throws(PluginError) {
        controls[try checkedControlPort(symbol, value: value)] = value
    }

    /// Applies control values and presets in order (a value after a preset overrides it).
    /// - Throws: the usage errors of ``setControl(_:to:)`` and ``loadPreset(_:)``.
    public func apply(_ settings: [LV2Stage.Setting]) throws(PluginError) {
        for setting in settings {
            switch setting {
            case let .control(symbol, value): try setControl(symbol, to: value)
            case let .preset(name): try loadPreset(name)
            }
        }
    }

    /// Where the plugin reads control input `symbol` from (valid while the instance lives), for a
    /// process thread that sets it (a MIDI controller bound to it); nil for no such input.
    public func controlInputValue(_ symbol: String) -> UnsafeMutablePointer<Float>? {
        description.controlInputs.first { $0.symbol == symbol }.map { controls + $0.index }
    }

    /// The current value of a control port (input or output) `symbol`, or nil for no such port.
    public func control(_ symbol: String) -> Float? {
        description.ports.first { $0.kind == .control && $0.symbol == symbol }.map { controls[$0.index] }
    }

    private func controlInput(_ symbol: String) throws(PluginError) -> LV2PortDescription {
        guard let port = description.controlInputs.first(where: { $0.symbol == symbol }) else {
            let known = description.controlInputs.map(\.symbol)
            throw PluginError(.usage, "the LV2 plugin '\(description.name)' has no control input '\(symbol)': "
                              + (known.isEmpty ? "it has no control inputs" : "expected one of \(known.joined(separator: ", "))"))
        }
        return port
    }

    /// The plugin's latency in frames, as its latency port reports it after the latest run (0
    /// for a plugin without one).
    public var latencyFrames: Int {
        guard let symbol = description.latencyPort, let value = control(symbol), value.isFinite, value > 0 else { return 0 }
        return Int(value.rounded())
    }

    // MARK: Presets

    /// Preset `name`'s state (the caller frees it) and words naming it.
    private func presetState(_ name: String) throws(PluginError) -> (OpaquePointer, String) {
        let presets = self.presets
        guard let preset = presets.first(where: { $0.uri == name }) ?? presets.first(where: { $0.label.caseInsensitiveCompare(name) == .orderedSame }) else {
            let some = presets.prefix(8).map { "'\($0.label)'" }.joined(separator: ", ")
            throw PluginError(.usage, "the LV2 plugin '\(description.name)' has no preset '\(name)': "
                              + (presets.isEmpty ? "it has no presets" : "expected a URI or label such as \(some)\(presets.count > 8 ? " (\(presets.count) in all: aqjack plugins '\(description.uri)')" : "")"))
        }
        let node = world.node(preset.uri)
        lilv_world_load_resource(world.world, node)
        guard let state = lilv_state_new_from_world(world.world, world.urids.mapFeature, node) else {
            throw PluginError(.runtime, "the preset '\(preset.label)' of '\(description.name)' could not be read")
        }
        return (state, "the preset '\(preset.label)'")
    }

    /// Loads the preset with URI or label `name` (labels compare without case).
    /// - Throws: a usage error listing some of the plugin's presets when none matches.
    public func loadPreset(_ name: String) throws(PluginError) {
        let (state, source) = try presetState(name)
        defer { lilv_state_free(state) }
        try restore(state, from: source)
    }

    /// The control values preset `name` holds, checked against their ranges, without applying
    /// them (for a running plugin, whose values only its process thread writes).
    /// - Throws: what ``loadPreset(_:)`` throws.
    public func presetValues(_ name: String) throws(PluginError) -> [(symbol: String, value: Float)] {
        let (state, source) = try presetState(name)
        defer { lilv_state_free(state) }
        return try checkedPortValues(state, from: source).map { ($0.port.symbol, $0.value) }
    }

    // MARK: State

    /// The file ``saveState(to:)`` writes in its directory.
    public static let stateFileName = "state.ttl"

    /// Saves the plugin's state (its control inputs' values, and whatever it keeps through the
    /// LV2 state interface) as an LV2 state bundle in `directory` (made if missing): what
    /// `--state DIR` writes on Ctrl-C. Call while the plugin does not run.
    /// - Throws: a runtime error naming the directory when lilv cannot write it.
    public func saveState(to directory: String) throws(PluginError) {
        try Self.checkStateDirectory(directory)
        // lilv writes into a folder made now (no one can have planted a link in it), whose files
        // are then renamed into `directory`: rename(2) replaces a symbolic link there, never
        // what it points to.
        var template = Array((directory + "/.aqjack-state-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw PluginError(.runtime, "cannot save the state of '\(description.name)' in '\(directory)': \(String(cString: strerror(errno)))")
        }
        let fresh = String(cString: template.map { UInt8(bitPattern: $0) })
        defer { try? FileManager.default.removeItem(atPath: fresh) }
        try saveState(into: fresh)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: fresh)) ?? [] {
            guard rename(fresh + "/" + name, directory + "/" + name) == 0 else {
                throw PluginError(.runtime, "cannot save the state of '\(description.name)' as '\(directory)/\(name)': \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Makes `directory` if missing and checks that files can be made in it.
    /// - Throws: a runtime error with the system's reason.
    public static func checkStateDirectory(_ directory: String) throws(PluginError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw PluginError(.runtime, "cannot make the state directory '\(directory)': \(error.localizedDescription)")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw PluginError(.runtime, "cannot write the state directory '\(directory)': \(String(cString: strerror(errno)))")
        }
    }

    /// lilv's save of the state into `directory`, which is this call's alone.
    private func saveState(into directory: String) throws(PluginError) {
        let state = try takeState(files: directory)
        defer { lilv_state_free(state) }
        let code = lilv_state_save(world.world, world.urids.mapFeature, world.urids.unmapFeature, state, nil, directory, Self.stateFileName)
        guard code == 0 else {
            throw PluginError(.runtime, "cannot save the state of '\(description.name)' in '\(directory)' (lilv_state_save: \(code))")
        }
    }

    /// The instance's state now (the caller frees it): its control inputs' values (those in
    /// `values` by symbol instead, where given: settings a runner has not applied yet) and what
    /// it keeps through the LV2 state interface, the files it refers to copied into `files`.
    /// The state interface's `save` may run while the plugin runs (LV2 leaves the locking to it).
    func takeState(files directory: String, values: [String: Float] = [:]) throws(PluginError) -> OpaquePointer {
        let source = StateValues(instance: self, values: values)
        let context = Unmanaged.passUnretained(source).toOpaque()
        let state = withExtendedLifetime(source) { directory.withCString { dir in scratchDirectory.withCString { scratch in
            // Files the plugin made with makePath are in the scratch folder: lilv copies those
            // its state refers to into the state's own folder.
            lilv_state_new_from_instance(plugin, instance, world.urids.mapFeature, scratch, dir, dir, dir, { symbol, context, size, type in
                guard let symbol, let context, let size, let type else { return nil }
                let source = Unmanaged<StateValues>.fromOpaque(context).takeUnretainedValue()
                guard let value = source.value(String(cString: symbol)) else { return nil }
                size.pointee = 4
                type.pointee = source.floatType
                return UnsafeRawPointer(value)
            }, context, 1 | 2, features.array)   // LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE
        } } }
        guard let state else { throw PluginError(.runtime, "the state of '\(description.name)' could not be taken") }
        return state
    }

    /// The control inputs' values a state is taken with (lilv copies each as it asks).
    private final class StateValues {
        let floatType: UInt32
        private let ports: [String: Int]
        private let values: UnsafeMutablePointer<Float>

        init(instance: LV2PluginInstance, values overrides: [String: Float]) {
            floatType = instance.world.urids.map(LV2URI.atomFloat)
            let inputs = instance.description.controlInputs
            ports = Dictionary(inputs.map { ($0.symbol, $0.index) }) { first, _ in first }
            values = .allocate(capacity: max(1, instance.description.ports.count))
            values.initialize(repeating: 0, count: max(1, instance.description.ports.count))
            for port in inputs { values[port.index] = overrides[port.symbol] ?? instance.controls[port.index] }
        }

        deinit { values.deallocate() }

        func value(_ symbol: String) -> UnsafePointer<Float>? { ports[symbol].map { UnsafePointer(values + $0) } }
    }

    /// Restores a state saved by ``saveState(to:)`` in `directory`; false when there is none.
    /// - Throws: a runtime error when the file is there but lilv cannot read it.
    public func restoreState(from directory: String) throws(PluginError) -> Bool {
        let path = directory + "/" + Self.stateFileName
        guard FileManager.default.fileExists(atPath: path) else { return false }
        let (read, messages) = try LilvMessages.capturing { () throws(PluginError) in
            lilv_state_new_from_file(world.world, world.urids.mapFeature, nil, path)
        }
        guard let state = read else {
            throw PluginError(.runtime, "cannot read the plugin state '\(path)'" + (messages.isEmpty ? "" : ": " + messages.joined(separator: "; ")))
        }
        defer { lilv_state_free(state) }
        try restore(state, from: "the saved state '\(path)'")
        return true
    }

    /// Applies a preset's or saved state's port values and plugin state, after checking every
    /// port value as ``setControl(_:to:)`` does: finite and in the port's range. A value that is
    /// not refuses the whole state, and nothing of it is applied.
    /// - Throws: a usage error naming `source`, the port, its value and its range.
    private func restore(_ state: OpaquePointer, from source: String) throws(PluginError) {
        let values = try checkedPortValues(state, from: source)
        for (port, value) in values { controls[port.index] = value }
        // Then the plugin's own state (LV2 state interface), with no port values this time.
        lilv_state_restore(state, instance, nil, nil, 0, features.array)
    }

    /// The control input values `state` holds, each checked against its port's range.
    /// - Throws: a usage error naming `source`, the port, its value and its range.
    private func checkedPortValues(_ state: OpaquePointer, from source: String) throws(PluginError) -> [(port: LV2PortDescription, value: Float)] {
        // Collected: lilv hands them over one by one.
        restoring = []
        let context = Unmanaged.passUnretained(self).toOpaque()
        lilv_state_emit_port_values(state, { symbol, context, value, size, type in
            guard let symbol, let context, let value else { return }
            Unmanaged<LV2PluginInstance>.fromOpaque(context).takeUnretainedValue().collect(symbol: String(cString: symbol), value: value, size: size, type: type)
        }, context)
        let values = restoring
        restoring = []
        for (port, value) in values {
            guard value.isFinite, port.minimum.map({ value >= $0 }) ?? true, port.maximum.map({ value <= $0 }) ?? true else {
                throw PluginError(.usage, "\(source) sets \(port.symbol)=\(value), out of range for '\(description.name)': expected a finite value\(port.minimum != nil ? ", \(port.rangeText)" : ""); nothing of it was applied")
            }
        }
        return values
    }

    /// Port values being restored (``restore(_:from:)``), before they are checked.
    private var restoring: [(port: LV2PortDescription, value: Float)] = []

    /// A port value a preset or state holds: floats (and ints, doubles) for control inputs.
    private func collect(symbol: String, value: UnsafeRawPointer, size: UInt32, type: UInt32) {
        guard let port = description.controlInputs.first(where: { $0.symbol == symbol }) else { return }
        let urids = world.urids
        switch (type, size) {
        case (urids.map(LV2URI.atomFloat), 4): restoring.append((port, value.loadUnaligned(as: Float.self)))
        case (urids.map("http://lv2plug.in/ns/ext/atom#Double"), 8): restoring.append((port, Float(value.loadUnaligned(as: Double.self))))
        case (urids.map(LV2URI.atomInt), 4): restoring.append((port, Float(value.loadUnaligned(as: Int32.self))))
        default: break
        }
    }

    // MARK: The live host's view

    /// What the live host's process thread needs of this instance (``PluginHostProcessor``):
    /// pointers into it, valid while it lives; the instance must outlive the processor.
    public func hostPorts() -> PluginHostPorts {
        let descriptor = instance.pointee.lv2_descriptor!.pointee
        func indices(_ ports: [LV2PortDescription]) -> UnsafeBufferPointer<UInt32> {
            let buffer = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: max(ports.count, 1))
            for (slot, port) in ports.enumerated() { buffer[slot] = UInt32(port.index) }
            hostTables.append(UnsafeMutableRawPointer(buffer.baseAddress!))
            return UnsafeBufferPointer(start: buffer.baseAddress, count: ports.count)
        }
        func sequences(_ indices: [Int]) -> UnsafeBufferPointer<UnsafeMutableRawPointer> {
            let buffer = UnsafeMutableBufferPointer<UnsafeMutableRawPointer>.allocate(capacity: max(indices.count, 1))
            for (slot, index) in indices.enumerated() { buffer[slot] = sequenceBuffers[index]! }
            hostTables.append(UnsafeMutableRawPointer(buffer.baseAddress!))
            return UnsafeBufferPointer(start: buffer.baseAddress, count: indices.count)
        }
        var ports = PluginHostPorts(
            handle: instance.pointee.lv2_handle, connect: descriptor.connect_port,
            run: hasWorker ? lv2RunWithWorker : descriptor.run,
            audioInputs: indices(description.signalInputs), audioOutputs: indices(description.signalOutputs),
            controls: controls, portCount: description.ports.count,
            eventInputs: sequences(atomInputs), eventOutputs: sequences(atomOutputs),
            midiOutputs: sequences(description.midiOutputs.map(\.index)),
            midiInput: description.midiInputs.first.flatMap { sequenceBuffers[$0.index] },
            sequenceCapacity: Self.sequenceBytes, sequenceType: sequenceType, chunkType: chunkType,
            midiEventType: world.urids.map(LV2URI.midiEvent), maximumBlock: maximumBlock,
            runHandle: hasWorker ? UnsafeMutableRawPointer(runContext) : nil)
        ports.fixedBlock = fixedBlock ?? 0
        // The event input that takes the transport's position (LV2 Time), if any.
        if let index = atomInputs.first(where: { index in
            lilv_plugin_get_port_by_index(plugin, UInt32(index)).map { lilv_port_supports_event(plugin, $0, world.node(LV2URI.timePosition)) } ?? false
        }) {
            ports.positionInput = sequenceBuffers[index]
            ports.positionTypes = .init(urids: world.urids)
        }
        return ports
    }

    /// The port index of control input `symbol`, after checking `value` against its range.
    /// - Throws: the usage errors of ``setControl(_:to:)``.
    public func checkedControlPort(_ symbol: String, value: Float) throws(PluginError) -> Int {
        let port = try controlInput(symbol)
        if let minimum = port.minimum, let maximum = port.maximum, !(minimum ... maximum).contains(value) {
            throw PluginError(.usage, "\(symbol)=\(value) is out of range for '\(description.name)': expected \(port.rangeText)")
        }
        return port.index
    }

    // MARK: Running

    /// Returns the plugin to its state after activation (LV2: deactivate, then activate), keeping
    /// its control values.
    public func reset() {
        lilv_instance_deactivate(instance)
        clearSequences()
        lilv_instance_activate(instance)
    }

    /// The buffer of audio or CV port `index` (``maximumBlock`` frames), or nil for another kind.
    public func samples(port index: Int) -> UnsafeMutablePointer<Float>? { sampleBuffers[index] }

    /// The buffer of atom port `index` (``sequenceBytes`` bytes), or nil for another kind.
    public func sequence(port index: Int) -> UnsafeMutableRawPointer? { sequenceBuffers[index] }

    /// Work the plugin scheduled that the worker's ring had no room for (the plugin was told
    /// LV2_WORKER_ERR_NO_SPACE). Any thread.
    public var refusedWorkRequests: Int { worker.refused.load(ordering: .relaxed) }

    /// Runs the plugin for `frames` (1 ... ``maximumBlock``; exactly ``fixedBlock`` when set)
    /// frames on what its buffers hold (then hands it its worker's responses), then empties its
    /// event inputs and readies its event outputs for the next run.
    public func run(frames: Int) {
        precondition(frames > 0 && frames <= maximumBlock, "an LV2 run of \(frames) frames; expected 1 ... \(maximumBlock)")
        precondition(fixedBlock == nil || frames == fixedBlock, "an LV2 run of \(frames) frames; this plugin runs fixed blocks of \(fixedBlock ?? 0)")
        lilv_instance_run(instance, UInt32(frames))
        if hasWorker { worker.afterRun() }
        clearSequences()
    }

    private func clearSequences() {
        for index in atomInputs {
            aq_lv2_sequence_clear(sequenceBuffers[index]!.assumingMemoryBound(to: LV2_Atom_Sequence.self), sequenceType)
        }
        for index in atomOutputs {
            aq_lv2_sequence_prepare_output(sequenceBuffers[index]!.assumingMemoryBound(to: LV2_Atom_Sequence.self), UInt32(Self.sequenceBytes), chunkType)
        }
    }
}
