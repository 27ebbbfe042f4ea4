import CSndFile
import Glibc

/// Writes FLAC (`.flac`) or Apple Lossless in CAF through libsndfile, from interleaved Float
/// frames at 16 or 24 bits. Samples go in as left-justified 32-bit integers (sample × 2^31),
/// so a Float that came from a 16- or 24-bit sample is stored bit-exact.
///
/// Crash limit (measured with libsndfile 1.2.0): FLAC keeps every complete block; ALAC-in-CAF is unreadable until
/// closed. Not thread-safe.
public final class LosslessFileWriter {
    public enum Codec: Sendable { case flac, appleLossless }
    public let path: String
    public let codec: Codec
    public let channelCount: Int
    public let bitDepth: Int
    public let sampleRate: Int
    public private(set) var frameCount: Int64 = 0
    private var file: OpaquePointer?
    private var scratch: [Int32] = []

    /// - Throws: 'fmt?' for depths other than 16 or 24, 'prm?' for an existing file without
    ///   `eraseExisting` or a path that cannot be written.
    public init(path: String, codec: Codec, sampleRate: Int, channelCount: Int, bitDepth: Int, eraseExisting: Bool) throws(AudioFileError) {
        guard bitDepth == 16 || bitDepth == 24 else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode, "\(codec == .flac ? "FLAC" : "ALAC") is written at 16 or 24 bits; asked for \(bitDepth)")
        }
        try OutputPath.checkCreatable(path, eraseExisting: eraseExisting)
        let subtype: Int32 = switch (codec, bitDepth) {
        case (.flac, 16): Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
        case (.flac, _): Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24)
        case (.appleLossless, 16): Int32(SF_FORMAT_CAF | SF_FORMAT_ALAC_16)
        case (.appleLossless, _): Int32(SF_FORMAT_CAF | SF_FORMAT_ALAC_24)
        }
        let name = codec == .flac ? "FLAC" : "ALAC"
        // libsndfile's FLAC encoder takes 1 ... 8 channels (the FLAC format's limit) and says
        // only "No Error." when refused: name the limit instead.
        if codec == .flac, !(1 ... 8).contains(channelCount) {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                 "FLAC holds 1 ... 8 channels; '\(path)' would have \(channelCount) (use -c 8 or fewer, or a WAVE/CAF/W64 file)")
        }
        var info = SF_INFO(frames: 0, samplerate: Int32(sampleRate), channels: Int32(channelCount), format: subtype, sections: 0, seekable: 0)
        guard sf_format_check(&info) == SF_TRUE else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                 "libsndfile cannot write \(name) \(bitDepth)-bit with \(channelCount) channels at \(sampleRate) Hz ('\(path)')")
        }
        errno = 0
        guard let handle = FilePath.withCString(path, { sf_open($0, Int32(SFM_WRITE), &info) }) else {
            let reason = errno != 0 ? SystemError.describe(errno) : String(cString: sf_strerror(nil))
            throw AudioFileError(AudioFileError.filePermissionsCode, "cannot create '\(path)' as \(name): \(reason)")
        }
        file = handle
        self.path = path
        self.codec = codec
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitDepth = bitDepth
    }

    deinit { close() }

    /// Writes `frameCount` interleaved Float frames (clipped to −1 ... 1 − 2^-(bits-1)).
    public func write(_ frames: UnsafePointer<Float>, frameCount: Int) throws(AudioFileError) {
        guard let file else { throw AudioFileError(AudioFileError.fileNotOpenCode, "the file is closed") }
        let samples = frameCount * channelCount
        if scratch.count < samples { scratch = [Int32](repeating: 0, count: samples) }
        let scale = Double(1 << (bitDepth - 1))
        let shift = Int32(32 - bitDepth)
        scratch.withUnsafeMutableBufferPointer { out in
            for index in 0 ..< samples {
                let value = max(-scale, min(scale - 1, (Double(frames[index]) * scale).rounded()))
                out[index] = Int32(value) << shift
            }
        }
        errno = 0
        let written = scratch.withUnsafeBufferPointer { sf_writef_int(file, $0.baseAddress, sf_count_t(frameCount)) }
        let writeError = errno
        guard written == frameCount else {
            let reason = writeError != 0 ? SystemError.describe(writeError) : String(cString: sf_strerror(file))
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "writing '\(path)' failed: \(reason)")
        }
        self.frameCount += Int64(frameCount)
    }

    public func close() {
        if let file { sf_close(file) }
        file = nil
    }
}
