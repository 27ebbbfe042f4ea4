import Foundation
import Glibc

/// Writes measured loudness into the version 2 `bext` chunk of a closed WAVE or RF64 file: the
/// five 16-bit fields after the UMID (EBU Tech 3285 v2: LoudnessValue, LoudnessRange,
/// MaxTruePeakLevel, MaxMomentaryLoudness, MaxShortTermLoudness, in hundredths), in place.
/// libsndfile writes the chunk only before the first frame, when nothing is measured yet.
public enum BroadcastWaveLoudness {
    /// Where the loudness fields start in the `bext` chunk's data: Description 256,
    /// Originator 32, OriginatorReference 32, OriginationDate 10, OriginationTime 8,
    /// TimeReference 8, Version 2, UMID 64.
    static let fieldsOffset = 412

    /// A measure in hundredths, or 0x7FFF (not given) when it is not finite (silence).
    static func field(_ value: Double) -> Int16 {
        value.isFinite ? Int16(clamping: Int((value * 100).rounded())) : 0x7FFF
    }

    /// Writes `result` into the file at `path`.
    /// - Throws: a message when the file cannot be opened or has no version 2 `bext` chunk in
    ///   its first 64 KiB.
    public static func write(_ result: LoudnessMeter.Result, toFileAt path: String) throws(AudioFileError) {
        let descriptor = FilePath.withCString(path) { open($0, O_RDWR | O_CLOEXEC) }
        guard descriptor >= 0 else {
            throw AudioFileError(AudioFileError.filePermissionsCode, "cannot open '\(path)' to write its loudness: \(SystemError.describe(errno))")
        }
        defer { close(descriptor) }
        var header = [UInt8](repeating: 0, count: 65536)
        let count = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 12, let start = bextData(in: Array(header[0 ..< count])) else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "'\(path)' has no version 2 'bext' chunk to write its loudness into")
        }
        let values = [result.integrated, result.range, result.truePeak, result.maxMomentary, result.maxShortTerm].map(field)
        var bytes: [UInt8] = []
        for value in values { bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(start + fieldsOffset)) }
        guard written == bytes.count else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "writing the loudness of '\(path)' failed: \(SystemError.describe(errno))")
        }
    }

    /// The offset of a version 2 `bext` chunk's data in a RIFF or RF64 header, if it is there.
    static func bextData(in header: [UInt8]) -> Int? {
        func word(_ at: Int) -> Int { Int(header[at]) | Int(header[at + 1]) << 8 | Int(header[at + 2]) << 16 | Int(header[at + 3]) << 24 }
        let form = String(decoding: header[0 ..< 4], as: UTF8.self)
        guard form == "RIFF" || form == "RF64", String(decoding: header[8 ..< 12], as: UTF8.self) == "WAVE" else { return nil }
        var at = 12
        while at + 8 <= header.count {
            let id = String(decoding: header[at ..< at + 4], as: UTF8.self), size = word(at + 4)
            if id == "bext" {
                let data = at + 8
                guard size >= fieldsOffset + 10, data + 348 <= header.count, header[data + 346] >= 2 else { return nil }
                return data
            }
            if id == "data" { return nil }
            at += 8 + size + (size & 1)
        }
        return nil
    }
}
