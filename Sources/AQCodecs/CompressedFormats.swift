import AQMedia
import CAudioTypes

/// What compressed formats need beyond their IDs (``AudioFormatValues``): AAC's packet bound,
/// completed descriptions as `kAudioFormatProperty_FormatInfo` gives them.
public enum CompressedFormatValues {
    /// The most bytes one AAC packet takes: 6144 bits (768 bytes) per channel, the decoder's
    /// input buffer per channel (ISO/IEC 14496-3). The ES_Descriptor's buffer size and every
    /// buffer that must hold any AAC packet come from here.
    public static func aacMaximumPacketBytes(channels: Int) -> Int { 768 * channels }

    /// Completes an AAC description as `kAudioFormatProperty_FormatInfo` does: 1024 frames per
    /// packet, variable bytes per packet (0), no bytes per frame or bits per channel; the object
    /// type in mFormatFlags defaults to AAC-LC; a zero rate or channel count is left for the
    /// converter to take from its input.
    ///
    /// - Throws: 'fmt?' naming the field that no AAC stream can have.
    public static func completedAAC(_ format: AudioStreamBasicDescription) throws(AudioFileError) -> AudioStreamBasicDescription {
        try checkRate(format.mSampleRate)
        var completed = format
        if completed.mFormatFlags == 0 { completed.mFormatFlags = AudioFormatValues.aacLowComplexity }
        guard completed.mFormatFlags == AudioFormatValues.aacLowComplexity else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "AAC object type \(completed.mFormatFlags) in mFormatFlags: only AAC-LC (kMPEG4Object_AAC_LC = 2) is supported")
        }
        if completed.mFramesPerPacket == 0 { completed.mFramesPerPacket = 1024 }
        guard completed.mFramesPerPacket == 1024 else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "mFramesPerPacket is \(completed.mFramesPerPacket); AAC-LC packets hold 1024 frames")
        }
        guard completed.mChannelsPerFrame == 0 || AudioSpecificConfig.configuration(forChannelCount: Int(completed.mChannelsPerFrame)) != nil else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "mChannelsPerFrame is \(completed.mChannelsPerFrame); AAC carries 1 ... 6 or 8 channels")
        }
        guard completed.mSampleRate == 0 || AudioSpecificConfig.sampleRates.contains(Int(completed.mSampleRate)) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "mSampleRate is \(completed.mSampleRate); AAC rates are " + AudioSpecificConfig.sampleRates.map(String.init).joined(separator: ", "))
        }
        completed.mBytesPerPacket = 0
        completed.mBytesPerFrame = 0
        completed.mBitsPerChannel = 0
        return completed
    }

    /// Refuses a sample rate no stream can have (NaN, infinite, negative, above 1536 kHz) before
    /// anything converts it to an integer.
    ///
    /// - Throws: 'fmt?' naming the rate.
    public static func checkRate(_ rate: Double) throws(AudioFileError) {
        guard rate.isFinite, rate >= 0, rate <= 1_536_000 else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "mSampleRate is \(rate); expected 0 (take it from the other side) or a rate in Hz up to 1536000")
        }
    }

    /// An Apple Lossless description: Apple's format flag for the source depth, `framesPerPacket`
    /// frames per packet, variable bytes per packet.
    public static func alacDescription(sampleRate: Double, channelCount: Int, bitDepth: Int,
                                       framesPerPacket: Int = ALAC.framesPerPacket) -> AudioStreamBasicDescription {
        AudioStreamBasicDescription(mSampleRate: sampleRate, mFormatID: AudioFormatValues.appleLossless, mFormatFlags: ALAC.formatFlag(bitDepth: bitDepth),
                                    mBytesPerPacket: 0, mFramesPerPacket: UInt32(framesPerPacket), mBytesPerFrame: 0,
                                    mChannelsPerFrame: UInt32(channelCount), mBitsPerChannel: 0, mReserved: 0)
    }

    /// Completes an Apple Lossless description to encode: the flags default to
    /// `defaultBitDepth`'s; 4096 frames per packet, variable bytes.
    ///
    /// - Throws: 'fmt?' beginning with `context` unless the source data is 16-bit (flag 1) or
    ///   24-bit (flag 3) and there are 1 ... 8 channels.
    public static func completedALAC(_ format: AudioStreamBasicDescription, defaultBitDepth: Int,
                                     context: String) throws(AudioFileError) -> AudioStreamBasicDescription {
        var completed = format
        if completed.mFormatFlags == 0 { completed.mFormatFlags = ALAC.formatFlag(bitDepth: defaultBitDepth) }
        guard [1, 3].contains(completed.mFormatFlags), (1 ... 8).contains(completed.mChannelsPerFrame) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "\(context): mFormatFlags \(completed.mFormatFlags) (expected 1 = 16-bit or 3 = 24-bit) and mChannelsPerFrame \(completed.mChannelsPerFrame) (expected 1 ... 8)")
        }
        completed.mFramesPerPacket = UInt32(ALAC.framesPerPacket)
        completed.mBytesPerPacket = 0
        completed.mBytesPerFrame = 0
        completed.mBitsPerChannel = 0
        return completed
    }

    /// The description of the AAC stream a config describes: its AAC core ('aac ', the core's
    /// rate and object type), as Apple's DataFormat gives an HE-AAC stream; the richer layers
    /// are in ``PacketDecoders/formatList(_:cookie:)``.
    public static func aacDescription(_ config: AudioSpecificConfig) -> AudioStreamBasicDescription {
        AudioStreamBasicDescription(mSampleRate: Double(config.sampleRate), mFormatID: AudioFormatValues.mpeg4AAC, mFormatFlags: UInt32(config.coreObjectType),
                                    mBytesPerPacket: 0, mFramesPerPacket: 1024, mBytesPerFrame: 0,
                                    mChannelsPerFrame: UInt32(config.channelCount), mBitsPerChannel: 0, mReserved: 0)
    }

    /// A float interleaved linear-PCM description (what the codecs produce).
    public static func floatPCM(sampleRate: Double, channelCount: Int) -> AudioStreamBasicDescription {
        AudioStreamBasicDescription(mSampleRate: sampleRate, mFormatID: AudioFormatValues.linearPCM,
                                    mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                    mBytesPerPacket: UInt32(4 * channelCount), mFramesPerPacket: 1, mBytesPerFrame: UInt32(4 * channelCount),
                                    mChannelsPerFrame: UInt32(channelCount), mBitsPerChannel: 32, mReserved: 0)
    }
}
