import AQCore
import AQMedia
import CFFmpeg

/// One encoded packet: its bytes and how many frames of audio it stands for.
public struct EncodedPacket: Equatable, Sendable {
    public var bytes: [UInt8]
    /// Frames (per channel) this packet decodes to: 1024 for AAC-LC.
    public var frameCount: Int
    public init(bytes: [UInt8], frameCount: Int) {
        self.bytes = bytes
        self.frameCount = frameCount
    }
}

/// AAC-LC encoder over FFmpeg's native encoder.
///
/// Takes interleaved Float frames in any amount and gathers them into exactly 1024-frame planar
/// frames (FFmpeg 5.1 pads shorter frames silently, doubling the duration, as measured here); ``finish()``
/// sends the last partial frame and drains the encoder. Not thread-safe: one thread at a time
/// (the queue thread or the caller's).
public final class AACEncoder {
    public static let framesPerPacket = 1024
    /// FFmpeg's AAC encoder delay (its `initial_padding`, measured 1024 in FFmpeg 5.1): what
    /// aqjack's AAC files record as priming when the writer is not told otherwise, as Apple's
    /// AudioFile records its own encoder's.
    public static let defaultPrimingFrames = 1024
    public let sampleRate: Int
    public let channelCount: Int
    /// Bits per second asked of the encoder.
    public let bitRate: Int
    /// The bit rates the encoder takes, in bits per second for all channels.
    public static let bitRates = 8000 ... 512_000
    /// Frames of encoder delay before the first input frame (FFmpeg's `initial_padding`: 1024).
    public let primingFrames: Int
    public let audioSpecificConfig: AudioSpecificConfig
    /// FFmpeg's layout masks for 6 and 8 channels with every channel full-band, 6.0 and
    /// octagonal (coded with a program config element, ``AudioSpecificConfig/programLayout(forChannelCount:)``),
    /// instead of AAC's 5.1/7.1, whose 4th channel is a band-limited LFE (issue 9, item 6).
    /// libavcodec's decoder (aqjack's and ffmpeg's) returns the channels in the order they went
    /// in (measured with a distinct tone per channel: `item06AACFullBandChannels`).
    static func fullBandLayoutMask(channelCount: Int) -> UInt64? {
        switch channelCount {
        case 6: cffmpeg_layout_6point0()
        case 8: cffmpeg_layout_octagonal()
        default: nil
        }
    }

    /// The largest packet AAC allows: 6144 bits per channel (ISO/IEC 14496-3 4.5.3.2).
    public var maximumPacketSize: Int { CompressedFormatValues.aacMaximumPacketBytes(channels: Int(channelCount)) }
    /// Input frames accepted so far.
    public var inputFrameCount: Int64 { session.inputFrameCount }
    /// Packets produced so far.
    public var packetCount: Int64 { session.packetCount }
    /// Frames of padding after the last input frame in the last packet; known once finished.
    public var remainderFrames: Int { Int(packetCount) * Self.framesPerPacket - primingFrames - Int(inputFrameCount) }

    private let session: LibavEncoderSession
    private var finished = false

    /// Opens the encoder.
    ///
    /// - Parameters:
    ///   - quality: Apple's `kAudioConverterQuality_*` (0 ... 0x7F). Below Medium (0x40) selects
    ///     FFmpeg's fast coder, otherwise its default two-loop search.
    /// - Throws: 'fmt?' naming the unsupported rate, channel count or bit rate.
    public init(sampleRate: Int, channelCount: Int, bitRate: Int, quality: Int = 0x60) throws(AudioConverterError) {
        let config = try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try AudioSpecificConfig(objectType: 2, sampleRate: sampleRate, channelCount: channelCount) }
        guard Self.bitRates.contains(bitRate) else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "AAC bit rate \(bitRate) b/s: expected \(Self.bitRates.lowerBound) ... \(Self.bitRates.upperBound)")
        }
        session = try LibavEncoderSession(
            name: "AAC", codecID: AV_CODEC_ID_AAC, frameSize: Self.framesPerPacket, channelCount: channelCount, framesFromDuration: false,
            refusal: "AAC encoder refused \(sampleRate) Hz, \(channelCount) channels, \(bitRate) b/s",
            configure: { context in
                context.pointee.sample_rate = Int32(sampleRate)
                context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP   // the only format FFmpeg's AAC encoder takes
                context.pointee.bit_rate = Int64(bitRate)
                context.pointee.profile = FF_PROFILE_AAC_LOW
                // AAC's channel configurations for 1 ... 5 channels, so the encoder writes a plain
                // AudioSpecificConfig (FFmpeg's default layout for 3 channels is 2.1, which has
                // none); for 6 and 8 the full-band layouts, named by a program config element.
                if channelCount == 3 {
                    _ = aqff_av_channel_layout_from_mask(&context.pointee.ch_layout, cffmpeg_layout_surround())
                } else if let mask = Self.fullBandLayoutMask(channelCount: channelCount) {
                    _ = aqff_av_channel_layout_from_mask(&context.pointee.ch_layout, mask)
                } else {
                    aqff_av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
                }
                if quality < 0x40 { _ = aqff_av_opt_set(context.pointee.priv_data, "aac_coder", "fast", 0) }
            },
            store: { plane, index, value in plane.storeBytes(of: value, toByteOffset: 4 * index, as: Float.self) })
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitRate = bitRate
        primingFrames = Int(session.context?.pointee.initial_padding ?? Int32(Self.defaultPrimingFrames))
        // FFmpeg's extradata is the AudioSpecificConfig (with an SBR sync extension); keep it
        // when it parses, else the two-byte config built from the fields.
        let extradata = session.extradata
        audioSpecificConfig = extradata.count >= 2 ? (try? AudioSpecificConfig(parsing: extradata)) ?? config : config
    }

    /// Encodes `frameCount` interleaved frames; hands each finished packet to `deliver` in order.
    public func encode(_ interleaved: UnsafePointer<Float>, frameCount: Int, deliver: (EncodedPacket) -> Void) throws(AudioConverterError) {
        guard !finished else { throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "AAC encoder already finished") }
        try session.encode(interleaved, frameCount: frameCount, deliver: deliver)
    }

    /// Sends the last partial frame (padded with silence) and drains every packet left;
    /// afterwards ``remainderFrames`` is final.
    public func finish(deliver: (EncodedPacket) -> Void) throws(AudioConverterError) {
        guard !finished else { return }
        try session.finish(deliver: deliver)
        finished = true
    }
}
