import AQCore
import AQJack
import Foundation

/// An LV2 plugin live on the JACK graph (`aqjack host`, jalv's job for headless use): a JACK
/// client with one audio port per plugin audio port (named by the port's symbol) and a MIDI
/// input for a plugin with a MIDI event input, running the plugin in the process callback
/// (``PluginHostProcessor``: real-time safe, control changes through a ring), and reporting the
/// plugin's latency to JACK, so every client downstream sees it on the outputs.
///
/// Threads: made, set and read on one thread (the command's); the plugin runs on JACK's. A
/// plugin that does not declare `lv2:hardRTCapable` runs there too, as jalv and Ardour run it.
public final class LV2LiveHost {
    public let client: JackClient
    public let instance: LV2PluginInstance
    public let processor: PluginHostProcessor
    private let controls: PluginHostControls
    public let audioInputs: [JackPort]
    public let audioOutputs: [JackPort]
    public let midiInputs: [JackPort]
    /// The latency JACK has been told, in frames.
    public private(set) var latencyFrames = 0

    /// Instantiates `uri` at the client's rate, applies `settings`, registers the ports and
    /// primes the plugin once on silence (its latency port reports only after a run).
    /// - Throws: ``PluginError`` (usage or runtime, as ``LV2PluginInstance``); a port the server
    ///   refuses is a runtime error naming it.
    public init(world: LV2World, uri: String, settings: [LV2Stage.Setting], client: JackClient) throws(PluginError) {
        self.client = client
        // JACK runs every cycle with the whole period: a plugin that needs fixed blocks gets it.
        let instance = try LV2PluginInstance(world: world, uri: uri, sampleRate: Double(client.sampleRate),
                                             maximumBlock: max(4096, client.bufferSize), blockLength: client.bufferSize, realtime: true)
        try instance.apply(settings)
        self.instance = instance
        let description = instance.description
        do {
            audioInputs = try description.audioInputs.map { (port) throws(JackError) in try client.registerPort(port.symbol, direction: .input) }
            audioOutputs = try description.audioOutputs.map { (port) throws(JackError) in try client.registerPort(port.symbol, direction: .output) }
            midiInputs = try description.midiInputs.prefix(1).map { (port) throws(JackError) in try client.registerPort(port.symbol, direction: .input, isMIDI: true) }
        } catch {
            throw PluginError(.runtime, "cannot register the ports of '\(description.name)' on server '\(client.serverName)': \(error)")
        }
        instance.run(frames: instance.primingFrames)
        (processor, controls) = PluginHostProcessor.make(ports: instance.hostPorts())
        latencyFrames = instance.latencyFrames
        client.notifications.processingLatency.store(latencyFrames, ordering: .relaxed)
    }

    /// Starts the process callbacks and publishes the latency.
    public func activate() throws(JackError) {
        try client.activate(processor: processor, inputs: audioInputs, outputs: audioOutputs, midiInputs: midiInputs)
        client.recomputeLatencies()
    }

    /// Sets control input `symbol` live: checked against its range here, applied by the process
    /// thread at its next cycle.
    /// - Throws: a usage error for an unknown symbol or a value out of range; a runtime error
    ///   when the queue of changes is full (the process thread has not run).
    public func set(_ symbol: String, to value: Float) throws(PluginError) {
        let port = try instance.checkedControlPort(symbol, value: value)
        guard controls.set(port: port, to: value) else {
            throw PluginError(.runtime, "the change of \(symbol) could not be queued: the JACK process thread has not run for a while")
        }
    }

    /// Re-reads the plugin's latency port (written by the process thread: a 32-bit float store,
    /// read whole) and tells JACK when it changed. Returns whether it did.
    @discardableResult
    public func refreshLatency() -> Bool {
        let now = instance.latencyFrames
        guard now != latencyFrames else { return false }
        latencyFrames = now
        client.notifications.processingLatency.store(now, ordering: .relaxed)
        client.recomputeLatencies()
        return true
    }
}
