import AQCore
import Foundation

/// An LV2 plugin live on a driver (`aqjack host` on JACK, jalv's job for headless use; the
/// offline driver renders the same): one channel per plugin audio and CV port (named by the port's
/// symbol; a CV one marked as control voltage), a MIDI input for a plugin with a MIDI event
/// input and a MIDI output per MIDI event output, running the plugin in the
/// process cycle (``PluginHostProcessor``: real-time safe, control changes through a ring), and
/// publishing the plugin's latency (on JACK every client downstream sees it on the outputs).
///
/// Threads: made, set and read on one thread (the command's); the plugin runs on the driver's
/// process thread. A plugin that does not declare `lv2:hardRTCapable` runs there too, as jalv
/// and Ardour run it.
public final class LV2LiveHost {
    public let driver: any AudioDriver
    public let instance: LV2PluginInstance
    public let processor: PluginHostProcessor
    private let controls: PluginHostControls
    /// The full names of the host's channels (JACK ports), in the plugin's port order.
    public let audioInputs: [String]
    public let audioOutputs: [String]
    /// Control-voltage channels (on JACK, audio ports with signal-type "CV"), after the audio ones.
    public let cvInputs: [String]
    public let cvOutputs: [String]
    public let midiInputs: [String]
    public let midiOutputs: [String]
    /// The latency the driver has been told, in frames.
    public private(set) var latencyFrames = 0

    /// Instantiates `uri` at the driver's rate, applies `settings`, makes the channels and
    /// primes the plugin once on silence (its latency port reports only after a run).
    /// - Throws: ``PluginError`` (usage or runtime, as ``LV2PluginInstance``); a channel the
    ///   driver refuses is a runtime error naming it.
    public init(world: LV2World, uri: String, settings: [LV2Stage.Setting], driver: any AudioDriver) throws(PluginError) {
        self.driver = driver
        // The driver runs every cycle with the whole period: a plugin that needs fixed blocks gets it.
        let instance = try LV2PluginInstance(world: world, uri: uri, sampleRate: Double(driver.sampleRate),
                                             maximumBlock: max(4096, driver.bufferSize), blockLength: driver.bufferSize, realtime: true)
        try instance.apply(settings)
        self.instance = instance
        let description = instance.description
        do {
            // Audio, then CV: the order of the plugin's signal ports (hostPorts).
            audioInputs = try driver.makeChannels(named: description.audioInputs.map(\.symbol), direction: .input, kind: .audio)
            audioOutputs = try driver.makeChannels(named: description.audioOutputs.map(\.symbol), direction: .output, kind: .audio)
            cvInputs = try driver.makeChannels(named: description.signalInputs.dropFirst(audioInputs.count).map(\.symbol), direction: .input, kind: .controlVoltage)
            cvOutputs = try driver.makeChannels(named: description.signalOutputs.dropFirst(audioOutputs.count).map(\.symbol), direction: .output, kind: .controlVoltage)
            midiInputs = try driver.makeChannels(named: description.midiInputs.prefix(1).map(\.symbol), direction: .input, kind: .midi)
            midiOutputs = try driver.makeChannels(named: description.midiOutputs.map(\.symbol), direction: .output, kind: .midi)
        } catch {
            throw PluginError(.runtime, "cannot make the channels of '\(description.name)': \(error)")
        }
        instance.run(frames: instance.primingFrames)
        (processor, controls) = PluginHostProcessor.make(ports: instance.hostPorts())
        latencyFrames = instance.latencyFrames
        driver.publishProcessingLatency(latencyFrames)
    }

    /// Starts the process cycles and publishes the latency.
    public func activate() throws(AudioDriverError) {
        try driver.start(processor: processor)
        driver.publishProcessingLatency(latencyFrames)
    }

    /// Sets control input `symbol` live: checked against its range here, applied by the process
    /// thread at its next cycle.
    /// - Throws: a usage error for an unknown symbol or a value out of range; a runtime error
    ///   when the queue of changes is full (the process thread has not run).
    public func set(_ symbol: String, to value: Float) throws(PluginError) {
        let port = try instance.checkedControlPort(symbol, value: value)
        guard controls.set(port: port, to: value) else {
            throw PluginError(.runtime, "the change of \(symbol) could not be queued: the process thread has not run for a while")
        }
    }

    /// Re-reads the plugin's latency port (written by the process thread: a 32-bit float store,
    /// read whole) and tells the driver when it changed. Returns whether it did.
    @discardableResult
    public func refreshLatency() -> Bool {
        let now = instance.latencyFrames
        guard now != latencyFrames else { return false }
        latencyFrames = now
        driver.publishProcessingLatency(now)
        return true
    }
}
