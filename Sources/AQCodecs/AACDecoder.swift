import AQMedia
import CFFmpeg

/// AAC decoder over FFmpeg's native decoder: raw packets in (no ADTS header), interleaved
/// Float frames out. It outputs every decoded frame, including the encoder's priming: trim with
/// the file's packet table (`PacketTableInfo`), as Apple's decoder also leaves it to the caller.
/// Not thread-safe: one thread at a time.
public final class AACDecoder {
    public let config: AudioSpecificConfig
    /// What the decoder puts out (two for a parametric-stereo config of a mono core).
    public var channelCount: Int { config.outputChannelCount }
    /// What the decoder puts out, Hz: the SBR rate of an HE-AAC config, else the core's.
    public var sampleRate: Int { config.outputSampleRate }
    private let session: LibavDecoderSession

    /// - Parameter expectedChannelCount: the channel count the caller reads the output as (the
    ///   stream description's `mChannelsPerFrame`); a config that disagrees is refused, since
    ///   the decoder's frames would be read with the wrong stride (found by fuzzing: a CAF whose
    ///   'desc' said more channels than its cookie overran the decoded buffer).
    /// - Throws: 'fmt?' when the config is not one the decoder accepts, or disagrees.
    public init(config: AudioSpecificConfig, expectedChannelCount: Int? = nil) throws(AudioConverterError) {
        guard config.channelCount > 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                   "AAC channel configuration \(config.channelConfiguration): expected 1 ... 7")
        }
        if let expectedChannelCount, expectedChannelCount != config.outputChannelCount {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                   "the AAC magic cookie describes \(config.outputChannelCount) channels but the stream description says \(expectedChannelCount)")
        }
        self.config = config
        session = try LibavDecoderSession(name: config.signalsSBR ? "HE-AAC" : "AAC", codecID: AV_CODEC_ID_AAC, extradata: config.bytes,
                                          sampleRate: config.outputSampleRate, channelCount: config.outputChannelCount)
    }

    /// Decodes one raw packet; hands the interleaved frames it yields to `deliver` (pointer,
    /// frame count), valid only during the call.
    ///
    /// - Throws: 'fmt?' with FFmpeg's message for a packet that does not decode.
    public func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioConverterError) {
        try session.decode(bytes, deliver: deliver)
    }

    /// Drops the decoder's state (after a seek or discontinuity).
    public func reset() { session.reset() }
}
