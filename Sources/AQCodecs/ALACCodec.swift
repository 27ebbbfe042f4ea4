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

    /// The source bit depth an Apple cookie's ALACSpecificConfig gives (its byte 5), or nil.
    static func bitDepth(ofCookie cookie: [UInt8]) -> Int? {
        guard let extradata = try? extradata(fromAppleCookie: cookie) else { return nil }
        return Int(extradata[12 + 5])
    }

    /// FFmpeg's extradata (size, 'alac', version 0, then the config) from an Apple cookie, which
    /// may itself be wrapped in 'frma'/'alac' atoms.
    static func extradata(fromAppleCookie cookie: [UInt8]) throws(AudioConverterError) -> [UInt8] {
        var config = cookie
        if let range = findAtom("alac", in: cookie), cookie.count >= range + 4 + 24 { config = Array(cookie[(range + 4) ..< (range + 28)]) }
        guard config.count >= 24 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "ALAC magic cookie of \(cookie.count) bytes: expected a 24-byte ALACSpecificConfig")
        }
        return [0, 0, 0, 36] + Array("alac".utf8) + [0, 0, 0, 0] + Array(config.prefix(24))
    }

    /// The offset just after the type of the atom `type` among the atoms `bytes` holds one after
    /// another (4-byte big-endian size, 4-byte type: Apple's 'frma', 'alac', terminator), or nil.
    /// Walked by the atoms' sizes: the 'frma' atom's payload is the word "alac" too.
    private static func findAtom(_ type: String, in bytes: [UInt8]) -> Int? {
        let tag = Array(type.utf8)
        var start = 0
        while start + 8 <= bytes.count {
            let size = bytes[start ..< start + 4].reduce(0) { $0 << 8 | Int($1) }
            if Array(bytes[(start + 4) ..< (start + 8)]) == tag { return start + 8 }
            guard size >= 8 else { return nil }
            start += size
        }
        return nil
    }
}

/// Encodes interleaved Float frames into packets (AAC, ALAC).
public protocol PacketEncoding: AnyObject {
    func encode(_ interleaved: UnsafePointer<Float>, frameCount: Int, deliver: (EncodedPacket) -> Void) throws(AudioConverterError)
    /// Sends what is gathered and drains the encoder.
    func finish(deliver: (EncodedPacket) -> Void) throws(AudioConverterError)
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
    public var inputFrameCount: Int64 { session.inputFrameCount }
    public var packetCount: Int64 { session.packetCount }
    /// Apple's 24-byte magic cookie.
    public let magicCookie: [UInt8]
    private let session: LibavEncoderSession

    public init(sampleRate: Int, channelCount: Int, bitDepth: Int) throws(AudioConverterError) {
        guard bitDepth == 16 || bitDepth == 24 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "ALAC is written at 16 or 24 bits; asked for \(bitDepth)")
        }
        guard (1 ... 8).contains(channelCount) else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "ALAC with \(channelCount) channels: expected 1 ... 8")
        }
        let scale = Double(1 << (bitDepth - 1))
        session = try LibavEncoderSession(
            name: "ALAC", codecID: AV_CODEC_ID_ALAC, frameSize: ALAC.framesPerPacket, channelCount: channelCount, framesFromDuration: true,
            refusal: "ALAC encoder refused \(sampleRate) Hz, \(channelCount) channels, \(bitDepth) bits",
            configure: { context in
                context.pointee.sample_rate = Int32(sampleRate)
                context.pointee.sample_fmt = bitDepth == 16 ? AV_SAMPLE_FMT_S16P : AV_SAMPLE_FMT_S32P
                context.pointee.bits_per_raw_sample = Int32(bitDepth)
                context.pointee.frame_size = Int32(ALAC.framesPerPacket)
                aqff_av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
            },
            store: { plane, index, sample in
                let value = Int32(max(-scale, min(scale - 1, (Double(sample) * scale).rounded())))
                if bitDepth == 16 {
                    plane.storeBytes(of: Int16(value), toByteOffset: 2 * index, as: Int16.self)
                } else {
                    // 24-bit samples sit in the top bits of the 32-bit planes.
                    plane.storeBytes(of: value << 8, toByteOffset: 4 * index, as: Int32.self)
                }
            })
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitDepth = bitDepth
        magicCookie = ALAC.appleCookie(fromExtradata: session.extradata)
    }

    public func encode(_ interleaved: UnsafePointer<Float>, frameCount: Int, deliver: (EncodedPacket) -> Void) throws(AudioConverterError) {
        try session.encode(interleaved, frameCount: frameCount, deliver: deliver)
    }

    public func finish(deliver: (EncodedPacket) -> Void) throws(AudioConverterError) {
        try session.finish(deliver: deliver)
    }
}

/// Decodes raw packets of a stream libavcodec knows (AAC, ALAC) into interleaved Float frames.
public protocol PacketDecoding: AnyObject {
    func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioConverterError)
    func reset()
}

extension AACDecoder: PacketDecoding {}

/// ALAC decoder: Apple's cookie in, Float frames out (16/24-bit integers divided by 2^15/2^31
/// after FFmpeg's left-justified planes, so they are exact).
public final class ALACDecoder: PacketDecoding {
    public let channelCount: Int
    private let session: LibavDecoderSession

    public init(cookie: [UInt8], sampleRate: Int, channelCount: Int) throws(AudioConverterError) {
        session = try LibavDecoderSession(name: "ALAC", codecID: AV_CODEC_ID_ALAC, extradata: try ALAC.extradata(fromAppleCookie: cookie),
                                          sampleRate: sampleRate, channelCount: channelCount)
        self.channelCount = channelCount
    }

    public func reset() { session.reset() }

    public func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioConverterError) {
        try session.decode(bytes, deliver: deliver)
    }
}
