import AQCore
import CJack
import Synchronization

/// The JACK implementation of ``AudioDriver``: one JACK client, one port per channel, cycles on
/// JACK's process thread, JACK's frame clock; its graph is the ``AudioRouting``, JACK's transport
/// the ``AudioTransport``.
///
/// The driver owns its client and closes it in ``close()``.
public final class JackDriver: AudioDriver, AudioRouting, AudioTransport, @unchecked Sendable {
    /// The client, for what only JACK has (pretty-names, freewheel, notifications).
    public let client: JackClient
    private let ports = Mutex<(inputs: [JackPort], outputs: [JackPort], midiInputs: [JackPort], midiOutputs: [JackPort])>(([], [], [], []))
    private let freewheelHandlers = Mutex<[@Sendable (Bool) -> Void]>([])

    /// Takes over `client` (the driver closes it).
    public init(client: JackClient) { self.client = client }

    /// Opens a client on a running server (never starts one).
    public convenience init(name: String, server: String? = nil, exactName: Bool = false) throws(JackError) {
        self.init(client: try JackClient(name: name, server: server, exactName: exactName))
    }

    public var name: String { client.name }
    public var sampleRate: Int { client.sampleRate }
    public var bufferSize: Int { client.bufferSize }
    public var estimatedFrameTime: UInt32 { client.estimatedFrameTime }
    public var microseconds: UInt64 { client.microseconds }
    public func microseconds(atFrame frame: UInt32) -> UInt64 { client.microseconds(atFrame: frame) }
    public func frame(atMicroseconds micros: UInt64) -> UInt32 { client.frame(atMicroseconds: micros) }

    /// The ports made so far, in channel order.
    public var inputPorts: [JackPort] { ports.withLock { $0.inputs } }
    public var outputPorts: [JackPort] { ports.withLock { $0.outputs } }
    public var midiInputPorts: [JackPort] { ports.withLock { $0.midiInputs } }
    public var midiOutputPorts: [JackPort] { ports.withLock { $0.midiOutputs } }

    public func makeChannels(prefix: String, count: Int, direction: AudioChannelDirection) throws(AudioDriverError) -> [String] {
        let made: [JackPort]
        do {
            let existing = direction == .input ? inputPorts.count : outputPorts.count
            made = try (1 ... max(1, count)).map { (index) throws(JackError) in
                try client.registerPort("\(prefix)\(existing + index)", direction: direction == .input ? .input : .output)
            }
        } catch {
            throw AudioDriverError("\(error)")
        }
        ports.withLock { if direction == .input { $0.inputs += made } else { $0.outputs += made } }
        return made.map(\.name)
    }

    /// Control-voltage channels are audio ports with the signal-type metadata "CV".
    public func makeChannels(named names: [String], direction: AudioChannelDirection, kind: ChannelKind) throws(AudioDriverError) -> [String] {
        let made: [JackPort]
        do {
            made = try names.map { (name) throws(JackError) in
                let port = try client.registerPort(name, direction: direction == .input ? .input : .output, isMIDI: kind == .midi)
                if kind == .controlVoltage { try client.setSignalType("CV", ofPort: port.name) }
                return port
            }
        } catch {
            throw AudioDriverError("cannot make the channels \(names.joined(separator: ", ")) on server '\(client.serverName)': \(error)")
        }
        ports.withLock {
            switch (kind, direction) {
            case (.midi, .input): $0.midiInputs += made
            case (.midi, .output): $0.midiOutputs += made
            case (_, .input): $0.inputs += made
            case (_, .output): $0.outputs += made
            }
        }
        return made.map(\.name)
    }

    public func markChannel(_ name: String, as kind: ChannelKind) throws(AudioDriverError) {
        guard kind != .midi else { throw AudioDriverError("\(name) is an audio port; a MIDI port cannot be made of it") }
        do throws(JackError) {
            try client.setSignalType(kind == .controlVoltage ? "CV" : nil, ofPort: name)
        } catch {
            throw AudioDriverError("cannot mark \(name) as \(kind == .controlVoltage ? "control voltage" : "audio") on server '\(client.serverName)': \(error)")
        }
    }

    public func start<Processor: RealtimeProcessor>(processor: Processor) throws(AudioDriverError) {
        let (inputs, outputs, midiInputs, midiOutputs) = ports.withLock { ($0.inputs, $0.outputs, $0.midiInputs, $0.midiOutputs) }
        do {
            try client.activate(processor: processor, inputs: inputs, outputs: outputs, midiInputs: midiInputs, midiOutputs: midiOutputs)
        } catch {
            throw AudioDriverError("\(error)")
        }
    }

    public func stop() { try? client.deactivate() }
    public func close() { client.close() }
    public var hasShutDown: Bool { client.notifications.hasShutDown.load(ordering: .relaxed) }
    public var xrunCount: Int { client.notifications.xrunCount.load(ordering: .relaxed) }
    public var isClockedByCaller: Bool { false }

    public var isFreewheeling: Bool { client.notifications.isFreewheeling.load(ordering: .relaxed) }
    public func onFreewheelChange(_ handler: @escaping @Sendable (Bool) -> Void) {
        let first = freewheelHandlers.withLock { handlers in
            handlers.append(handler)
            return handlers.count == 1
        }
        // The client has one freewheel handler: the driver's, which calls every one added here.
        if first {
            client.notifications.onFreewheelChange { [weak self] freewheeling in
                for handler in self?.freewheelHandlers.withLock({ $0 }) ?? [] { handler(freewheeling) }
            }
        }
    }
    public func channelLatencies(direction: AudioChannelDirection) -> [ClosedRange<Int>] {
        (direction == .input ? inputPorts : outputPorts).map(\.latency)
    }
    /// Stored where the client's latency callback reads it, then JACK recomputes every port's.
    public func publishProcessingLatency(_ frames: Int) {
        client.notifications.processingLatency.store(frames, ordering: .relaxed)
        client.recomputeLatencies()
    }
    public var processingLatency: Int { client.notifications.processingLatency.load(ordering: .relaxed) }
    /// JACK runs its own cycles: no run ends for a caller.
    public func onRunEnd(_ handler: @escaping @Sendable () -> Void) {}
    /// JACK's next cycle comes by itself.
    public func settle() {}

    // MARK: AudioRouting

    public var serverName: String { client.serverName }

    public func audioPortNames(direction: AudioChannelDirection) -> [String] {
        client.portNames(direction: direction == .input ? .input : .output, audioOnly: true)
    }

    public func connections(of port: String) -> [String] {
        guard let handle = jack_port_by_name(client.rawValue, port) else { return [] }
        return JackPort(rawValue: handle, direction: .input).connections
    }

    @discardableResult
    public func connect(_ source: String, to destination: String) throws(AudioDriverError) -> Bool {
        do {
            return try client.connect(source, to: destination)
        } catch {
            throw AudioDriverError("\(error)")
        }
    }

    // MARK: AudioTransport

    public var transportState: TransportState { client.transport }
    public func startTransport() { client.startTransport() }
    public func stopTransport() { client.stopTransport() }
    public func locateTransport(to frame: UInt32) throws(AudioDriverError) {
        do {
            try client.locateTransport(to: frame)
        } catch {
            throw AudioDriverError("\(error)")
        }
    }
}
