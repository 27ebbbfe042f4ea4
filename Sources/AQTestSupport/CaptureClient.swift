import AQCore
import AQJack

/// A JACK client with `in_1 ... in_N` ports feeding a ``CaptureProcessor``: the recording path
/// of the real-time core, without the queue on top.
public final class CaptureClient {
    public let client: JackClient
    public let ports: [JackPort]
    public let processor: CaptureProcessor
    public let reader: CaptureReader

    /// Opens the client, registers `channelCount` inputs and allocates rings of
    /// `capacityFrames` frames. Does not activate (so a test can install hooks first).
    /// `physical` marks the ports as hardware (`playback_1 ...`): a stand-in sound card that
    /// players connect to by default.
    public init(name: String, channelCount: Int, capacityFrames: Int, server: String? = nil, physical: Bool = false) throws(JackError) {
        let client = try JackClient(name: name, server: server, exactName: true)
        self.client = client
        ports = try (1 ... max(channelCount, 1)).map { (index) throws(JackError) in
            try client.registerPort(physical ? "playback_\(index)" : "in_\(index)", direction: .input, isPhysical: physical)
        }
        (processor, reader) = CaptureProcessor.make(channelCount: channelCount, capacityFrames: capacityFrames)
    }

    public func activate() throws(JackError) {
        try client.activate(processor: processor, inputs: ports)
    }

    /// Connects `sources[i]` to `in_(i+1)`.
    public func connect(from sources: [String]) throws(JackError) {
        for (source, port) in zip(sources, ports) { try client.connect(source, to: port.name) }
    }

    deinit { client.close() }
}

/// A ``GeneratorClient`` patched into a ``CaptureClient`` of the same channel count, both active:
/// the smallest graph that moves known audio through the capture path.
public struct GeneratorCapturePair {
    public let generator: GeneratorClient
    public let capture: CaptureClient

    /// Opens both clients (named `aqtest-ROLE-gen-…` and `aqtest-ROLE-cap-…`), activates them
    /// and connects `out_N` to `in_N`.
    public init(role: String, channelCount: Int, capacityFrames: Int) throws(JackError) {
        generator = try GeneratorClient(name: TestServer.uniqueClientName(role + "-gen"), channelCount: channelCount)
        capture = try CaptureClient(name: TestServer.uniqueClientName(role + "-cap"), channelCount: channelCount,
                                    capacityFrames: capacityFrames)
        try capture.activate()
        try capture.connect(from: generator.portNames)
    }
}
