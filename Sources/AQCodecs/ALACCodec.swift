import AQMedia
import CFFmpeg

/// Apple Lossless through FFmpeg's ALAC encoder and decoder, for MPEG-4 files (`.m4a`), where
/// libsndfile cannot go (it writes ALAC in CAF only). 16- and 24-bit samples travel as Float,
/// exactly. Not thread-safe: one thread at a time.
///
/// The magic cookie is Apple's: the 24-byte ALACSpecificConfig (frame length, bit depth, rice
/// parameters, channels, max run, max frame bytes, average bit rate, sample rate); FFmpeg keeps
/// it behind a 12-byte 'alac' atom header, which is added and removed here.
public enum ALAC {
    public static let framesPerPacket = 4096
    /// `kAppleLosslessFormatFlag_16BitSourceData` (1) ... `_24BitSourceData` (3).
    public static func formatFlag(bitDepth: Int) -> UInt32 { bitDepth == 24 ? 3 : bitDepth == 20 ? 2 : bitDepth == 32 ? 4 : 1 }
    public static func bitDepth(formatFlag: UInt32) -> Int { [1: 16, 2: 20, 3: 24, 4: 32][formatFlag] ?? 16 }

    /// The 24-byte ALACSpecificConfig from FFmpeg's extradata (which may carry the atom header).
    static func appleCookie(fromExtradata bytes: [UInt8]) -> [UInt8] { bytes.count >= 36 ? Array(bytes[12 ..< 36]) : bytes }

    /// FFmpeg's extradata (size, 'alac', version 0, then the config) from an Apple cookie, which
    /// may itself be wrapped in 'frma'/'alac' atoms.
    static func extradata(fromAppleCookie cookie: [UInt8]) throws(AudioStatusError) -> [UInt8] {
        var config = cookie
        if let range = findAtom("alac", in: cookie), cookie.count >= range + 4 + 24 { config = Array(cookie[(range + 4) ..< (range + 28)]) }
        guard config.count >= 24 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC magic cookie of \(cookie.count) bytes: expected a 24-byte ALACSpecificConfig")
        }
        return [0, 0, 0, 36] + Array("alac".utf8) + [0, 0, 0, 0] + Array(config.prefix(24))
    }

    /// The offset just after an atom's type (and its 4-byte version/flags) when the cookie holds one.
    private static func findAtom(_ type: String, in bytes: [UInt8]) -> Int? {
        let tag = Array(type.utf8)
        guard bytes.count >= 12 else { return nil }
        for start in 0 ... bytes.count - 8 where Array(bytes[(start + 4) ..< (start + 8)]) == tag && start + 8 < bytes.count {
            return start + 8
        }
        return nil
    }
}

/// Encodes interleaved Float frames into packets (AAC, ALAC).
public protocol PacketEncoding: AnyObject {
    func encode(_ interleaved: UnsafePointer<Float>, frameCount: Int, deliver: (EncodedPacket) -> Void) throws(AudioStatusError)
    /// Sends what is gathered and drains the encoder.
    func finish(deliver: (EncodedPacket) -> Void) throws(AudioStatusError)
    /// Frames of encoder delay before the first input frame.
    var primingFrames: Int { get }
    var inputFrameCount: Int64 { get }
}

extension AACEncoder: PacketEncoding {}

/// ALAC encoder: interleaved Float frames in, gathered into 4096-frame planar integer frames;
/// the last frame may be shorter (ALAC packets say their own length).
public final class ALACEncoder: PacketEncoding {
    /// ALAC has no encoder delay.
    public let primingFrames = 0
    public let sampleRate: Int
    public let channelCount: Int
    public let bitDepth: Int
    public private(set) var inputFrameCount: Int64 = 0
    public private(set) var packetCount: Int64 = 0
    /// Apple's 24-byte magic cookie.
    public let magicCookie: [UInt8]
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var gathered = 0

    public init(sampleRate: Int, channelCount: Int, bitDepth: Int) throws(AudioStatusError) {
        try CodecLibraries.require()
        guard bitDepth == 16 || bitDepth == 24 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC is written at 16 or 24 bits; asked for \(bitDepth)")
        }
        guard (1 ... 8).contains(channelCount) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC with \(channelCount) channels: expected 1 ... 8")
        }
        guard let codec = aqff_avcodec_find_encoder(AV_CODEC_ID_ALAC), let context = aqff_avcodec_alloc_context3(codec) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "libavcodec has no ALAC encoder")
        }
        self.context = context
        context.pointee.sample_rate = Int32(sampleRate)
        context.pointee.sample_fmt = bitDepth == 16 ? AV_SAMPLE_FMT_S16P : AV_SAMPLE_FMT_S32P
        context.pointee.bits_per_raw_sample = Int32(bitDepth)
        context.pointee.frame_size = Int32(ALAC.framesPerPacket)
        aqff_av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        let opened = aqff_avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
                                   "ALAC encoder refused \(sampleRate) Hz, \(channelCount) channels, \(bitDepth) bits: " + CodecLibraries.message(for: opened))
        }
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitDepth = bitDepth
        magicCookie = ALAC.appleCookie(fromExtradata: Array(UnsafeBufferPointer(start: context.pointee.extradata, count: Int(context.pointee.extradata_size))))
        frame = aqff_av_frame_alloc()
        packet = aqff_av_packet_alloc()
        guard let frame else { throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "out of memory for ALAC frames") }
        frame.pointee.format = context.pointee.sample_fmt.rawValue
        frame.pointee.nb_samples = Int32(ALAC.framesPerPacket)
        frame.pointee.sample_rate = Int32(sampleRate)
        aqff_av_channel_layout_default(&frame.pointee.ch_layout, Int32(channelCount))
        guard aqff_av_frame_get_buffer(frame, 0) >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "cannot allocate an ALAC input frame")
        }
    }

    deinit {
        aqff_av_frame_free(&frame)
        aqff_av_packet_free(&packet)
        aqff_avcodec_free_context(&context)
    }

    public func encode(_ interleaved: UnsafePointer<Float>, frameCount: Int, deliver: (EncodedPacket) -> Void) throws(AudioStatusError) {
        guard let frame else { return }
        var consumed = 0
        let scale = Double(1 << (bitDepth - 1))
        while consumed < frameCount {
            if gathered == 0 { _ = aqff_av_frame_make_writable(frame) }
            let take = min(frameCount - consumed, ALAC.framesPerPacket - gathered)
            for channel in 0 ..< channelCount {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!)
                for index in 0 ..< take {
                    let value = Int32(max(-scale, min(scale - 1, (Double(interleaved[(consumed + index) * channelCount + channel]) * scale).rounded())))
                    if bitDepth == 16 {
                        plane.storeBytes(of: Int16(value), toByteOffset: 2 * (gathered + index), as: Int16.self)
                    } else {
                        // 24-bit samples sit in the top bits of the 32-bit planes.
                        plane.storeBytes(of: value << 8, toByteOffset: 4 * (gathered + index), as: Int32.self)
                    }
                }
            }
            gathered += take
            consumed += take
            if gathered == ALAC.framesPerPacket {
                try send(frame, frames: gathered, deliver: deliver)
                gathered = 0
            }
        }
        inputFrameCount += Int64(frameCount)
    }

    public func finish(deliver: (EncodedPacket) -> Void) throws(AudioStatusError) {
        if gathered > 0, let frame {
            try send(frame, frames: gathered, deliver: deliver)
            gathered = 0
        }
        try send(nil, frames: 0, deliver: deliver)
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
        frame?.pointee.nb_samples = Int32(ALAC.framesPerPacket)
        guard sent >= 0 || sent == cffmpeg_error_eof() else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC encoder: " + CodecLibraries.message(for: sent))
        }
        while true {
            let received = aqff_avcodec_receive_packet(context, packet)
            if received == cffmpeg_error_again() || received == cffmpeg_error_eof() { return }
            guard received >= 0 else {
                throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC encoder: " + CodecLibraries.message(for: received))
            }
            let bytes = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            let duration = packet.pointee.duration > 0 ? Int(packet.pointee.duration) : ALAC.framesPerPacket
            aqff_av_packet_unref(packet)
            packetCount += 1
            deliver(EncodedPacket(bytes: bytes, frameCount: duration))
        }
    }
}

/// Decodes raw packets of a stream libavcodec knows (AAC, ALAC) into interleaved Float frames.
public protocol PacketDecoding: AnyObject {
    func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioStatusError)
    func reset()
}

extension AACDecoder: PacketDecoding {}

/// ALAC decoder: Apple's cookie in, Float frames out (16/24-bit integers divided by 2^15/2^31
/// after FFmpeg's left-justified planes, so they are exact).
public final class ALACDecoder: PacketDecoding {
    public let channelCount: Int
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var interleaved: [Float] = []

    public init(cookie: [UInt8], sampleRate: Int, channelCount: Int) throws(AudioStatusError) {
        try CodecLibraries.require()
        let extradata = try ALAC.extradata(fromAppleCookie: cookie)
        guard let codec = aqff_avcodec_find_decoder(AV_CODEC_ID_ALAC), let context = aqff_avcodec_alloc_context3(codec) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "libavcodec has no ALAC decoder")
        }
        self.context = context
        let buffer = aqff_av_mallocz(extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))!.assumingMemoryBound(to: UInt8.self)
        for (index, byte) in extradata.enumerated() { buffer[index] = byte }
        context.pointee.extradata = buffer
        context.pointee.extradata_size = Int32(extradata.count)
        context.pointee.sample_rate = Int32(sampleRate)
        aqff_av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        let opened = aqff_avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC decoder: " + CodecLibraries.message(for: opened))
        }
        self.channelCount = channelCount
        frame = aqff_av_frame_alloc()
        packet = aqff_av_packet_alloc()
    }

    deinit {
        aqff_av_frame_free(&frame)
        aqff_av_packet_free(&packet)
        aqff_avcodec_free_context(&context)
    }

    public func reset() { if let context { aqff_avcodec_flush_buffers(context) } }

    public func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioStatusError) {
        guard let context, let packet, let frame else { return }
        guard aqff_av_new_packet(packet, Int32(bytes.count)) >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "out of memory for an ALAC packet of \(bytes.count) bytes")
        }
        if let base = bytes.baseAddress { packet.pointee.data.update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
        let sent = aqff_avcodec_send_packet(context, packet)
        aqff_av_packet_unref(packet)
        guard sent >= 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC packet of \(bytes.count) bytes does not decode: " + CodecLibraries.message(for: sent))
        }
        while true {
            let received = aqff_avcodec_receive_frame(context, frame)
            if received == cffmpeg_error_again() || received == cffmpeg_error_eof() { return }
            guard received >= 0 else {
                throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC decoder: " + CodecLibraries.message(for: received))
            }
            let frames = Int(frame.pointee.nb_samples)
            let channels = Int(frame.pointee.ch_layout.nb_channels)
            guard channels == channelCount else {
                throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "ALAC decoder produced \(channels) channels; expected \(channelCount)")
            }
            if interleaved.count < frames * channels { interleaved = [Float](repeating: 0, count: frames * channels) }
            let format = frame.pointee.format
            interleaved.withUnsafeMutableBufferPointer { out in
                for channel in 0 ..< channels {
                    let plane = UnsafeRawPointer(frame.pointee.extended_data[channel]!)
                    for index in 0 ..< frames {
                        out[index * channels + channel] = format == AV_SAMPLE_FMT_S16P.rawValue
                            ? Float(Double(plane.load(fromByteOffset: 2 * index, as: Int16.self)) / 32768)
                            : Float(Double(plane.load(fromByteOffset: 4 * index, as: Int32.self)) / 2_147_483_648)
                    }
                }
            }
            interleaved.withUnsafeBufferPointer { deliver($0.baseAddress!, frames) }
        }
    }
}
