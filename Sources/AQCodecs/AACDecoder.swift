import AQMedia
import CFFmpeg

/// AAC decoder over FFmpeg's native decoder: raw packets in (no ADTS header), interleaved
/// Float frames out. It outputs every decoded frame, including the encoder's priming: trim with
/// the file's packet table (`PacketTableInfo`), as Apple's decoder also leaves it to the caller.
/// Not thread-safe: one thread at a time.
public final class AACDecoder {
    public let config: AudioSpecificConfig
    public var channelCount: Int { config.channelCount }
    public var sampleRate: Int { config.sampleRate }

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var interleaved: [Float] = []

    /// - Throws: 'fmt?' when the config is not one the decoder accepts.
    public init(config: AudioSpecificConfig) throws(AudioStatusError) {
        try CodecLibraries.require()
        guard config.channelCount > 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
                                   "AAC channel configuration \(config.channelConfiguration): expected 1 ... 7")
        }
        guard let codec = aqff_avcodec_find_decoder(AV_CODEC_ID_AAC), let context = aqff_avcodec_alloc_context3(codec) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "libavcodec has no AAC decoder")
        }
        self.config = config
        self.context = context
        // Extradata must come from av_malloc with AV_INPUT_BUFFER_PADDING_SIZE zeroed bytes after it.
        let size = config.bytes.count
        let extradata = aqff_av_mallocz(size + Int(AV_INPUT_BUFFER_PADDING_SIZE))!.assumingMemoryBound(to: UInt8.self)
        for (index, byte) in config.bytes.enumerated() { extradata[index] = byte }
        context.pointee.extradata = extradata
        context.pointee.extradata_size = Int32(size)
        context.pointee.sample_rate = Int32(config.sampleRate)
        aqff_av_channel_layout_default(&context.pointee.ch_layout, Int32(config.channelCount))
        let opened = aqff_avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "AAC decoder: " + CodecLibraries.message(for: opened))
        }
        frame = aqff_av_frame_alloc()
        packet = aqff_av_packet_alloc()
    }

    deinit {
        aqff_av_frame_free(&frame)
        aqff_av_packet_free(&packet)
        aqff_avcodec_free_context(&context)
    }

    /// Decodes one raw packet; hands the interleaved frames it yields to `deliver` (pointer,
    /// frame count), valid only during the call.
    ///
    /// - Throws: 'fmt?' with FFmpeg's message for a packet that does not decode.
    public func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioStatusError) {
        guard let context, let packet else { return }
        guard aqff_av_new_packet(packet, Int32(bytes.count)) >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "out of memory for an AAC packet of \(bytes.count) bytes")
        }
        if let base = bytes.baseAddress { packet.pointee.data.update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        let sent = aqff_avcodec_send_packet(context, packet)
        aqff_av_packet_unref(packet)
        guard sent >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
                                   "AAC packet of \(bytes.count) bytes does not decode: " + CodecLibraries.message(for: sent))
        }
        try receive(deliver)
    }

    /// Drops the decoder's state (after a seek or discontinuity).
    public func reset() {
        if let context { aqff_avcodec_flush_buffers(context) }
    }

    private func receive(_ deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioStatusError) {
        guard let context, let frame else { return }
        while true {
            let received = aqff_avcodec_receive_frame(context, frame)
            if received == cffmpeg_error_again() || received == cffmpeg_error_eof() { return }
            guard received >= 0 else {
                throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "AAC decoder: " + CodecLibraries.message(for: received))
            }
            let frames = Int(frame.pointee.nb_samples)
            let channels = Int(frame.pointee.ch_layout.nb_channels)
            guard frame.pointee.format == AV_SAMPLE_FMT_FLTP.rawValue, channels == channelCount else {
                throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
                                       "AAC decoder produced \(channels) channels in sample format \(frame.pointee.format); expected \(channelCount) planar float")
            }
            if interleaved.count < frames * channels { interleaved = [Float](repeating: 0, count: frames * channels) }
            interleaved.withUnsafeMutableBufferPointer { out in
                for channel in 0 ..< channels {
                    let plane = UnsafeRawPointer(frame.pointee.extended_data[channel]!).assumingMemoryBound(to: Float.self)
                    for index in 0 ..< frames { out[index * channels + channel] = plane[index] }
                }
            }
            interleaved.withUnsafeBufferPointer { deliver($0.baseAddress!, frames) }
        }
    }
}
