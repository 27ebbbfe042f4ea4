import AQCodecs
import AQMedia
import Testing

/// The C libraries reached through the system-library targets load and are the ones Debian 12
/// ships.
@Suite("Media and codec libraries")
struct LibraryLinkTests {
    @Test("libsndfile and libsamplerate load")
    func fileAndResampling() {
        #expect(MediaLibraries.sndfileVersion.hasPrefix("libsndfile-1."))
        #expect(MediaLibraries.samplerateVersion.hasPrefix("libsamplerate-0."))
    }

    @Test("libavcodec and libavformat load and offer AAC encoding and decoding")
    func codecs() {
        #expect(CodecLibraries.avcodecVersion.hasPrefix("libavcodec 5"))
        #expect(CodecLibraries.avformatVersion.hasPrefix("libavformat 5"))
        #expect(CodecLibraries.hasAAC)
    }
}
