import AQMedia
import CAudioTypes
import CSndFile
import Foundation
import Testing

@Suite("AudioFileWriter")
struct AudioFileWriterTests {
    static func format(bits: Int, float: Bool = false, bigEndian: Bool = false) -> AudioStreamBasicDescription {
        var flags = AudioFormatValues.isPacked | (float ? AudioFormatValues.isFloat : AudioFormatValues.isSignedInteger)
        if bigEndian { flags |= AudioFormatValues.isBigEndian }
        return AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: AudioFormatValues.linearPCM, mFormatFlags: flags,
                                           mBytesPerPacket: UInt32(bits / 8), mFramesPerPacket: 1, mBytesPerFrame: UInt32(bits / 8),
                                           mChannelsPerFrame: 1, mBitsPerChannel: UInt32(bits), mReserved: 0)
    }

    static func readShorts(_ path: String) -> [Int16] {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { return [] }
        defer { sf_close(file) }
        var values = [Int16](repeating: 0, count: Int(info.frames))
        _ = values.withUnsafeMutableBufferPointer { sf_readf_short(file, $0.baseAddress, info.frames) }
        return values
    }

    @Test("packets written at an earlier position overwrite; the file keeps its length and every other frame",
          arguments: [(AudioFileTypeValues.wave, false), (AudioFileTypeValues.caf, true), (AudioFileTypeValues.aiff, true), (AudioFileTypeValues.wave64, false)])
    func overwrite(fileType: UInt32, bigEndian: Bool) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-overwrite-\(getpid())-\(fileType)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try AudioFileWriter(path: path, fileType: fileType, format: Self.format(bits: 16, bigEndian: bigEndian), eraseExisting: true)
        func bytes(_ values: [Int16]) -> [UInt8] {
            values.flatMap { value -> [UInt8] in
                let bits = UInt16(bitPattern: value)
                return bigEndian ? [UInt8(bits >> 8), UInt8(bits & 0xFF)] : [UInt8(bits & 0xFF), UInt8(bits >> 8)]
            }
        }
        let first = bytes((0 ..< 100).map { Int16($0) })
        try first.withUnsafeBytes { _ = try writer.writePackets($0.baseAddress!, byteCount: 200, startPacket: 0, packetCount: 100) }
        let patch = bytes(Array(repeating: -7, count: 10))
        try patch.withUnsafeBytes { _ = try writer.writePackets($0.baseAddress!, byteCount: 20, startPacket: 50, packetCount: 10) }
        #expect(writer.packetCount == 100)
        let tail = bytes((100 ..< 110).map { Int16($0) })
        try tail.withUnsafeBytes { _ = try writer.writePackets($0.baseAddress!, byteCount: 20, startPacket: 100, packetCount: 10) }
        #expect {
            try tail.withUnsafeBytes { _ = try writer.writePackets($0.baseAddress!, byteCount: 20, startPacket: 200, packetCount: 10) }
        } throws: { ($0 as? AudioFileError)?.status == AudioFileError.fileInvalidPacketOffsetCode }
        try writer.close()
        let values = Self.readShorts(path)
        let expected = (0 ..< 110).map { (50 ..< 60).contains($0) ? Int16(-7) : Int16($0) }
        #expect(values == expected)
    }

    @Test("formats a file type cannot hold are refused with 'fmt?' and the reason", arguments: [
        (AudioFileTypeValues.aiff, format(bits: 16), "big-endian signed integers"),
        (AudioFileTypeValues.wave, format(bits: 16, bigEndian: true), "little-endian"),
        (AudioFileTypeValues.wave, format(bits: 8), "8-bit WAVE samples are unsigned"),
        (AudioFileTypeValues.aifc, format(bits: 32, float: true), "AIFC floats are big-endian"),
    ])
    func refusedFormats(fileType: UInt32, format: AudioStreamBasicDescription, reason: String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-refused-\(getpid())").path
        #expect {
            _ = try AudioFileWriter(path: path, fileType: fileType, format: format, eraseExisting: true)
        } throws: { error in
            guard let error = error as? AudioFileError else { return false }
            return error.status == AudioFileError.fileUnsupportedDataFormatCode && error.message.contains(reason)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("an unknown file type is refused with 'typ?'")
    func unknownType() {
        #expect {
            _ = try AudioFileWriter(path: "/tmp/never", fileType: 0x4D50_4733, format: Self.format(bits: 16), eraseExisting: true)
        } throws: { ($0 as? AudioFileError)?.status == AudioFileError.fileUnsupportedTypeCode }
    }
}
