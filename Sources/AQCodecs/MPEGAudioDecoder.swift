import AQMedia
import CFFmpeg

/// MPEG-1/2 audio decoder (Layer I, II or III: `kAudioFormatMPEGLayer1/2/3`) over libavcodec's
/// float decoders: one packet is one frame, its header included (as AudioFileStream and
/// AudioFile deliver MP3 packets); interleaved Float frames out, every frame the decoder gives
/// (the encoder's delay and padding are the caller's to trim, as with Apple's decoder).
/// Not thread-safe: one thread at a time.
public final class MPEGAudioDecoder: PacketDecoding {
    public let layer: Int
    public let channelCount: Int
    private let session: LibavDecoderSession

    /// The layer of an MPEG audio format ID, or nil for another format.
    public static func layer(of formatID: UInt32) -> Int? {
        switch formatID {
        case AudioFormatValues.mpegLayer1: 1
        case AudioFormatValues.mpegLayer2: 2
        case AudioFormatValues.mpegLayer3: 3
        default: nil
        }
    }

    /// - Throws: 'fmt?' for a channel count other than 1 or 2, or a decoder libavcodec lacks.
    public init(layer: Int, sampleRate: Int, channelCount: Int) throws(AudioConverterError) {
        guard (1 ... 3).contains(layer), (1 ... 2).contains(channelCount) else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                      "MPEG audio Layer \(layer) with \(channelCount) channels: expected Layer I, II or III, 1 or 2 channels")
        }
        self.layer = layer
        self.channelCount = channelCount
        let codec = layer == 1 ? AV_CODEC_ID_MP1 : layer == 2 ? AV_CODEC_ID_MP2 : AV_CODEC_ID_MP3
        session = try LibavDecoderSession(name: "MPEG Layer \(layer)", codecID: codec, extradata: [], sampleRate: sampleRate, channelCount: channelCount)
    }

    public func decode(_ bytes: UnsafeRawBufferPointer, deliver: (UnsafePointer<Float>, Int) -> Void) throws(AudioConverterError) {
        try session.decode(bytes, deliver: deliver)
    }

    public func reset() { session.reset() }
}
