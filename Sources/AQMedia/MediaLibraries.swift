import CFFmpeg
import CSampleRate
import CSndFile

/// The media libraries aqjack links (files, resampling, codecs), and their versions as loaded.
///
/// This module is the only importer of CSndFile, CSampleRate and CFFmpeg; the AudioFile and
/// AudioConverter layers arrive here with the recording and codec work.
public enum MediaLibraries {
    /// e.g. `libsndfile-1.2.0`.
    public static var sndfileVersion: String { String(cString: sf_version_string()) }
    /// e.g. `libsamplerate-0.2.2 (c) 2002-2008 Erik de Castro Lopo`, shortened to its first word.
    public static var samplerateVersion: String {
        String(cString: src_get_version()).split(separator: " ").first.map(String.init) ?? "libsamplerate"
    }
    /// e.g. `libavcodec 59.37.100`.
    public static var avcodecVersion: String {
        let version = avcodec_version()
        return "libavcodec \(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)"
    }
}
