import AQCodecs
import AQJack
import AudioQueue
import CAudioTypes

/// What `aqjack record`'s options make on a server: the ports feeding each channel, the file's
/// format and the format the queue delivers. Decided before any file or queue exists.
struct RecordPlan {
    /// The output ports feeding channel 1, 2 ... (fewer than channels: the rest unconnected).
    var sources: [String]
    var channelCount: Int
    /// The file's format (a codec's description for AAC and ALAC).
    var fileFormat: AudioStreamBasicDescription
    /// What the queue delivers: the file's format, or Float frames each file encodes.
    var format: AudioStreamBasicDescription

    /// Why the options cannot record on this server, and the exit status that says so.
    struct Refusal: Error {
        var message: String
        var status: Int32
    }

    init(options: RecordOptions, client: JackClient) throws(Refusal) {
        let outputs = client.portNames(direction: .output, audioOnly: true)
        if options.ports.isEmpty && options.follow {
            // --follow without -p: nothing connected but what the patchbay connects.
            sources = []
        } else if options.ports.isEmpty {
            let physical = client.portNames(direction: .output, physicalOnly: true, audioOnly: true)
            sources = Array(physical.prefix(options.channels ?? min(2, max(physical.count, 1))))
        } else {
            let (selected, unmatched) = PortMatching.select(options.ports, from: outputs)
            if !unmatched.isEmpty && !options.autoConnect {
                throw Refusal(message: "no JACK output port matches \(unmatched.map { "'\($0)'" }.joined(separator: ", ")) on server '\(client.serverName)'; `aqjack --ports --output` lists them",
                              status: ExitStatus.failure)
            }
            sources = selected
        }
        channelCount = options.channels ?? max(sources.count, options.ports.isEmpty || options.autoConnect ? 2 : 1)
        if sources.count > channelCount { sources = Array(sources.prefix(channelCount)) }
        // Another rate than the server's is resampled by the queue (soxr, or --resampler's choice).
        fileFormat = options.format(channelCount: channelCount, sampleRate: options.rate ?? client.sampleRate)
        format = options.encodesPerFile ? CompressedFormatValues.floatPCM(sampleRate: fileFormat.mSampleRate, channelCount: channelCount) : fileFormat
        if options.transport != nil, let rate = options.rate, rate != client.sampleRate {
            throw Refusal(message: "--transport records at the server's rate (\(client.sampleRate) Hz), frame for frame with the transport; drop -r \(rate) and convert the takes",
                          status: ExitStatus.failure)
        }
        // What the format makes of the sizes given: refused before anything is allocated.
        if let problem = options.sizeProblem(format: format) {
            throw Refusal(message: problem, status: ExitStatus.usage)
        }
    }

    /// Bytes a second the files take: the frames' bytes for linear PCM, the bit rate for AAC
    /// (`--bitrate`, else its default); nil where no rate is fixed (Apple Lossless).
    func bytesPerSecond(options: RecordOptions) -> Double? {
        if fileFormat.mBytesPerFrame > 0 { return fileFormat.mSampleRate * Double(fileFormat.mBytesPerFrame) }
        guard options.isAAC else { return nil }
        return Double(options.bitRate ?? FormatConverter.defaultBitRate(channelCount: channelCount, sampleRate: fileFormat.mSampleRate)) / 8
    }

    /// Bytes of one of the queue's buffers: 0.1 s (compressed by the queue: room for 0.1 s of
    /// its largest packets, at least two).
    func bufferBytes(queue: AudioInputQueue, encodedByQueue: Bool) -> Int {
        encodedByQueue ? queue.maximumOutputPacketSize * max(2, Int(format.mSampleRate / 10) / Int(queue.format.mFramesPerPacket) + 1)
            : Int(max(format.mBytesPerFrame, format.mBytesPerFrame * UInt32(format.mSampleRate / 10)))
    }
}
