import CJack
import Synchronization

/// Which latency JACK is asking about in a latency callback.
public enum JackLatencyMode: Sendable {
    /// Capture latency: how long ago the data at input ports entered the graph.
    case capture
    /// Playback latency: how long until the data at output ports leaves the graph.
    case playback
}

/// The handlers for JACK's non-real-time notifications and the counters they keep.
///
/// JACK calls these on its notification thread (never the process thread). Handlers may be set
/// or replaced at any time, from any thread, except the first port registration handler, which
/// must come before activation (``onPortRegistration(_:)``).
public final class JackNotifications: Sendable {
    struct Handlers {
        var xrun: (@Sendable () -> Void)?
        var bufferSize: (@Sendable (Int) -> Void)?
        var sampleRate: (@Sendable (Int) -> Void)?
        var latency: (@Sendable (JackLatencyMode) -> Void)?
        var portRegistration: (@Sendable (_ portName: String, _ registered: Bool) -> Void)?
        var portConnect: (@Sendable (_ from: String, _ to: String, _ connected: Bool) -> Void)?
        var shutdown: (@Sendable (_ reason: String) -> Void)?
        var freewheel: (@Sendable (Bool) -> Void)?
    }

    let handlers = Mutex(Handlers())
    /// The client's own ports as raw `jack_port_t *` bits, for default latency propagation.
    let ownPorts = Mutex<(inputs: [UInt], outputs: [UInt])>(([], []))
    /// The range last written on the target ports, per mode, and the ports that hold it.
    private struct Propagated { var min: UInt32, max: UInt32, ports: [UInt] }
    private let propagated = Mutex<[JackLatencyMode: Propagated]>([:])

    /// Xruns the server reported since the client opened.
    public let xrunCount = Atomic<Int>(0)
    /// Whether the server has shut down or thrown this client out.
    public let hasShutDown = Atomic<Bool>(false)
    /// Whether the server is in freewheel mode now.
    public let isFreewheeling = Atomic<Bool>(false)
    /// Whether the port registration callback is installed (``onPortRegistration(_:)``).
    private let portRegistrationInstalled = Atomic<Bool>(false)
    /// Whether the port connect callback is installed (``onPortConnect(_:)``).
    private let portConnectInstalled = Atomic<Bool>(false)
    /// The reason the server gave when it shut down, once it has.
    public let shutdownReason = Mutex<String?>(nil)
    /// Whether the shutdown was the server dropping this client (too slow: JACK's "zombie"),
    /// the server still running, rather than the server going away. Any thread.
    public let wasZombified = Atomic<Bool>(false)

    init() {}

    /// Calls `handler` after each xrun (a cycle that missed its deadline).
    public func onXrun(_ handler: (@Sendable () -> Void)?) { handlers.withLock { $0.xrun = handler } }
    /// Calls `handler` with the new period, frames.
    public func onBufferSizeChange(_ handler: (@Sendable (Int) -> Void)?) { handlers.withLock { $0.bufferSize = handler } }
    /// Calls `handler` with the new sample rate, Hz.
    public func onSampleRateChange(_ handler: (@Sendable (Int) -> Void)?) { handlers.withLock { $0.sampleRate = handler } }
    /// Calls `handler` when the graph's latencies were recomputed (after JACK's default
    /// propagation through this client's ports).
    public func onLatencyChange(_ handler: (@Sendable (JackLatencyMode) -> Void)?) { handlers.withLock { $0.latency = handler } }
    /// Calls `handler` with a port's full name when any client registers (`true`) or unregisters it.
    ///
    /// Set the first handler before the client is activated: only then does JACK take the C
    /// callback, which is installed on demand rather than always. With it, the server sends this
    /// client one notification per port registered anywhere, its own included, which slows the
    /// activation of a wide client (docs/MEASUREMENTS.md). Later handlers replace the first at
    /// any time.
    /// - Throws: ``JackError/invalidState(_:)`` when the client is already active (JACK refuses
    ///   callbacks on an active client) or closed, and had no handler.
    public func onPortRegistration(_ handler: (@Sendable (_ portName: String, _ registered: Bool) -> Void)?) throws(JackError) {
        handlers.withLock { $0.portRegistration = handler }
        guard handler != nil, !portRegistrationInstalled.load(ordering: .acquiring) else { return }
        let bits = clientBits.load(ordering: .acquiring)
        guard let client = OpaquePointer(bitPattern: bits) else {
            throw .invalidState("the JACK client is closed: a port registration handler cannot be installed")
        }
        let code = jack_set_port_registration_callback(client, { portID, registered, argument in
            guard let handler = notifications(argument).handlers.withLock({ $0.portRegistration }) else { return }
            // The client pointer is not passed; jack_port_by_id needs one, so names come from the handler's client.
            let name = notifications(argument).portName(id: portID)
            handler(name ?? "#\(portID)", registered != 0)
        }, Unmanaged.passUnretained(self).toOpaque())
        if code != 0 {
            throw .invalidState("a port registration handler can only be installed before the client is activated (JACK refuses callbacks on an active client; jack_set_port_registration_callback returned \(code))")
        }
        portRegistrationInstalled.store(true, ordering: .releasing)
    }

    /// Calls `handler` with the two ports' full names when any two ports are connected (`true`)
    /// or disconnected, anywhere in the graph.
    ///
    /// Installed on demand, as ``onPortRegistration(_:)`` is: set the first handler before the
    /// client is activated. Later handlers replace the first at any time.
    /// - Throws: ``JackError/invalidState(_:)`` when the client is already active or closed, and
    ///   had no handler.
    public func onPortConnect(_ handler: (@Sendable (_ from: String, _ to: String, _ connected: Bool) -> Void)?) throws(JackError) {
        handlers.withLock { $0.portConnect = handler }
        guard handler != nil, !portConnectInstalled.load(ordering: .acquiring) else { return }
        let bits = clientBits.load(ordering: .acquiring)
        guard let client = OpaquePointer(bitPattern: bits) else {
            throw .invalidState("the JACK client is closed: a port connect handler cannot be installed")
        }
        let code = jack_set_port_connect_callback(client, { from, to, connected, argument in
            let center = notifications(argument)
            guard let handler = center.handlers.withLock({ $0.portConnect }) else { return }
            handler(center.portName(id: from) ?? "#\(from)", center.portName(id: to) ?? "#\(to)", connected != 0)
        }, Unmanaged.passUnretained(self).toOpaque())
        if code != 0 {
            throw .invalidState("a port connect handler can only be installed before the client is activated (jack_set_port_connect_callback returned \(code))")
        }
        portConnectInstalled.store(true, ordering: .releasing)
    }

    /// Calls `handler` with the server's reason when it shuts down or drops this client. Do not
    /// close the client from the handler; signal another thread.
    public func onShutdown(_ handler: (@Sendable (_ reason: String) -> Void)?) { handlers.withLock { $0.shutdown = handler } }
    /// Calls `handler` when the server enters (`true`) or leaves freewheel mode.
    public func onFreewheelChange(_ handler: (@Sendable (Bool) -> Void)?) { handlers.withLock { $0.freewheel = handler } }

    /// Installs the C callbacks on `client` (all but the port registration callback, installed
    /// with its first handler). Must run before `jack_activate`.
    func install(on client: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        jack_set_xrun_callback(client, { argument in
            notifications(argument).xrunCount.add(1, ordering: .relaxed)
            notifications(argument).handlers.withLock { $0.xrun }?()
            return 0
        }, context)
        jack_set_buffer_size_callback(client, { frames, argument in
            notifications(argument).handlers.withLock { $0.bufferSize }?(Int(frames))
            return 0
        }, context)
        jack_set_sample_rate_callback(client, { rate, argument in
            notifications(argument).handlers.withLock { $0.sampleRate }?(Int(rate))
            return 0
        }, context)
        jack_set_freewheel_callback(client, { starting, argument in
            notifications(argument).isFreewheeling.store(starting != 0, ordering: .relaxed)
            notifications(argument).handlers.withLock { $0.freewheel }?(starting != 0)
        }, context)
        jack_set_latency_callback(client, { mode, argument in
            let center = notifications(argument)
            let latencyMode: JackLatencyMode = mode == JackCaptureLatency ? .capture : .playback
            center.propagateDefaultLatency(latencyMode)
            center.handlers.withLock { $0.latency }?(latencyMode)
        }, context)
        jack_on_info_shutdown(client, { code, reason, argument in
            // Like a signal handler: record, notify, and leave jack_client_close to another thread.
            let center = notifications(argument)
            center.wasZombified.store(code.rawValue & JackClientZombie.rawValue != 0, ordering: .relaxed)
            let text = reason.map { String(cString: $0) } ?? "the JACK server shut down"
            center.shutdownReason.withLock { $0 = text }
            center.hasShutDown.store(true, ordering: .releasing)
            center.handlers.withLock { $0.shutdown }?(text)
        }, context)
        clientBits.store(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(client))), ordering: .releasing)
    }

    private let clientBits = Atomic<UInt>(0)

    /// Forgets the client, which is closing: nothing is installed on it afterwards.
    func detach() { clientBits.store(0, ordering: .releasing) }

    /// Frames this client delays what passes from its inputs to its outputs (a hosted plugin's
    /// latency), added to the latency JACK propagates through it; after a change, call
    /// ``JackClient/recomputeLatencies()``. Any thread.
    public let processingLatency = Atomic<Int>(0)

    private func portName(id: jack_port_id_t) -> String? {
        let bits = clientBits.load(ordering: .acquiring)
        guard bits != 0, let client = OpaquePointer(bitPattern: bits),
              let port = jack_port_by_id(client, id) else { return nil }
        return String(cString: jack_port_name(port))
    }

    /// JACK's default latency rule, which a client that installs a latency callback must apply
    /// itself: the capture latency of every output is the combined range of the inputs', and the
    /// playback latency of every input the combined range of the outputs'.
    private func propagateDefaultLatency(_ mode: JackLatencyMode) {
        let (inputs, outputs) = ownPorts.withLock { ($0.inputs, $0.outputs) }
        let jackMode = mode == .capture ? JackCaptureLatency : JackPlaybackLatency
        let sources = mode == .capture ? inputs : outputs
        let targets = mode == .capture ? outputs : inputs
        guard !targets.isEmpty else { return }
        var combined = jack_latency_range_t(min: 0, max: 0)
        var first = true
        for bits in sources {
            var range = jack_latency_range_t()
            jack_port_get_latency_range(OpaquePointer(bitPattern: bits), jackMode, &range)
            if first {
                combined = range
                first = false
            } else {
                combined.min = min(combined.min, range.min)
                combined.max = max(combined.max, range.max)
            }
        }
        // A client that processes on the way through (an LV2 plugin in `aqjack host`) adds its latency.
        let added = UInt32(max(0, processingLatency.load(ordering: .relaxed)))
        combined.min += added
        combined.max += added
        // Only a change is written. The server waits for this callback (it is synchronous) at
        // every cycle whose graph changed, and libjack's jack_port_set_latency_range sleeps 1.1
        // periods per call while a graph change is pending (its WaitGraphChange), stalling the
        // server's connects for every client. A port JACK registers holds {0, 0}
        // (JackPort::Allocate in JACK2), so a range of {0, 0} is not written on a new port
        // either (docs/MEASUREMENTS.md, "Latency ranges written only when they change").
        let pending: [UInt] = propagated.withLock { last in
            let previous = last[mode]
            last[mode] = Propagated(min: combined.min, max: combined.max, ports: targets)
            let range = (combined.min, combined.max)
            if let previous, previous.ports == targets { return (previous.min, previous.max) == range ? [] : targets }
            let holding = Set(previous?.ports ?? [])
            let held = previous.map { ($0.min, $0.max) } ?? (0, 0)
            return targets.filter { (holding.contains($0) ? held : (0, 0)) != range }
        }
        for bits in pending {
            jack_port_set_latency_range(OpaquePointer(bitPattern: bits), jackMode, &combined)
        }
    }

    /// Forgets that `bits` (an own port being unregistered) holds a propagated range: a port
    /// registered later under the same id starts again at {0, 0}.
    func forget(port bits: UInt) {
        propagated.withLock { last in
            for mode in Array(last.keys) { last[mode]?.ports.removeAll { $0 == bits } }
        }
    }
}

private func notifications(_ argument: UnsafeMutableRawPointer?) -> JackNotifications {
    Unmanaged<JackNotifications>.fromOpaque(argument!).takeUnretainedValue()
}
