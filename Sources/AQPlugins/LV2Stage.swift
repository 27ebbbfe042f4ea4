import AQCore
import AQMedia

/// A plugin (LV2, or LADSPA: any ``PluginInstance``) as a processing stage (``AudioProcessingStage``) of a stream of `channelCount`
/// channels: a plugin with as many audio inputs and outputs as the stream has channels runs
/// once; a mono plugin (one in, one out) runs once a channel, every copy with the same settings
/// (as Ardour and Carla host mono plugins on wider tracks).
///
/// Runs on the thread the stream processes on (a queue's, or the converting caller's), in
/// blocks of at most the instances' ``LV2PluginInstance/maximumBlock`` frames. Its latency is
/// the plugin's, read from a first run on silence at creation (a plugin reports it from its
/// latency port only once it has run), which leaves the plugin as a fresh one fed silence.
///
/// A plugin that requires fixed (or power-of-two) block lengths gets only whole blocks of its
/// ``LV2PluginInstance/fixedBlock`` frames, whatever the stream hands over: its input is
/// gathered in a block's worth of frames and its output handed out a block later, so the
/// stage's latency is the plugin's plus one block (compensated, as any latency, by the queues
/// and `convert`).
public final class LV2Stage: AudioProcessingStage {
    public let instances: [any PluginInstance]
    public let channelCount: Int
    public let latencyFrames: Int
    private let inputPorts: [Int]
    private let outputPorts: [Int]
    /// Fixed blocks: frames gathered for the next run and frames of the last run being handed
    /// out (`block` interleaved frames each), and how far into both the stream is.
    private let block: Int?
    private var gathering: UnsafeMutablePointer<Float>
    private var handing: UnsafeMutablePointer<Float>
    private var blockPosition = 0

    /// A control value or a preset, applied in order to every instance before the first run.
    public enum Setting: Sendable {
        case control(symbol: String, value: Float)
        case preset(String)
    }

    /// - Throws: ``PluginError``: usage for a plugin whose audio ports do not fit the stream
    ///   (say which fit), an unknown control symbol, a value out of range or an unknown preset;
    ///   runtime when the plugin cannot be hosted.
    public init(world: LV2World, uri: String, settings: [Setting], channelCount: Int, sampleRate: Double,
                maximumBlock: Int = 4096) throws(PluginError) {
        let description = try world.describe(uri)
        let ins = description.audioInputs.count, outs = description.audioOutputs.count
        let copies: Int
        if ins == channelCount && outs == channelCount {
            copies = 1
        } else if ins == 1 && outs == 1 {
            copies = channelCount
        } else {
            throw PluginError(.usage, "the \(description.format == .ladspa ? "LADSPA" : "LV2") plugin '\(description.name)' has \(ins) audio input\(ins == 1 ? "" : "s") and \(outs) output\(outs == 1 ? "" : "s"); "
                              + "the stream has \(channelCount) channel\(channelCount == 1 ? "" : "s"): expected a plugin with \(channelCount) audio inputs and outputs, or a mono one (run once a channel)")
        }
        var instances: [any PluginInstance] = []
        for _ in 0 ..< copies {
            let instance = try PluginFormat.instantiate(world: world, identifier: uri, sampleRate: sampleRate, maximumBlock: maximumBlock)
            try instance.apply(settings)
            instances.append(instance)
        }
        self.instances = instances
        self.channelCount = channelCount
        inputPorts = description.audioInputs.map(\.index)
        outputPorts = description.audioOutputs.map(\.index)
        for instance in instances { instance.run(frames: instance.primingFrames) }
        block = instances.first?.fixedBlock
        let blockSamples = (block ?? 0) * channelCount
        gathering = .allocate(capacity: max(1, blockSamples))
        gathering.initialize(repeating: 0, count: max(1, blockSamples))
        handing = .allocate(capacity: max(1, blockSamples))
        handing.initialize(repeating: 0, count: max(1, blockSamples))
        latencyFrames = (instances.first?.latencyFrames ?? 0) + (block ?? 0)
    }

    deinit {
        gathering.deallocate()
        handing.deallocate()
    }

    /// Resets every copy (LV2 deactivate and activate) and primes it again, as at creation.
    public func reset() {
        for instance in instances {
            instance.reset()
            instance.run(frames: instance.primingFrames)
        }
        if let block {
            gathering.update(repeating: 0, count: block * channelCount)
            handing.update(repeating: 0, count: block * channelCount)
            blockPosition = 0
        }
    }

    public func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int) {
        precondition(channelCount == self.channelCount, "an LV2 stage made for \(self.channelCount) channels got \(channelCount)")
        guard let block else {
            run(frames, frameCount: frameCount, inBlocksOf: instances[0].maximumBlock)
            return
        }
        var done = 0
        while done < frameCount {
            // Hand out the last block's output as the new input takes its place, frame for frame.
            let count = min(block - blockPosition, frameCount - done)
            let stream = frames + done * channelCount
            let offset = blockPosition * channelCount
            for sample in 0 ..< count * channelCount {
                gathering[offset + sample] = stream[sample]
                stream[sample] = handing[offset + sample]
            }
            blockPosition += count
            done += count
            if blockPosition == block {
                run(gathering, frameCount: block, inBlocksOf: block)
                swap(&gathering, &handing)
                blockPosition = 0
            }
        }
    }

    /// Runs every copy over `frameCount` interleaved frames in place, `block` frames a run.
    private func run(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, inBlocksOf block: Int) {
        var done = 0
        while done < frameCount {
            let count = min(block, frameCount - done)
            let base = frames + done * channelCount
            for (copy, instance) in instances.enumerated() {
                // Channel c of the stream is input port c of a wide plugin, or the one input of copy c.
                for (slot, port) in inputPorts.enumerated() {
                    let channel = instances.count == 1 ? slot : copy
                    let buffer = instance.samples(port: port)!
                    SampleTranspose.copyChannel(channel, of: base, frameCount: count, channelCount: channelCount, into: buffer)
                }
                instance.run(frames: count)
                for (slot, port) in outputPorts.enumerated() {
                    let channel = instances.count == 1 ? slot : copy
                    let buffer = instance.samples(port: port)!
                    SampleTranspose.setChannel(channel, of: base, frameCount: count, channelCount: channelCount, from: buffer)
                }
            }
            done += count
        }
    }
}
