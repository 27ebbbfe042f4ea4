import CFFmpeg

/// The codec libraries (FFmpeg's libavcodec and libavformat) and what they offer here.
///
/// This module is the only importer of CFFmpeg; AudioConverter's AAC encoder and decoder and
/// the MPEG-4 container arrive here with the codecs work.
public enum CodecLibraries {
    /// e.g. `libavcodec 59.37.100`.
    public static var avcodecVersion: String { versionString("libavcodec", avcodec_version()) }
    /// e.g. `libavformat 59.27.100`.
    public static var avformatVersion: String { versionString("libavformat", avformat_version()) }

    /// Whether libavcodec has an AAC encoder and decoder (FFmpeg's native ones).
    public static var hasAAC: Bool {
        avcodec_find_encoder(AV_CODEC_ID_AAC) != nil && avcodec_find_decoder(AV_CODEC_ID_AAC) != nil
    }

    private static func versionString(_ name: String, _ version: UInt32) -> String {
        "\(name) \(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)"
    }
}
