import AQCore
import CJack
import Synchronization

/// A client of a JACK server: ports, activation with a real-time processor, connections and time.
///
/// Opening never starts a server (`JackNoStartServer`). Methods other than the ones marked
/// otherwise may be called from any non-real-time thread.
///
/// ### Threads
/// - the **process thread** (JACK's real-time thread) runs only the bound ``RealtimeProcessor``;
/// - JACK's **notification thread** runs the handlers in ``notifications``;
/// - everything else here runs on the caller's thread.
public final class JackClient: @unchecked Sendable {
    /// The `jack_client_t *`, for the rare call this wrapper does not cover.
    public let rawValue: OpaquePointer
    /// The server this client is connected to.
    public let serverName: String
    /// The client's name as the server knows it (may differ from the requested one unless
    /// `exactName` was set).
    public let name: String
    /// The notification handlers and counters (xruns, shutdown, freewheel).
    public let notifications = JackNotifications()

    private let bridge: UnsafeMutablePointer<ProcessBridgeState>
    private struct State {
        var isActive = false
        var isClosed = false
        /// Keeps the bound processor alive while the process thread may call it.
        var processor: (any RealtimeProcessor)?
    }
    private let state = Mutex(State())

    /// Opens a client on a running server.
    ///
    /// - Parameters:
    ///   - name: the client name to ask for.
    ///   - server: the server name; `nil` means `$JACK_DEFAULT_SERVER`, else `default`.
    ///   - exactName: fail rather than let JACK rename the client when the name is taken.
    /// - Throws: ``JackError/serverNotRunning(server:status:)`` when no such server runs (this
    ///   returns within milliseconds), ``JackError/openFailed(server:client:status:)`` otherwise.
    ///
    /// The corresponding JACK function is `jack_client_open`.
    /// - Parameter stallLogCapacity: how many stalled callbacks ``stalledCycleDetails`` keeps
    ///   (20 bytes each, allocated and touched here); all of them are counted.
    public init(name: String, server: String? = nil, exactName: Bool = false, stallLogCapacity: Int = 64) throws(JackError) {
        JackServer.quietLibraryMessages()
        let serverName = JackServer.resolvedName(server)
        try JackServer.checkNames(server: serverName, client: name)
        var options = JackNoStartServer.rawValue
        if exactName { options |= JackUseExactName.rawValue }
        var status = jack_status_t(rawValue: 0)
        guard let client = cjack_client_open(name, jack_options_t(rawValue: options), &status, serverName) else {
            let bits = JackStatus(rawValue: status.rawValue)
            // JackServerFailed: nothing answered. (JackServerError alone comes from a running
            // server that refused, e.g. an exact name already taken.)
            if bits.contains(.serverFailed) {
                throw .serverNotRunning(server: serverName, status: bits)
            }
            throw .openFailed(server: serverName, client: name, status: bits)
        }
        rawValue = client
        self.serverName = serverName
        self.name = String(cString: jack_get_client_name(client))
        bridge = .allocate(capacity: 1)
        bridge.initialize(to: ProcessBridgeState(client: client, stallCapacity: stallLogCapacity))
        jack_set_process_callback(client, jackProcessThunk, UnsafeMutableRawPointer(bridge))
        notifications.install(on: client)
    }

    deinit {
        close()
        bridge.pointee.releaseTables()
        bridge.pointee.timing.deinitialize(count: 1)
        bridge.pointee.timing.deallocate()
        bridge.deinitialize(count: 1)
        bridge.deallocate()
    }

    /// How the process callback has kept time since the client opened. Any thread.
    public var processTiming: ProcessTiming {
        let timing = bridge.pointee.timing
        return ProcessTiming(cycles: timing.pointee.cycles.load(ordering: .relaxed),
                             lateCycles: timing.pointee.lateCycles.load(ordering: .relaxed),
                             stalledCycles: timing.pointee.stalledCycles.load(ordering: .relaxed),
                             slowCycles: timing.pointee.slowCycles.load(ordering: .relaxed),
                             maximumLatenessMicros: timing.pointee.maximumLatenessMicros.load(ordering: .relaxed),
                             maximumDurationMicros: timing.pointee.maximumDurationMicros.load(ordering: .relaxed),
                             maximumCPUMicros: timing.pointee.maximumCPUMicros.load(ordering: .relaxed),
                             midiEventsLost: timing.pointee.midiEventsLost.load(ordering: .relaxed))
    }

    /// The first stalled callbacks (``ProcessTiming/stalledCycles``) since the client opened,
    /// as many as the log holds (`stallLogCapacity`), in order. Any thread.
    public var stalledCycleDetails: [StalledCycle] {
        let timing = bridge.pointee.timing
        let count = min(Int(timing.pointee.stalledCycles.load(ordering: .acquiring)), timing.pointee.stallCapacity)
        return (0 ..< count).map { timing.pointee.stalls[$0] }
    }

    /// Deactivates (if needed) and closes the client; later calls do nothing. Safe after the
    /// server has shut down: then the client is left as it is, not closed (unless the server,
    /// still running, dropped it as too slow). libjack's
    /// `jack_client_close` on a client whose server died can hang or crash, above all once a
    /// server of the same name has started again (jack2 issue 395; Pd and Jamulus report the
    /// same; here a program's `AudioQueueDispose` after jackd was killed and restarted crashed
    /// in it, CI at 97c2848). What is left is the dead client's memory, once per server death.
    ///
    /// The corresponding JACK function is `jack_client_close`.
    public func close() {
        let (wasOpen, wasActive) = state.withLock { state in
            defer { state.isClosed = true; state.isActive = false }
            return (!state.isClosed, state.isActive)
        }
        guard wasOpen else { return }
        let shutDown = notifications.hasShutDown.load(ordering: .acquiring)
        let serverGone = shutDown && !notifications.wasZombified.load(ordering: .relaxed)
        if wasActive && !shutDown { jack_deactivate(rawValue) }
        notifications.detach()
        // A client the running server dropped (a zombie) is closed, so that it leaves the server.
        if !serverGone { jack_client_close(rawValue) }
        state.withLock { $0.processor = nil }
    }

    // MARK: Server facts

    /// Frames per second of the server.
    public var sampleRate: Int { Int(jack_get_sample_rate(rawValue)) }
    /// Frames per cycle (the period) now.
    public var bufferSize: Int { Int(jack_get_buffer_size(rawValue)) }
    /// Whether the server runs its cycles with real-time scheduling.
    public var isRealtime: Bool { jack_is_realtime(rawValue) != 0 }
    /// The server's DSP load, percent.
    public var cpuLoad: Double { Double(jack_cpu_load(rawValue)) }

    // MARK: Time

    /// The estimated current JACK frame time (`jack_frame_time`): any thread, not exact.
    public var estimatedFrameTime: UInt32 { jack_frame_time(rawValue) }
    /// JACK's microsecond clock (`jack_get_time`), the clock of ``ProcessCycle/cycleStartMicros``.
    public var microseconds: UInt64 { jack_get_time() }

    /// JACK's estimate of the microsecond time of frame `frame` (`jack_frames_to_time`).
    public func microseconds(atFrame frame: UInt32) -> UInt64 { jack_frames_to_time(rawValue, frame) }

    /// JACK's estimate of the frame at microsecond time `micros` (`jack_time_to_frames`).
    public func frame(atMicroseconds micros: UInt64) -> UInt32 { jack_time_to_frames(rawValue, micros) }

    // MARK: Ports

    /// Registers an audio port named `client:shortName`. `isPhysical` marks it as hardware
    /// (`JackPortIsPhysical`), for a stand-in device: players that connect to the physical
    /// ports by default find it.
    ///
    /// The corresponding JACK function is `jack_port_register`.
    public func registerPort(_ shortName: String, direction: JackPortDirection, isTerminal: Bool = false,
                             isPhysical: Bool = false, isMIDI: Bool = false) throws(JackError) -> JackPort {
        var flags = direction == .input ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue
        if isTerminal { flags |= JackPortIsTerminal.rawValue }
        if isPhysical { flags |= JackPortIsPhysical.rawValue | JackPortIsTerminal.rawValue }
        let type = isMIDI ? cjack_default_midi_type() : cjack_default_audio_type()
        guard let port = jack_port_register(rawValue, shortName, type, UInt(flags), 0) else {
            throw .portRegistrationFailed(port: "\(name):\(shortName)")
        }
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(port)))
        notifications.ownPorts.withLock {
            if direction == .input { $0.inputs.append(bits) } else { $0.outputs.append(bits) }
        }
        return JackPort(rawValue: port, direction: direction)
    }

    /// Registers `count` ports named `prefix1 ... prefixN` (`in_1`, `in_2`, ...).
    public func registerPorts(prefix: String, count: Int, direction: JackPortDirection) throws(JackError) -> [JackPort] {
        var ports: [JackPort] = []
        for index in 1 ... max(count, 1) where count > 0 {
            ports.append(try registerPort("\(prefix)\(index)", direction: direction))
        }
        return ports
    }

    /// Unregisters a port. Not while it is bound to an active processor.
    ///
    /// The corresponding JACK function is `jack_port_unregister`.
    public func unregister(_ port: JackPort) throws(JackError) {
        let bound = state.withLock { $0.isActive }
        if bound {
            let state = bridge.pointee
            let inUse = (0 ..< state.inputCount).contains { state.inputPorts![$0] == port.rawValue }
                || (0 ..< state.outputCount).contains { state.outputPorts![$0] == port.rawValue }
            if inUse { throw .invalidState("port '\(port.name)' is bound to the running processor; deactivate first") }
        }
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(port.rawValue)))
        notifications.ownPorts.withLock {
            $0.inputs.removeAll { $0 == bits }
            $0.outputs.removeAll { $0 == bits }
        }
        notifications.forget(port: bits)
        let code = jack_port_unregister(rawValue, port.rawValue)
        if code != 0 { throw .callFailed(function: "jack_port_unregister", code: code) }
    }

    // MARK: Activation

    /// Binds `processor` to `inputs` and `outputs` (in that order, its channel order) and
    /// activates the client: from now on the process thread calls the processor every cycle.
    ///
    /// Allocates the port tables here, before activation, so the process thread never does.
    /// The client keeps `processor` alive until ``deactivate()`` or ``close()``.
    ///
    /// The corresponding JACK function is `jack_activate`.
    public func activate<Processor: RealtimeProcessor>(processor: Processor?, inputs: [JackPort] = [], outputs: [JackPort] = [],
                                                        midiInputs: [JackPort] = [], midiOutputs: [JackPort] = []) throws(JackError) {
        try state.withLock { (state) throws(JackError) in
            if state.isClosed { throw .invalidState("client '\(name)' is closed") }
            if state.isActive { throw .invalidState("client '\(name)' is already active; deactivate it first") }
            bridge.pointee.releaseTables()
            bridge.pointee.inputPorts = .allocate(capacity: max(inputs.count, 1))
            bridge.pointee.inputBuffers = .allocate(capacity: max(inputs.count, 1))
            bridge.pointee.outputPorts = .allocate(capacity: max(outputs.count, 1))
            bridge.pointee.outputBuffers = .allocate(capacity: max(outputs.count, 1))
            for (index, port) in inputs.enumerated() { bridge.pointee.inputPorts![index] = port.rawValue }
            for (index, port) in outputs.enumerated() { bridge.pointee.outputPorts![index] = port.rawValue }
            bridge.pointee.inputCount = inputs.count
            bridge.pointee.outputCount = outputs.count
            if !midiInputs.isEmpty {
                bridge.pointee.midiPorts = .allocate(capacity: midiInputs.count)
                for (index, port) in midiInputs.enumerated() { bridge.pointee.midiPorts![index] = port.rawValue }
                bridge.pointee.midiEvents = .allocate(capacity: midiInputs.count * ProcessBridgeState.midiEventCapacity)
                bridge.pointee.midiLists = .allocate(capacity: midiInputs.count)
                bridge.pointee.midiLists!.initialize(repeating: MIDIEventList(events: nil, count: 0), count: midiInputs.count)
                bridge.pointee.midiCount = midiInputs.count
            }
            if !midiOutputs.isEmpty {
                let capacity = ProcessBridgeState.midiEventCapacity
                bridge.pointee.midiOutputPorts = .allocate(capacity: midiOutputs.count)
                for (index, port) in midiOutputs.enumerated() { bridge.pointee.midiOutputPorts![index] = port.rawValue }
                bridge.pointee.midiOutputEvents = .allocate(capacity: midiOutputs.count * capacity)
                bridge.pointee.midiOutputCounts = .allocate(capacity: midiOutputs.count)
                bridge.pointee.midiOutputCounts!.initialize(repeating: 0, count: midiOutputs.count)
                bridge.pointee.midiOutputLists = .allocate(capacity: midiOutputs.count)
                for index in 0 ..< midiOutputs.count {
                    (bridge.pointee.midiOutputLists! + index).initialize(to: MIDIOutputList(
                        events: bridge.pointee.midiOutputEvents! + index * capacity, capacity: capacity,
                        count: bridge.pointee.midiOutputCounts! + index))
                }
                bridge.pointee.midiOutputCount = midiOutputs.count
            }
            if let processor {
                bridge.pointee.entry = Processor.realtimeEntry
                bridge.pointee.processor = Unmanaged.passUnretained(processor).toOpaque()
            } else {
                bridge.pointee.entry = nil
                bridge.pointee.processor = nil
            }
            // A processor that takes part in the transport becomes a slow-sync client: JACK holds
            // a start or locate until it is ready.
            if let syncing = processor as? any TransportSyncing {
                bridge.pointee.syncEntry = type(of: syncing).syncEntry
                let code = jack_set_sync_callback(rawValue, jackSyncThunk, UnsafeMutableRawPointer(bridge))
                if code != 0 { throw .callFailed(function: "jack_set_sync_callback", code: code) }
            } else {
                bridge.pointee.syncEntry = nil
            }
            state.processor = processor
            let code = jack_activate(rawValue)
            if code != 0 {
                state.processor = nil
                throw .callFailed(function: "jack_activate", code: code)
            }
            state.isActive = true
        }
    }

    /// Activates with no processor: bound outputs (none here) get silence. For clients that
    /// only list or connect ports.
    public func activate() throws(JackError) {
        try activate(processor: Optional<CaptureProcessor>.none)
    }

    /// Stops the process callbacks; when this returns the processor is no longer called and is
    /// released.
    ///
    /// The corresponding JACK function is `jack_deactivate`.
    public func deactivate() throws(JackError) {
        try state.withLock { (state) throws(JackError) in
            guard state.isActive else { return }
            if !notifications.hasShutDown.load(ordering: .acquiring) {
                let code = jack_deactivate(rawValue)
                if code != 0 { throw .callFailed(function: "jack_deactivate", code: code) }
            }
            state.isActive = false
            state.processor = nil
            bridge.pointee.entry = nil
            bridge.pointee.processor = nil
        }
    }

    /// Asks the server to recompute every port's latency (after
    /// ``JackNotifications/processingLatency`` changed). Not on the process thread.
    ///
    /// The corresponding JACK function is `jack_recompute_total_latencies`.
    public func recomputeLatencies() {
        _ = jack_recompute_total_latencies(rawValue)
    }

    /// The `pthread_t` of the client's process (real-time) thread, once active
    /// (`jack_client_thread_id`).
    public var processThreadID: UInt { UInt(jack_client_thread_id(rawValue)) }

    /// Whether the client is active.
    public var isActive: Bool { state.withLock { $0.isActive } }

    /// Calls `callback` with `context` once on each thread JACK creates for this client, the
    /// process thread included, before its first use. Set before activating.
    ///
    /// The corresponding JACK function is `jack_set_thread_init_callback`.
    public func setThreadInitCallback(_ callback: @escaping @convention(c) (UnsafeMutableRawPointer?) -> Void,
                                      context: UnsafeMutableRawPointer? = nil) throws(JackError) {
        let code = jack_set_thread_init_callback(rawValue, callback, context)
        if code != 0 { throw .callFailed(function: "jack_set_thread_init_callback", code: code) }
    }

    /// Asks the server to change its period to `frames` (a power of two). Every client's
    /// buffer-size handler runs before the next cycle with the new size.
    ///
    /// The corresponding JACK function is `jack_set_buffer_size`.
    public func setBufferSize(_ frames: Int) throws(JackError) {
        let code = jack_set_buffer_size(rawValue, jack_nframes_t(frames))
        if code != 0 { throw .callFailed(function: "jack_set_buffer_size", code: code) }
    }

    // MARK: Connections and modes

    /// Connects output port `source` to input port `destination` (full names). An existing
    /// connection counts as success.
    ///
    /// - Returns: whether the connection is new (`false`: it existed already).
    ///
    /// The corresponding JACK function is `jack_connect`.
    @discardableResult
    public func connect(_ source: String, to destination: String) throws(JackError) -> Bool {
        let code = jack_connect(rawValue, source, destination)
        if code != 0 && code != EEXIST_CODE {
            if jack_port_by_name(rawValue, source) == nil { throw .noSuchPort(source) }
            if jack_port_by_name(rawValue, destination) == nil { throw .noSuchPort(destination) }
            throw .connectionFailed(source: source, destination: destination, connect: true, code: code)
        }
        return code == 0
    }

    /// Disconnects output port `source` from input port `destination`.
    ///
    /// The corresponding JACK function is `jack_disconnect`.
    public func disconnect(_ source: String, from destination: String) throws(JackError) {
        let code = jack_disconnect(rawValue, source, destination)
        if code != 0 { throw .connectionFailed(source: source, destination: destination, connect: false, code: code) }
    }

    /// Asks the server to enter (or leave) freewheel mode: cycles run back to back, as fast as
    /// the clients allow, without real-time scheduling. The switch takes effect asynchronously;
    /// ``JackNotifications/isFreewheeling`` follows it.
    ///
    /// The corresponding JACK function is `jack_set_freewheel`.
    public func setFreewheel(_ enabled: Bool) throws(JackError) {
        let code = jack_set_freewheel(rawValue, enabled ? 1 : 0)
        if code != 0 { throw .callFailed(function: "jack_set_freewheel", code: code) }
    }
}

// MARK: Transport

extension JackClient {
    /// The transport now (`jack_transport_query`). Any thread.
    public var transport: TransportState {
        var position = jack_position_t()
        let state = jack_transport_query(rawValue, &position)
        return TransportState(isRolling: state == JackTransportRolling,
                              isStartingOrRolling: state == JackTransportRolling || state == JackTransportStarting,
                              frame: position.frame)
    }

    /// Starts the transport rolling (`jack_transport_start`), from the next cycle on (after
    /// slow-sync clients are ready).
    public func startTransport() { jack_transport_start(rawValue) }

    /// Stops the transport (`jack_transport_stop`) at the next cycle.
    public func stopTransport() { jack_transport_stop(rawValue) }

    /// Moves the transport to `frame` (`jack_transport_locate`), at the next cycle.
    public func locateTransport(to frame: UInt32) throws(JackError) {
        let code = jack_transport_locate(rawValue, frame)
        if code != 0 { throw .callFailed(function: "jack_transport_locate", code: code) }
    }
}

/// `EEXIST`, which `jack_connect` returns for a connection that already exists.
private let EEXIST_CODE: Int32 = 17
