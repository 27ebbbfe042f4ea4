import AQCore
import AQGraph
import AQMedia

/// A saved plugin graph (a ``GraphDocument`` file) as a processing stage: what
/// `aqjack convert IN OUT --graph FILE` runs.
///
/// The graph is loaded into a ``LiveGraph`` on its own ``OfflineDriver``, so the stage runs the
/// same runner, plugins, delay compensation and bypass delay lines as `aqjack host --graph FILE`
/// on JACK, in cycles of ``cycleFrames``; the driver's clock starts at frame 0 with the stream.
/// Its latency is the graph's, as the host publishes it to JACK: ``CompensatedStages`` drops that
/// many frames at the start and brings the tail out at the end, so the stage's output frame `n`
/// is the live host's output ``latencyFrames`` frames after it was given input frame `n`.
///
/// Threads: one at a time, never a real-time one (the driver's cycles run on the caller's thread).
public final class GraphStage: AudioProcessingStage {
    public let graph: LiveGraph
    public let channelCount: Int
    public let latencyFrames: Int
    /// The frames of one cycle of the graph's driver.
    public let cycleFrames: Int
    private let driver: OfflineDriver

    /// Loads the graph file at `path` for a stream of `channelCount` channels at `sampleRate` Hz.
    /// - Throws: the file's refusals as ``LiveGraph/load(from:)`` gives them; invalid for a graph
    ///   whose inputs or outputs are not `channelCount` (naming both).
    public init(world: LV2World, path: String, channelCount: Int, sampleRate: Double, cycleFrames: Int = 1024) throws(GraphError) {
        let document = try GraphDocument(contentsOf: path)
        guard document.inputs == channelCount, document.outputs == channelCount else {
            throw GraphError(.invalid, "'\(path)' is a graph of \(document.inputs) input\(document.inputs == 1 ? "" : "s") and \(document.outputs) output\(document.outputs == 1 ? "" : "s"); "
                             + "the stream has \(channelCount) channel\(channelCount == 1 ? "" : "s"): expected a graph with as many inputs and outputs as the stream's channels (convert's -c sets them)")
        }
        driver = OfflineDriver(name: "graph", sampleRate: Int(sampleRate.rounded()), bufferSize: cycleFrames)
        do {
            graph = try LiveGraph(world: world, driver: driver, inputs: channelCount, outputs: channelCount)
            try graph.load(from: path)
            try graph.start()
        } catch {
            driver.close()
            throw error
        }
        self.channelCount = channelCount
        self.cycleFrames = cycleFrames
        latencyFrames = graph.latency
    }

    deinit {
        graph.stop()
        driver.close()
    }

    public func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int) {
        let start = driver.currentFrame
        // Each cycle reads its own frames before writing them back, and never a later cycle's.
        driver.run(frames: frameCount, input: { channel, first, samples in
            let offset = Int(first - start)
            for index in samples.indices { samples[index] = frames[(offset + index) * channelCount + channel] }
        }, output: { channel, first, samples in
            let offset = Int(first - start)
            for index in samples.indices { frames[(offset + index) * channelCount + channel] = samples[index] }
        })
    }
}
