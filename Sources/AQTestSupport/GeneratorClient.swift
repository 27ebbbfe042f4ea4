import AQCore
import AQJack

/// A JACK client whose `out_1 ... out_N` ports play ``TestSignal``: every sample encodes its
/// channel and absolute JACK frame, so whatever records it can be checked bit for bit.
public final class GeneratorClient {
    public let client: JackClient
    public let ports: [JackPort]
    public let processor: SignalGeneratorProcessor

    /// Opens the client on the default (or given) server, registers `channelCount` outputs and
    /// activates. `threadInit`, if given, runs on each thread JACK creates for the client (the
    /// process thread among them) before its first use.
    public init(name: String, channelCount: Int, server: String? = nil, integerBits: Int = 0,
                threadInit: (@convention(c) (UnsafeMutableRawPointer?) -> Void)? = nil) throws(JackError) {
        processor = SignalGeneratorProcessor(integerBits: integerBits)
        precondition(channelCount <= TestSignal.maximumChannelCount, "the test signal tells apart at most 256 channels")
        client = try JackClient(name: name, server: server, exactName: true)
        ports = try client.registerPorts(prefix: "out_", count: channelCount, direction: .output)
        if let threadInit { try client.setThreadInitCallback(threadInit) }
        try client.activate(processor: processor, outputs: ports)
    }

    /// Full names of the output ports, in channel order.
    public var portNames: [String] { ports.map(\.name) }

    deinit { client.close() }
}
