import AQMedia
import CFFmpeg

/// One libavcodec encoder, the part AAC and ALAC share: the opened context, one reusable planar
/// input frame of `frameSize` frames and a packet. Gathers interleaved Float frames into the
/// frame (each codec says how a sample is stored), sends every full frame, drains the packets.
/// Not thread-safe: one thread at a time.
final class LibavEncoderSession {
    /// Writes `value` as sample `index` of a planar channel buffer.
    typealias StoreSample = (_ plane: UnsafeMutableRawPointer, _ index: Int, _ value: Float) -> Void

    let name: String
    let frameSize: Int
    let channelCount: Int
    private(set) var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let store: StoreSample
    /// A packet's frames: its duration when the encoder gives one, else `frameSize`.
    private let framesFromDuration: Bool
    /// Frames gathered in the frame so far, < frameSize.
    private var gathered = 0
    private var nextPresentationTime: Int64 = 0
    private(set) var inputFrameCount: Int64 = 0
    private(set) var packetCount: Int64 = 0

    /// Opens the encoder of `codecID` after `configure` has set the context's fields (rate,
    /// sample format, layout, options).
    ///
    /// - Throws: 'fmt?' with `refusal` and FFmpeg's reason when the encoder does not open.
    init(name: String, codecID: AVCodecID, frameSize: Int, channelCount: Int, framesFromDuration: Bool, refusal: String,
         configure: (UnsafeMutablePointer<AVCodecContext>) -> Void, store: @escaping StoreSample) throws(AudioConverterError) {
        try CodecLibraries.require()
        guard let codec = aqff_avcodec_find_encoder(codecID), let context = aqff_avcodec_alloc_context3(codec) else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "libavcodec has no \(name) encoder")
        }
        self.name = name
        self.frameSize = frameSize
        self.channelCount = channelCount
        self.framesFromDuration = framesFromDuration
        self.store = store
        self.context = context
        configure(context)
        let opened = aqff_avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, refusal + ": " + CodecLibraries.message(for: opened))
        }
        frame = aqff_av_frame_alloc()
        packet = aqff_av_packet_alloc()
        guard let frame, packet != nil else { throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "out of memory for \(name) frames") }
        frame.pointee.format = context.pointee.sample_fmt.rawValue
        frame.pointee.nb_samples = Int32(frameSize)
        frame.pointee.sample_rate = context.pointee.sample_rate
        frame.pointee.ch_layout = context.pointee.ch_layout
        guard aqff_av_frame_get_buffer(frame, 0) >= 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "cannot allocate an \(name) input frame")
        }
    }

    deinit {
        aqff_av_frame_free(&frame)
        aqff_av_packet_free(&packet)
        aqff_avcodec_free_context(&context)
    }

    /// The encoder's extradata (AAC: the AudioSpecificConfig; ALAC: the 'alac' atom).
    var extradata: [UInt8] {
        guard let context, let bytes = context.pointee.extradata else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(context.pointee.extradata_size)))
    }

    func encode(_ interleaved: UnsafePointer<Float>, frameCount: Int, deliver: (EncodedPacket) -> Void) throws(AudioConverterError) {
        guard let frame else { return }
        var consumed = 0
        while consumed < frameCount {
            if gathered == 0 { _ = aqff_av_frame_make_writable(frame) }
            let take = min(frameCount - consumed, frameSize - gathered)
            for channel in 0 ..< channelCount {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!)
                for index in 0 ..< take { store(plane, gathered + index, interleaved[(consumed + index) * channelCount + channel]) }
            }
            gathered += take
            consumed += take
            if gathered == frameSize {
                try send(frame, frames: frameSize, deliver: deliver)
                gathered = 0
            }
        }
        inputFrameCount += Int64(frameCount)
    }

    /// Sends the last partial frame (the rest of it silent) and drains every packet left.
    func finish(deliver: (EncodedPacket) -> Void) throws(AudioConverterError) {
        if gathered > 0, let frame {
            for channel in 0 ..< channelCount {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!)
                for index in gathered ..< frameSize { store(plane, index, 0) }
            }
            try send(frame, frames: gathered, deliver: deliver)
            gathered = 0
        }
        try send(nil, frames: 0, deliver: deliver)
    }

    private func send(_ frame: UnsafeMutablePointer<AVFrame>?, frames: Int, deliver: (EncodedPacket) -> Void) throws(AudioConverterError) {
        guard let context, let packet else { return }
        if let frame {
            frame.pointee.nb_samples = Int32(frames)
            frame.pointee.pts = nextPresentationTime
            nextPresentationTime += Int64(frames)
        }
        let sent = aqff_avcodec_send_frame(context, frame)
        frame?.pointee.nb_samples = Int32(frameSize)
        guard sent >= 0 || sent == cffmpeg_error_eof() else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "\(name) encoder: " + CodecLibraries.message(for: sent))
        }
        while true {
            let received = aqff_avcodec_receive_packet(context, packet)
            if received == cffmpeg_error_again() || received == cffmpeg_error_eof() { return }
            guard received >= 0 else {
                throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "\(name) encoder: " + CodecLibraries.message(for: received))
            }
            let bytes = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            let frames = framesFromDuration && packet.pointee.duration > 0 ? Int(packet.pointee.duration) : frameSize
            aqff_av_packet_unref(packet)
            packetCount += 1
            deliver(EncodedPacket(bytes: bytes, frameCount: frames))
        }
    }
}

/// One libavcodec decoder, the part every decoder shares: opened with the codec's extradata,
/// raw packets in, interleaved Float frames out (planar or packed float, 16- or 32-bit
/// integers divided by their full scale, so 16- and 24-bit samples are exact).
final class LibavDecoderSession {
    let name: String
    let channelCount: Int
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var interleaved: [Float] = []

    /// - Throws: 'fmt?' with FFmpeg's reason when the decoder does not open.
    init(name: String, codecID: AVCodecID, extradata: [UInt8], sampleRate: Int, channelCount: Int) throws(AudioConverterError) {
        try CodecLibraries.require()
        guard let codec = aqff_avcodec_find_decoder(codecID), let context = aqff_avcodec_alloc_context3(codec) else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "libavcodec has no \(name) decoder")
        }
        self.name = name
        self.channelCount = channelCount
        self.context = context
        // Extradata must come from av_malloc with AV_INPUT_BUFFER_PADDING_SIZE zeroed bytes after
        // it; none is left NULL (Opus's decoder refuses an empty one but not a missing one).
        if !extradata.isEmpty {
            let buffer = aqff_av_mallocz(extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))!.assumingMemoryBound(to: UInt8.self)
            for (index, byte) in extradata.enumerated() { buffer[index] = byte }
            context.pointee.extradata = buffer
            context.pointee.extradata_size = Int32(extradata.count)
        }
        context.pointee.sample_rate = Int32(sampleRate)
        aqff_av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        let opened = aqff_avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "\(name) decoder: " + CodecLibraries.message(for: opened))
        }
        frame = aqff_av_frame_alloc()
        packet = aqff_av_packet_alloc()
    }

    deinit {
        aqff_av_frame_free(&frame)
        aqff_av_packet_free(&packet)
        aqff_avcodec_free_context(&context)
    }

    func reset() {
        if let context { aqff_avcodec_flush_buffers(context) }
    }

    /// Decodes one raw packet; hands the frames it yields to `deliver` (pointer, frame count),
    /// valid only during the call.
    func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioConverterError) {
        guard let context, let packet, let frame else { return }
        guard aqff_av_new_packet(packet, Int32(bytes.count)) >= 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "out of memory for an \(name) packet of \(bytes.count) bytes")
        }
        if let base = bytes.baseAddress { packet.pointee.data.update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        let sent = aqff_avcodec_send_packet(context, packet)
        aqff_av_packet_unref(packet)
        guard sent >= 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                   "\(name) packet of \(bytes.count) bytes does not decode: " + CodecLibraries.message(for: sent))
        }
        while true {
            let received = aqff_avcodec_receive_frame(context, frame)
            if received == cffmpeg_error_again() || received == cffmpeg_error_eof() { return }
            guard received >= 0 else {
                throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "\(name) decoder: " + CodecLibraries.message(for: received))
            }
            let frames = Int(frame.pointee.nb_samples)
            let channels = Int(frame.pointee.ch_layout.nb_channels)
            let format = frame.pointee.format
            // Planar (one plane per channel) or packed (interleaved in plane 0): float, or 16-
            // or 32-bit integers divided by their full scale (FLAC gives packed integers).
            let planar = [AV_SAMPLE_FMT_FLTP.rawValue, AV_SAMPLE_FMT_S16P.rawValue, AV_SAMPLE_FMT_S32P.rawValue].contains(format)
            let packed = [AV_SAMPLE_FMT_FLT.rawValue, AV_SAMPLE_FMT_S16.rawValue, AV_SAMPLE_FMT_S32.rawValue].contains(format)
            guard planar || packed, channels == channelCount else {
                throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                       "\(name) decoder produced \(channels) channels in sample format \(format); expected \(channelCount) channels of float or 16/32-bit integers")
            }
            let isFloat = format == AV_SAMPLE_FMT_FLTP.rawValue || format == AV_SAMPLE_FMT_FLT.rawValue
            let is16 = format == AV_SAMPLE_FMT_S16P.rawValue || format == AV_SAMPLE_FMT_S16.rawValue
            if interleaved.count < frames * channels { interleaved = [Float](repeating: 0, count: frames * channels) }
            interleaved.withUnsafeMutableBufferPointer { out in
                for channel in 0 ..< channels {
                    let plane = UnsafeRawPointer(frame.pointee.extended_data[planar ? channel : 0]!)
                    for index in 0 ..< frames {
                        let sample = planar ? index : index * channels + channel
                        out[index * channels + channel] = isFloat ? plane.load(fromByteOffset: 4 * sample, as: Float.self)
                            : is16 ? Float(Double(plane.load(fromByteOffset: 2 * sample, as: Int16.self)) / 32768)
                            : Float(Double(plane.load(fromByteOffset: 4 * sample, as: Int32.self)) / 2_147_483_648)
                    }
                }
            }
            interleaved.withUnsafeBufferPointer { deliver($0.baseAddress!, frames) }
        }
    }
}
