import AQMedia
import CFFmpeg

/// A decoder for the formats whose packets libavcodec takes as they are, with at most the
/// stream's own header as extradata: MPEG Layer I/II/III (a packet is a frame, header
/// included), FLAC (STREAMINFO), Opus (OpusHead), AC-3 and E-AC-3 (sync frames). Interleaved
/// Float frames out, every frame the decoder gives (priming and padding are the caller's to
/// trim, as with Apple's decoders). ``PacketDecoders`` makes them. Not thread-safe: one thread
/// at a time.
public final class LibavPacketDecoder: PacketDecoding {
    public let channelCount: Int
    private let session: LibavDecoderSession

    /// - Throws: 'fmt?' with FFmpeg's reason when the decoder does not open.
    init(name: String, codecID: AVCodecID, extradata: [UInt8], sampleRate: Int, channelCount: Int) throws(AudioConverterError) {
        self.channelCount = channelCount
        session = try LibavDecoderSession(name: name, codecID: codecID, extradata: extradata, sampleRate: sampleRate, channelCount: channelCount)
    }

    public func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioConverterError) {
        try session.decode(bytes, deliver: deliver)
    }

    public func reset() { session.reset() }
}
