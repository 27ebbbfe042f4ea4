import AQCore
import AQJack
import Foundation

/// A JACK client whose `out_1 ... out_N` ports play ``TestSignal``: every sample encodes its
/// channel and absolute JACK frame, so whatever records it can be checked bit for bit.
public final class GeneratorClient {
    public let client: JackClient
    public let ports: [JackPort]
    public let processor: SignalGeneratorProcessor

    /// Opens the client on the default (or given) server, registers `channelCount` outputs and
    /// activates. `threadInit`, if given, runs on each thread JACK creates for the client (the
    /// process thread among them) before its first use.
    public init(name: String, channelCount: Int, server: String? = nil, integerBits: Int = 0, wavePeriod: [Float]? = nil,
                threadInit: (@convention(c) (UnsafeMutableRawPointer?) -> Void)? = nil) throws(JackError) {
        processor = wavePeriod.map { SignalGeneratorProcessor(period: $0) } ?? SignalGeneratorProcessor(integerBits: integerBits)
        precondition(channelCount <= TestSignal.maximumChannelCount, "the test signal tells apart at most \(TestSignal.maximumChannelCount) channels")
        client = try JackClient(name: name, server: server, exactName: true)
        ports = try client.registerPorts(prefix: "out_", count: channelCount, direction: .output)
        if let threadInit { try client.setThreadInitCallback(threadInit) }
        try client.activate(processor: processor, outputs: ports)
    }

    /// Full names of the output ports, in channel order.
    public var portNames: [String] { ports.map(\.name) }

    deinit { client.close() }
}

extension GeneratorClient {
    /// One period of a sine of `frequency` Hz and `amplitude` at `sampleRate`; the rate must be a
    /// whole multiple of the frequency (1000 Hz at 48 kHz: 48 samples).
    public static func sinePeriod(frequency: Int, amplitude: Double, sampleRate: Int) -> [Float] {
        precondition(sampleRate % frequency == 0, "the sine's period must be a whole number of frames")
        let count = sampleRate / frequency
        return (0 ..< count).map { Float(amplitude * sin(2 * Double.pi * Double($0) / Double(count))) }
    }
}
