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
/// frames (FFmpeg pads shorter frames silently, doubling the duration: NOTES.md §6); ``finish()``
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
    /// Frames of encoder delay before the first input frame (FFmpeg's `initial_padding`: 1024).
    public let primingFrames: Int
    public let audioSpecificConfig: AudioSpecificConfig
    /// The largest packet AAC allows: 6144 bits per channel (ISO/IEC 14496-3 4.5.3.2).
    public var maximumPacketSize: Int { 768 * channelCount }
    /// Input frames accepted so far.
    public private(set) var inputFrameCount: Int64 = 0
    /// Packets produced so far.
    public private(set) var packetCount: Int64 = 0
    /// Frames of padding after the last input frame in the last packet; known once finished.
    public var remainderFrames: Int { Int(packetCount) * Self.framesPerPacket - primingFrames - Int(inputFrameCount) }

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// Frames gathered in `frame` (planar) so far, < 1024.
    private var gathered = 0
    private var finished = false

    /// Opens the encoder.
    ///
    /// - Parameters:
    ///   - quality: Apple's `kAudioConverterQuality_*` (0 ... 0x7F). Below Medium (0x40) selects
    ///     FFmpeg's fast coder, otherwise its default two-loop search.
    /// - Throws: 'fmt?' naming the unsupported rate, channel count or bit rate.
    public init(sampleRate: Int, channelCount: Int, bitRate: Int, quality: Int = 0x60) throws(AudioStatusError) {
        try CodecLibraries.require()
        let config = try AudioSpecificConfig(objectType: 2, sampleRate: sampleRate, channelCount: channelCount)
        guard (8000 ... 512_000).contains(bitRate) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "AAC bit rate \(bitRate) b/s: expected 8000 ... 512000")
        }
        guard let codec = aqff_avcodec_find_encoder(AV_CODEC_ID_AAC), let context = aqff_avcodec_alloc_context3(codec) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "libavcodec has no AAC encoder")
        }
        self.context = context
        context.pointee.sample_rate = Int32(sampleRate)
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP   // the only format FFmpeg's AAC encoder takes
        context.pointee.bit_rate = Int64(bitRate)
        context.pointee.profile = FF_PROFILE_AAC_LOW
        // AAC's channel configurations, so the encoder writes a plain AudioSpecificConfig (no
        // program config element): FFmpeg's default layout for 3 channels is 2.1, which has none.
        if channelCount == 3 {
            _ = aqff_av_channel_layout_from_mask(&context.pointee.ch_layout, cffmpeg_layout_surround())
        } else {
            aqff_av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        }
        if quality < 0x40 { _ = aqff_av_opt_set(context.pointee.priv_data, "aac_coder", "fast", 0) }
        let opened = aqff_avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            var context: UnsafeMutablePointer<AVCodecContext>? = context
            aqff_avcodec_free_context(&context)
            self.context = nil
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
                                   "AAC encoder refused \(sampleRate) Hz, \(channelCount) channels, \(bitRate) b/s: " + CodecLibraries.message(for: opened))
        }
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitRate = bitRate
        primingFrames = Int(context.pointee.initial_padding)
        // FFmpeg's extradata is the AudioSpecificConfig (with an SBR sync extension); keep it
        // when it parses, else the two-byte config built from the fields.
        if let extradata = context.pointee.extradata, context.pointee.extradata_size >= 2,
           let parsed = try? AudioSpecificConfig(parsing: Array(UnsafeBufferPointer(start: extradata, count: Int(context.pointee.extradata_size)))) {
            audioSpecificConfig = parsed
        } else {
            audioSpecificConfig = config
        }
        frame = aqff_av_frame_alloc()
        packet = aqff_av_packet_alloc()
        guard let frame, packet != nil else { throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "out of memory for AAC frames") }
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.nb_samples = Int32(Self.framesPerPacket)
        frame.pointee.sample_rate = Int32(sampleRate)
        frame.pointee.ch_layout = context.pointee.ch_layout
        guard aqff_av_frame_get_buffer(frame, 0) >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "cannot allocate an AAC input frame")
        }
    }

    deinit {
        aqff_av_frame_free(&frame)
        aqff_av_packet_free(&packet)
        aqff_avcodec_free_context(&context)
    }

    /// Encodes `frameCount` interleaved frames; hands each finished packet to `deliver` in order.
    public func encode(_ interleaved: UnsafePointer<Float>, frameCount: Int, deliver: (EncodedPacket) -> Void) throws(AudioStatusError) {
        guard !finished else { throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "AAC encoder already finished") }
        guard let frame else { return }
        var consumed = 0
        while consumed < frameCount {
            if gathered == 0 { _ = aqff_av_frame_make_writable(frame) }
            let take = Swift.min(frameCount - consumed, Self.framesPerPacket - gathered)
            for channel in 0 ..< channelCount {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!).assumingMemoryBound(to: Float.self)
                for index in 0 ..< take {
                    plane[gathered + index] = interleaved[(consumed + index) * channelCount + channel]
                }
            }
            gathered += take
            consumed += take
            if gathered == Self.framesPerPacket {
                try send(frame, frames: Self.framesPerPacket, deliver: deliver)
                gathered = 0
            }
        }
        inputFrameCount += Int64(frameCount)
    }

    /// Sends the last partial frame (padded with silence by the encoder) and drains every
    /// packet left; afterwards ``remainderFrames`` is final.
    public func finish(deliver: (EncodedPacket) -> Void) throws(AudioStatusError) {
        guard !finished, let frame else { return }
        if gathered > 0 {
            for channel in 0 ..< channelCount {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!).assumingMemoryBound(to: Float.self)
                for index in gathered ..< Self.framesPerPacket { plane[index] = 0 }
            }
            try send(frame, frames: gathered, deliver: deliver)
            gathered = 0
        }
        try send(nil, frames: 0, deliver: deliver)
        finished = true
    }

    private var nextPresentationTime: Int64 = 0

    private func send(_ frame: UnsafeMutablePointer<AVFrame>?, frames: Int, deliver: (EncodedPacket) -> Void) throws(AudioStatusError) {
        guard let context, let packet else { return }
        if let frame {
            frame.pointee.nb_samples = Int32(frames)
            frame.pointee.pts = nextPresentationTime
            nextPresentationTime += Int64(frames)
        }
        let sent = aqff_avcodec_send_frame(context, frame)
        frame?.pointee.nb_samples = Int32(Self.framesPerPacket)
        guard sent >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "AAC encoder: " + CodecLibraries.message(for: sent))
        }
        while true {
            let received = aqff_avcodec_receive_packet(context, packet)
            if received == cffmpeg_error_again() || received == cffmpeg_error_eof() { return }
            guard received >= 0 else {
                throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "AAC encoder: " + CodecLibraries.message(for: received))
            }
            let bytes = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            aqff_av_packet_unref(packet)
            packetCount += 1
            deliver(EncodedPacket(bytes: bytes, frameCount: Self.framesPerPacket))
        }
    }
}
