import AQCore
import AQMedia
import CAudioTypes

/// Converts between two stream descriptions: linear PCM of any depth, endianness and int/float
/// to any other (with sample-rate conversion through libsamplerate and channel mapping), PCM to
/// AAC-LC or Apple Lossless (encode) and AAC-LC or Apple Lossless to PCM (decode), the codecs
/// through libavcodec. The Swift-native engine behind Apple's
/// `AudioConverterRef`.
///
/// Push–pull: ``push(frames:frameCount:)`` (PCM input) or ``push(packet:)`` (AAC input) take
/// input and convert it at once (so the caller's memory need not outlive the call);
/// ``pullFrames(into:maximumFrames:)`` (PCM output) or ``pullPacket()`` (AAC output) hand out
/// what is ready; ``finish()`` says the input has ended and drains the resampler and the encoder.
/// Not thread-safe: one thread at a time.
///
/// Channel mapping: ``channelMap`` when set (Apple's `kAudioConverterChannelMap`); otherwise,
/// when the counts differ, mono is copied to every output channel, else output channel c takes
/// input channel c and missing channels are silent.
public final class FormatConverter {
    public let source: AudioStreamBasicDescription
    public let destination: AudioStreamBasicDescription

    /// Bits per second for the AAC encoder (`kAudioConverterEncodeBitRate`); default chosen from
    /// the channel count and rate like Apple's (64 kbit/s per channel at 44.1/48 kHz).
    public var bitRate: Int
    /// Apple's 0 ... 0x7F codec quality (`kAudioConverterCodecQuality`).
    public var codecQuality: Int = 0x60
    /// Apple's 0 ... 0x7F sample-rate converter quality (`kAudioConverterSampleRateConverterQuality`).
    public var sampleRateConverterQuality: UInt32 = 0x60
    /// The library that converts rates (libsoxr unless libsamplerate is asked for). Set before
    /// the first frames.
    public var resamplerEngine = Resampler.Engine.soxr
    /// For each output channel, the input channel it takes (0-based), or -1 for silence
    /// (`kAudioConverterChannelMap`); nil for the default mapping.
    public private(set) var channelMap: [Int]?

    /// Sets ``channelMap``.
    ///
    /// - Throws: `kAudio_ParamError` (-50) unless there is one entry per output channel, each -1
    ///   or an input channel.
    public func setChannelMap(_ map: [Int]?) throws(AudioConverterError) {
        if let map {
            guard map.count == destinationChannels, map.allSatisfy({ $0 >= -1 && $0 < sourceChannels }) else {
                throw AudioConverterError(AudioConverterError.parameterCode,
                                       "channel map \(map): expected \(destinationChannels) entries, each -1 or an input channel 0 ... \(sourceChannels - 1)")
            }
        }
        channelMap = map
    }

    /// The decoder's magic cookie (`kAudioConverterDecompressionMagicCookie`): AAC's
    /// ES_Descriptor or config, ALAC's ALACSpecificConfig, FLAC's STREAMINFO, Opus's OpusHead.
    public private(set) var decoderCookie: [UInt8] = []

    /// Takes the decoder's magic cookie before converting, checked by opening the decoder it
    /// makes (``PacketDecoders/decoder(for:cookie:)``).
    ///
    /// - Throws: 'fmt?' naming what is wrong with the cookie.
    public func setDecoderCookie(_ cookie: [UInt8]) throws(AudioConverterError) {
        try PacketDecoders.checkCookie(cookie, for: source)
        decoderCookie = cookie
        decoder = nil
    }

    private let sourceLayout: LinearPCMLayout?
    private let destinationLayout: LinearPCMLayout?
    private var encoder: (any PacketEncoding)?
    private var decoder: (any PacketDecoding)?
    private var resampler: Resampler?
    private var resamplerReady = false
    /// Float frames at the destination rate and channel count, waiting to be pulled (PCM out).
    private var pending: [Float] = []
    private var pendingRead = 0
    /// Encoded packets waiting to be pulled (AAC out).
    private var packets: [EncodedPacket] = []
    private var packetRead = 0
    private var scratch: [Float] = []
    public private(set) var isFinished = false

    public var isEncoding: Bool { destination.mFormatID != AudioFormatValues.linearPCM }
    public var isDecoding: Bool { source.mFormatID != AudioFormatValues.linearPCM }
    /// Whether the compressed side is Apple Lossless (else AAC).
    var isLossless: Bool { (isEncoding ? destination : source).mFormatID == AudioFormatValues.appleLossless }
    var sourceChannels: Int { Int(source.mChannelsPerFrame) }
    var destinationChannels: Int { Int(destination.mChannelsPerFrame) }

    /// - Throws: 'fmt?' naming the unsupported side: formats other than linear PCM, AAC-LC and
    ///   Apple Lossless, compressed to compressed, or inconsistent PCM descriptions.
    public init(from source: AudioStreamBasicDescription, to destination: AudioStreamBasicDescription) throws(AudioConverterError) {
        let aac = AudioFormatValues.mpeg4AAC
        let alac = AudioFormatValues.appleLossless
        let pcm = AudioFormatValues.linearPCM
        guard source.mFormatID == pcm || PacketDecoders.decodes(source.mFormatID) else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                      "the converter's input format is \(fourCharacterCode(source.mFormatID)); expected 'lpcm' or one of "
                                      + PacketDecoders.formatIDs.map(fourCharacterCode).joined(separator: ", "))
        }
        guard [aac, alac, pcm].contains(destination.mFormatID) else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                      "the converter's output format is \(fourCharacterCode(destination.mFormatID)); expected 'lpcm', 'aac ' or 'alac' (the others are decoded here, not encoded)")
        }
        guard source.mFormatID == pcm || destination.mFormatID == pcm else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "compressed to compressed: one side of a converter must be linear PCM")
        }
        try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try CompressedFormatValues.checkRate(source.mSampleRate) }
        try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try CompressedFormatValues.checkRate(destination.mSampleRate) }
        var source = source
        var destination = destination
        if source.mFormatID != pcm {
            // Decoded: what the description leaves at 0 comes from the other side.
            if source.mSampleRate == 0 { source.mSampleRate = destination.mSampleRate }
            if source.mChannelsPerFrame == 0 { source.mChannelsPerFrame = destination.mChannelsPerFrame }
            source = PacketDecoders.completed(source)
            if source.mSampleRate > 0 { try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try PacketDecoders.check(source) } }
            sourceLayout = nil
        } else {
            sourceLayout = try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try LinearPCMLayout(validating: source) }
        }
        if destination.mFormatID == alac {
            if destination.mSampleRate == 0 { destination.mSampleRate = source.mSampleRate }
            if destination.mChannelsPerFrame == 0 { destination.mChannelsPerFrame = source.mChannelsPerFrame }
            // Without flags, the source's depth: 24 for 24/32-bit and float input, else 16.
            destination = try inDomain(AudioConverterError.self) { () throws(AudioFileError) in
                try CompressedFormatValues.completedALAC(destination, defaultBitDepth: source.mBitsPerChannel >= 24 ? 24 : 16, context: "Apple Lossless")
            }
            destinationLayout = nil
        } else if destination.mFormatID == aac {
            destination = try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try CompressedFormatValues.completedAAC(destination) }
            if destination.mSampleRate == 0 { destination.mSampleRate = source.mSampleRate }
            if destination.mChannelsPerFrame == 0 { destination.mChannelsPerFrame = source.mChannelsPerFrame }
            destination = try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try CompressedFormatValues.completedAAC(destination) }
            destinationLayout = nil
        } else {
            destinationLayout = try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try LinearPCMLayout(validating: destination) }
        }
        guard source.mSampleRate > 0, destination.mSampleRate > 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "the converter needs a sample rate on at least one side; both are 0")
        }
        self.source = source
        self.destination = destination
        let channels = Int(destination.mChannelsPerFrame)
        bitRate = Self.defaultBitRate(channelCount: channels, sampleRate: destination.mSampleRate)
    }

    /// 64 kbit/s per channel at 44.1/48 kHz, scaled down with lower rates, within the encoder's
    /// 8 ... 512 kbit/s: so the README's "64 kbit/s per channel" holds up to 8 channels (512
    /// kbit/s; it was capped at 320 kbit/s, 40 per channel at 8 channels: issue 9, item 15).
    public static func defaultBitRate(channelCount: Int, sampleRate: Double) -> Int {
        let perChannel = 64_000.0 * min(1, sampleRate / 44100)
        return max(8000, min(AACEncoder.bitRates.upperBound, Int((perChannel * Double(channelCount)).rounded())))
    }

    /// The AAC encoder, opened with the bit rate and quality set so far (Apple's converter also
    /// fixes them at the first conversion).
    ///
    /// - Throws: 'fmt?' when the output is not AAC.
    public func openEncoder() throws(AudioConverterError) -> AACEncoder {
        guard let aac = try openPacketEncoder() as? AACEncoder else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "the converter's output is not AAC")
        }
        return aac
    }

    /// The encoder of the output format (AAC or ALAC), opened once.
    public func openPacketEncoder() throws(AudioConverterError) -> any PacketEncoding {
        if let encoder { return encoder }
        let opened: any PacketEncoding = isLossless
            ? try ALACEncoder(sampleRate: Int(destination.mSampleRate), channelCount: destinationChannels,
                              bitDepth: ALAC.bitDepth(formatFlag: destination.mFormatFlags))
            : try AACEncoder(sampleRate: Int(destination.mSampleRate), channelCount: destinationChannels, bitRate: bitRate, quality: codecQuality)
        encoder = opened
        return opened
    }

    /// The AudioSpecificConfig of the output (AAC encoding), available before any input.
    public var encoderConfig: AudioSpecificConfig? { try? openEncoder().audioSpecificConfig }

    /// The output's magic cookie in Apple's format: AAC's ES_Descriptor, ALAC's
    /// ALACSpecificConfig; nil when not encoding.
    public var compressionCookie: [UInt8]? {
        guard isEncoding, let encoder = try? openPacketEncoder() else { return nil }
        if let alac = encoder as? ALACEncoder { return alac.magicCookie }
        guard let aac = encoder as? AACEncoder else { return nil }
        return ElementaryStreamDescriptor(audioSpecificConfig: aac.audioSpecificConfig, averageBitRate: UInt32(bitRate),
                                          maximumBitRate: UInt32(bitRate), bufferSize: UInt32(aac.maximumPacketSize)).bytes
    }

    /// Frames of encoder priming and trailing padding (`kAudioConverterPrimeInfo`); the trailing
    /// count is final after ``finish()``. ALAC has neither (its last packet is short).
    public var primeInfo: (leading: Int, trailing: Int) {
        guard isEncoding, !isLossless, let encoder = try? openEncoder() else { return (0, 0) }
        return (encoder.primingFrames, isFinished ? encoder.remainderFrames : 0)
    }

    /// Largest packet the output can have, bytes.
    public var maximumOutputPacketSize: Int {
        guard isEncoding else { return Int(destination.mBytesPerFrame) }
        // ALAC: a packet never exceeds the raw frames plus its header (Apple's bound).
        return isLossless ? ALAC.framesPerPacket * destinationChannels * ALAC.bitDepth(formatFlag: destination.mFormatFlags) / 8 + 64
                          : CompressedFormatValues.aacMaximumPacketBytes(channels: Int(destinationChannels))
    }

    // MARK: Input

    /// Converts `frameCount` PCM frames in the source layout.
    public func push(frames: UnsafeRawPointer, frameCount: Int) throws(AudioConverterError) {
        guard let sourceLayout else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "the converter's input is AAC: push packets, not frames")
        }
        guard frameCount > 0 else { return }
        let channels = sourceChannels
        if scratch.count < frameCount * channels { scratch = [Float](repeating: 0, count: frameCount * channels) }
        scratch.withUnsafeMutableBufferPointer { sourceLayout.decode(from: frames, into: $0.baseAddress!, count: frameCount * channels) }
        try scratch.withUnsafeBufferPointer { (floats) throws(AudioConverterError) in try accept(floats.baseAddress!, frameCount: frameCount) }
    }

    /// Decodes one raw packet of the source format (any of ``PacketDecoders/formatIDs``).
    ///
    /// - Throws: 'fmt?' when the packet does not decode (the converter stays usable).
    public func push(packet: UnsafeRawBufferPointer) throws(AudioConverterError) {
        guard isDecoding else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "the converter's input is linear PCM: push frames, not packets")
        }
        if decoder == nil { decoder = try PacketDecoders.decoder(for: source, cookie: decoderCookie) }
        var decoded: [Float] = []
        var frames = 0
        try decoder!.decode(packet) { pointer, count in
            decoded += UnsafeBufferPointer(start: pointer, count: count * self.sourceChannels)
            frames += count
        }
        try decoded.withUnsafeBufferPointer { (floats) throws(AudioConverterError) in
            if frames > 0 { try accept(floats.baseAddress!, frameCount: frames) }
        }
    }

    /// The input has ended: drains the resampler and the encoder.
    public func finish() throws(AudioConverterError) {
        guard !isFinished else { return }
        if let resampler {
            var flushed: [Float] = []
            resampler.flush { pointer, count in flushed += UnsafeBufferPointer(start: pointer, count: count * self.destinationChannels) }
            try flushed.withUnsafeBufferPointer { (floats) throws(AudioConverterError) in
                try deliver(floats.baseAddress!, frameCount: floats.count / destinationChannels)
            }
        }
        if isEncoding { try openPacketEncoder().finish { packets.append($0) } }
        isFinished = true
    }

    /// Forgets buffered input and output and the codecs' history (`AudioConverterReset`).
    public func reset() {
        pending.removeAll()
        pendingRead = 0
        packets.removeAll()
        packetRead = 0
        resampler?.reset()
        decoder?.reset()
        encoder = nil
        isFinished = false
    }

    /// Float frames at the source rate and channel count: map channels, then resample.
    private func accept(_ input: UnsafePointer<Float>, frameCount: Int) throws(AudioConverterError) {
        guard sourceChannels != destinationChannels || channelMap != nil else {
            try resample(input, frameCount: frameCount)
            return
        }
        let map = channelMap ?? (0 ..< destinationChannels).map { sourceChannels == 1 ? 0 : $0 < sourceChannels ? $0 : -1 }
        var mapped = [Float](repeating: 0, count: frameCount * destinationChannels)
        for frame in 0 ..< frameCount {
            for (channel, from) in map.enumerated() where from >= 0 {
                mapped[frame * destinationChannels + channel] = input[frame * sourceChannels + from]
            }
        }
        try mapped.withUnsafeBufferPointer { (floats) throws(AudioConverterError) in try resample(floats.baseAddress!, frameCount: frameCount) }
    }

    /// Float frames at the source rate, destination channels: resample when the rates differ.
    private func resample(_ input: UnsafePointer<Float>, frameCount: Int) throws(AudioConverterError) {
        if source.mSampleRate == destination.mSampleRate {
            try deliver(input, frameCount: frameCount)
            return
        }
        if resampler == nil {
            resampler = try Resampler(channelCount: destinationChannels, inputRate: source.mSampleRate, outputRate: destination.mSampleRate,
                                      quality: .init(appleQuality: sampleRateConverterQuality), engine: resamplerEngine)
        }
        var converted: [Float] = []
        resampler!.process(input, frameCount: frameCount) { out, count in
            converted += UnsafeBufferPointer(start: out, count: count * self.destinationChannels)
        }
        try converted.withUnsafeBufferPointer { (floats) throws(AudioConverterError) in
            if !floats.isEmpty { try deliver(floats.baseAddress!, frameCount: floats.count / destinationChannels) }
        }
    }

    /// Float frames at the destination rate and channel count: encode or keep for pulling.
    private func deliver(_ input: UnsafePointer<Float>, frameCount: Int) throws(AudioConverterError) {
        guard frameCount > 0 else { return }
        if isEncoding {
            try openPacketEncoder().encode(input, frameCount: frameCount) { packets.append($0) }
        } else {
            if pendingRead > 0 && pendingRead * 2 > pending.count {
                pending.removeFirst(pendingRead)
                pendingRead = 0
            }
            pending += UnsafeBufferPointer(start: input, count: frameCount * destinationChannels)
        }
    }

    // MARK: Output

    /// PCM frames ready to pull.
    public var availableFrames: Int { (pending.count - pendingRead) / max(1, destinationChannels) }
    /// Packets ready to pull.
    public var availablePackets: Int { packets.count - packetRead }

    /// Writes up to `maximumFrames` frames in the destination layout; returns how many.
    public func pullFrames(into output: UnsafeMutableRawPointer, maximumFrames: Int) -> Int {
        guard let destinationLayout else { return 0 }
        let frames = min(maximumFrames, availableFrames)
        let samples = frames * destinationChannels
        pending.withUnsafeBufferPointer { floats in
            destinationLayout.encode(floats.baseAddress! + pendingRead, count: samples, to: output, byteStride: destinationLayout.bytesPerSample)
        }
        pendingRead += samples
        return frames
    }

    /// The next encoded packet, if one is ready.
    public func pullPacket() -> EncodedPacket? {
        guard packetRead < packets.count else { return nil }
        let packet = packets[packetRead]
        packetRead += 1
        if packetRead == packets.count {
            packets.removeAll(keepingCapacity: true)
            packetRead = 0
        }
        return packet
    }

    /// The next packet's size without taking it.
    public var nextPacketSize: Int? { packetRead < packets.count ? packets[packetRead].bytes.count : nil }
}
