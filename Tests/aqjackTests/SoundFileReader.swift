import CSndFile
import Foundation

/// A file read back through libsndfile, as the tests check recordings.
struct SoundFileContents {
    let frames: Int
    let channels: Int
    let sampleRate: Int
    let format: Int32
    /// Every sample, interleaved, as Float (integers divided by their full scale).
    let samples: [Float]
    /// The BWF TimeReference, or nil when the file has none.
    let timeReference: Int64?

    init(path: String) throws {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw NSError(domain: "libsndfile", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot open \(path): \(String(cString: sf_strerror(nil)))"])
        }
        defer { sf_close(file) }
        let frameCount = Int(info.frames)
        let channelCount = Int(info.channels)
        frames = frameCount
        channels = channelCount
        sampleRate = Int(info.samplerate)
        format = info.format
        var buffer = [Float](repeating: 0, count: frameCount * channelCount)
        // Integers read back exactly: libsndfile scales by 1/2^(bits-1) without normalisation tricks.
        sf_command(file, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        let read = buffer.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, sf_count_t(frameCount)) }
        samples = Array(buffer[0 ..< Int(read) * channelCount])
        let reference = csndfile_time_reference(file)
        timeReference = reference >= 0 ? reference : nil
    }
}
