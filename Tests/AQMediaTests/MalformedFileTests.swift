import AQMedia
import CAudioTypes
import Foundation
import Testing

/// A folder of broken files, written by the test: each one gets Apple's error code and a
/// message, or (for a header that lies about the length) reads what is there; never a crash or
/// a hang.
@Suite("Reading malformed files")
struct MalformedFileTests {
    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-malformed-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// A valid 16-bit mono WAV of `frames` frames at 48 kHz.
    static func validWave(frames: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        func u32(_ value: UInt32) { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
        func u16(_ value: UInt16) { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
        bytes += Array("RIFF".utf8); u32(UInt32(36 + frames * 2)); bytes += Array("WAVE".utf8)
        bytes += Array("fmt ".utf8); u32(16); u16(1); u16(1); u32(48000); u32(96000); u16(2); u16(16)
        bytes += Array("data".utf8); u32(UInt32(frames * 2))
        for frame in 0 ..< frames { u16(UInt16(truncatingIfNeeded: frame * 100)) }
        return bytes
    }

    static func write(_ name: String, _ bytes: [UInt8]) -> String {
        let path = folder.appendingPathComponent(name).path
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    static func patched(_ offset: Int, _ value: [UInt8]) -> [UInt8] {
        var bytes = validWave(frames: 100)
        bytes.replaceSubrange(offset ..< offset + value.count, with: value)
        return bytes
    }

    @Test("each broken file is refused with Apple's code and says why", arguments: [
        ("empty.wav", [UInt8]()),
        ("noise.wav", (0 ..< 4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }),
        ("text.aiff", Array("this is not an audio file\n".utf8)),
        ("truncated-header.wav", Array(validWave(frames: 100).prefix(30))),
        ("zero-channels.wav", patched(22, [0, 0])),
        ("absurd-rate.wav", patched(24, [0xFF, 0xFF, 0xFF, 0x7F])),
        ("zero-rate.wav", patched(24, [0, 0, 0, 0])),
        ("wrong-magic.wav", patched(0, Array("RIFX".utf8))),
    ] as [(String, [UInt8])])
    func refused(name: String, bytes: [UInt8]) {
        let path = Self.write(name, bytes)
        var thrown: AudioFileError?
        do {
            _ = try AudioFileReader(path: path)
        } catch {
            thrown = error
        }
        #expect(thrown != nil, "\(name) was accepted")
        let error = thrown
        // libsndfile tells "not audio" from "malformed audio" in its own way: either of Apple's
        // two codes for those is right, never anything else.
        let known = [AudioFileError.fileUnsupportedTypeCode, AudioFileError.fileInvalidFileCode, AudioFileError.fileUnsupportedDataFormatCode]
        #expect(error.map { known.contains($0.status) } == true, "\(name): \(String(describing: error))")
        #expect(error?.message.contains(path) == true)
    }

    @Test("a header claiming more frames than the file holds reads what is there and stops")
    func lyingLength() throws {
        var bytes = Self.validWave(frames: 100)
        bytes.replaceSubrange(40 ..< 44, with: [0x00, 0x00, 0x00, 0x40])   // data size: 1 GiB
        let path = Self.write("lying-length.wav", bytes)
        let reader = try AudioFileReader(path: path)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        var start: Int64 = 0
        for _ in 0 ..< 1000 {
            let packets = try reader.readPackets(startPacket: start, packetCount: 4096, into: buffer, byteCapacity: 1 << 20)
            if packets == 0 { break }
            total += packets
            start += Int64(packets)
        }
        #expect(total == 100)
    }

    @Test("a missing file answers kAudioFileFileNotFoundError (-43)")
    func missing() {
        #expect {
            _ = try AudioFileReader(path: Self.folder.appendingPathComponent("nope.wav").path)
        } throws: { ($0 as? AudioFileError)?.status == -43 }
    }

    @Test("AudioFileReadPacketData's byte budget: fewer packets when they would not fit")
    func byteBudget() throws {
        let path = Self.write("valid.wav", Self.validWave(frames: 100))
        let reader = try AudioFileReader(path: path)
        #expect(reader.packetCount == 100)
        #expect(reader.dataFormat.mBitsPerChannel == 16 && reader.dataFormat.mFormatFlags & AudioFormatValues.isBigEndian == 0)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        defer { buffer.deallocate() }
        #expect(try reader.readPackets(startPacket: 0, packetCount: 100, into: buffer, byteCapacity: 21) == 10)
        #expect(buffer.load(fromByteOffset: 2, as: Int16.self) == 100)
        #expect(try reader.readPackets(startPacket: 100, packetCount: 10, into: buffer, byteCapacity: 64) == 0)
    }
}
