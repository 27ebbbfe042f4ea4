import CSampleRate
import CSndFile

/// The file and resampling libraries aqjack links, and their versions as loaded.
///
/// This module is the only importer of CSndFile and CSampleRate; the AudioFile layer arrives
/// here with the recording work.
public enum MediaLibraries {
    /// e.g. `libsndfile-1.2.0`.
    public static var sndfileVersion: String { String(cString: sf_version_string()) }
    /// e.g. `libsamplerate-0.2.2 (c) 2002-2008 Erik de Castro Lopo`, shortened to its first word.
    public static var samplerateVersion: String {
        String(cString: src_get_version()).split(separator: " ").first.map(String.init) ?? "libsamplerate"
    }
}
