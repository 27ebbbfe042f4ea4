import AQMedia
import CFFmpeg

/// FFmpeg's libraries (libavcodec, libavformat, libavutil), loaded on first use.
///
/// Every entry point of this module that needs FFmpeg calls ``require()`` first; commands that
/// never touch a codec never load the libraries (see CFFmpeg.h for why they are not linked).
public enum CodecLibraries {
    /// Loads the libraries once; thread-safe.
    ///
    /// - Throws: ``AudioConverterError`` (`kAudioConverterErr_FormatNotSupported`, 'fmt?') naming
    ///   the library or symbol that could not be loaded, e.g. when libavcodec59 is not installed.
    public static func require() throws(AudioConverterError) {
        guard cffmpeg_load() == 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                   "the codec libraries are not available (" + String(cString: cffmpeg_load_error())
                                       + "); install libavcodec59 and libavformat59 (Scripts/setup.sh does)")
        }
        silenceLogOnce
    }

    /// FFmpeg logs to stderr by default; errors reach our callers as thrown messages instead.
    private static let silenceLogOnce: Void = aqff_av_log_set_level(AV_LOG_QUIET)

    /// e.g. `libavcodec 59.37.100`, or why it could not be loaded.
    public static var avcodecVersion: String {
        do { try require() } catch { return error.message }
        return versionString("libavcodec", aqff_avcodec_version())
    }

    /// e.g. `libavformat 59.27.100`.
    public static var avformatVersion: String {
        do { try require() } catch { return error.message }
        return versionString("libavformat", aqff_avformat_version())
    }

    /// Whether libavcodec has an AAC encoder and decoder (FFmpeg's native ones).
    public static var hasAAC: Bool {
        guard (try? require()) != nil else { return false }
        return aqff_avcodec_find_encoder(AV_CODEC_ID_AAC) != nil && aqff_avcodec_find_decoder(AV_CODEC_ID_AAC) != nil
    }

    /// FFmpeg's message for an error code, e.g. "Invalid data found when processing input"; for
    /// a system error (`AVERROR(errno)`: -1 ... -4095) the errno name and text, e.g. "ENOSPC (No
    /// space left on device)".
    static func message(for code: Int32) -> String {
        if code < 0 && code > -4096 { return SystemError.describe(-code) }
        var buffer = [CChar](repeating: 0, count: 256)
        _ = aqff_av_strerror(code, &buffer, buffer.count)
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    private static func versionString(_ name: String, _ version: UInt32) -> String {
        "\(name) \(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)"
    }
}
