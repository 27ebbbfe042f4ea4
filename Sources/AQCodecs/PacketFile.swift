import AQMedia
import CAudioTypes
import Foundation
import Glibc

/// Priming and remainder frames of an encoded stream (Apple's `AudioFilePacketTableInfo`):
/// decoded frames `primingFrames ..< primingFrames + validFrameCount` are the audio.
public struct PacketTable: Equatable, Sendable {
    public var validFrameCount: Int64
    public var primingFrames: Int32
    public var remainderFrames: Int32
    public init(validFrameCount: Int64, primingFrames: Int32, remainderFrames: Int32) {
        self.validFrameCount = validFrameCount
        self.primingFrames = primingFrames
        self.remainderFrames = remainderFrames
    }
}

/// A file of variable-size packets being written (ADTS, CAF with AAC). Methods are called from
/// one thread at a time (the caller's, or the queue thread in a recording).
public protocol PacketFileWriting: AnyObject {
    var fileType: UInt32 { get }
    var dataFormat: AudioStreamBasicDescription { get }
    var packetCount: Int64 { get }
    /// Bytes of packet data written.
    var byteCount: Int64 { get }
    var maximumPacketSize: Int { get }
    var magicCookie: [UInt8] { get }
    /// Sets the cookie; before the first packet for formats that store it in the header.
    func setMagicCookie(_ cookie: [UInt8]) throws(AudioFileError)
    var packetTable: PacketTable? { get set }
    /// Appends packets; `startPacket` must equal ``packetCount`` (files are written in order).
    func writePackets(_ data: UnsafeRawPointer, byteCount: Int, descriptions: UnsafeBufferPointer<AudioStreamPacketDescription>,
                      startPacket: Int64) throws(AudioFileError)
    func close() throws(AudioFileError)
    /// Whether the file as it stands tells a decoder to drop the encoder's priming frames (CAF's
    /// 'pakt', MPEG-4's edit list): false for ADTS, and for an MPEG-4 file a failed write left
    /// fragmented, whose decoders give the priming frames too.
    var marksPriming: Bool { get }
    /// Writes what the file says about the recording that starts in it (``RecordingMetadata``,
    /// its first frame `frame` as samples since midnight, the wall-clock time `originated`)
    /// where the container has a place for it: CAF's 'info' chunk, MPEG-4's tags. Before the
    /// first packet.
    func describeStart(_ metadata: RecordingMetadata, frame: UInt64, originated: Date) throws(AudioFileError)
}

extension PacketFileWriting {
    public var marksPriming: Bool { true }
    /// ADTS has no place for it: nothing.
    public func describeStart(_ metadata: RecordingMetadata, frame: UInt64, originated: Date) throws(AudioFileError) {}
}

/// A file of variable-size packets being read.
public protocol PacketFileReading: AnyObject {
    var fileType: UInt32 { get }
    var dataFormat: AudioStreamBasicDescription { get }
    var packetCount: Int64 { get }
    var byteCount: Int64 { get }
    var maximumPacketSize: Int { get }
    var magicCookie: [UInt8] { get }
    var packetTable: PacketTable? { get }
    /// Reads up to `packetCount` packets from `startPacket` into `buffer` (`capacity` bytes),
    /// fewer when they would not fit; fills `descriptions` (offsets within `buffer`).
    /// Returns packets and bytes read; (0, 0) at the end.
    func readPackets(startPacket: Int64, packetCount: Int, into buffer: UnsafeMutableRawPointer, capacity: Int,
                     descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) throws(AudioFileError) -> (packets: Int, bytes: Int)
    func close()
}

extension PacketFileReading {
    /// Frames the file decodes to: the packet table's valid frames, else packets × frames per packet.
    public var frameCount: Int64 {
        packetTable?.validFrameCount ?? packetCount * Int64(dataFormat.mFramesPerPacket)
    }
    public var duration: Double { dataFormat.mSampleRate > 0 ? Double(frameCount) / dataFormat.mSampleRate : 0 }
}

/// Where each packet's bytes are in the file.
struct PacketIndex {
    var offsets: [Int64] = []
    var sizes: [UInt32] = []
    var count: Int { offsets.count }
    var totalBytes: Int64 = 0
    var maximumSize = 0

    mutating func append(offset: Int64, size: Int) {
        offsets.append(offset)
        sizes.append(UInt32(size))
        totalBytes += Int64(size)
        maximumSize = max(maximumSize, size)
    }
}

/// A read-only file handle with positioned reads (pread), for the packet readers.
final class ReadableFile {
    let descriptor: Int32
    let size: Int64
    let path: String

    init(path: String) throws(AudioFileError) {
        descriptor = FilePath.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else {
            let reason = errno
            if reason == ENOENT { throw AudioFileError(AudioFileError.fileNotFoundCode, "no file at '\(path)'") }
            throw AudioFileError(AudioFileError.filePermissionsCode, "'\(path)' cannot be read: \(String(cString: strerror(reason)))")
        }
        var info = stat()
        fstat(descriptor, &info)
        size = Int64(info.st_size)
        self.path = path
    }

    deinit { close(descriptor) }

    /// Reads exactly `count` bytes at `offset`; nil when the file is shorter.
    func read(at offset: Int64, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + Int64(count) <= size else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return got == count ? bytes : nil
    }

    func read(at offset: Int64, count: Int, into buffer: UnsafeMutableRawPointer) -> Bool {
        pread(descriptor, buffer, count, off_t(offset)) == count
    }
}

/// A file being written with stdio; every public write ends with fflush, so a killed process
/// leaves everything written so far in the file.
final class WritableFile {
    private var stream: UnsafeMutablePointer<FILE>?
    let path: String
    private(set) var position: Int64 = 0

    init(path: String, eraseExisting: Bool) throws(AudioFileError) {
        try OutputPath.checkCreatable(path, eraseExisting: eraseExisting)
        guard let stream = FilePath.withCString(path, { fopen($0, "w+b") }) else {
            throw AudioFileError(AudioFileError.filePermissionsCode, "cannot create \(path): \(SystemError.describe(errno))")
        }
        self.stream = stream
        self.path = path
    }

    deinit { if let stream { fclose(stream) } }

    func write(_ bytes: [UInt8]) throws(AudioFileError) {
        try bytes.withUnsafeBufferPointer { (raw) throws(AudioFileError) in
            if let base = raw.baseAddress { try write(base, count: raw.count) }
        }
    }

    func write(_ pointer: UnsafeRawPointer, count: Int) throws(AudioFileError) {
        guard let stream, count > 0 else { return }
        guard fwrite(pointer, 1, count, stream) == count else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "writing \(path) failed: \(SystemError.describe(errno))")
        }
        position += Int64(count)
    }

    /// Overwrites bytes at `offset` and returns to the end.
    func overwrite(_ bytes: [UInt8], at offset: Int64) throws(AudioFileError) {
        guard let stream else { return }
        fseeko(stream, off_t(offset), SEEK_SET)
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, stream) }
        fseeko(stream, 0, SEEK_END)
        guard written == bytes.count else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "writing \(path) failed: \(SystemError.describe(errno))")
        }
    }

    func flush() throws(AudioFileError) {
        guard let stream else { return }
        guard fflush(stream) == 0 else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "writing \(path) failed: \(SystemError.describe(errno))")
        }
    }

    func close() throws(AudioFileError) {
        guard let stream else { return }
        self.stream = nil
        guard fclose(stream) == 0 else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "closing \(path) failed: \(SystemError.describe(errno))")
        }
    }
}

/// Checks that packet descriptions lie within a buffer and that writes arrive in order.
func validatedPackets(_ descriptions: UnsafeBufferPointer<AudioStreamPacketDescription>, byteCount: Int, startPacket: Int64,
                      expected: Int64, path: String) throws(AudioFileError) {
    guard startPacket == expected else {
        throw AudioFileError(AudioFileError.fileInvalidPacketOffsetCode,
                               "\(path): packets must be written in order; starting packet \(startPacket), expected \(expected)")
    }
    for (index, description) in descriptions.enumerated() {
        guard description.mStartOffset >= 0, description.mStartOffset + Int64(description.mDataByteSize) <= Int64(byteCount) else {
            throw AudioFileError(AudioFileError.parameterCode,
                                   "packet description \(index) (offset \(description.mStartOffset), \(description.mDataByteSize) bytes) lies outside the \(byteCount)-byte buffer")
        }
    }
}

/// Copies packets from `index` into a caller's buffer, as AudioFileReadPacketData does.
func copyPackets(from file: ReadableFile, index: PacketIndex, startPacket: Int64, packetCount: Int, into buffer: UnsafeMutableRawPointer,
                 capacity: Int, descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                 frames: [UInt32]? = nil) throws(AudioFileError) -> (packets: Int, bytes: Int) {
    guard startPacket >= 0 else {
        throw AudioFileError(AudioFileError.fileInvalidPacketOffsetCode, "starting packet \(startPacket) is negative")
    }
    var packets = 0
    var bytes = 0
    var packet = Int(startPacket)
    while packets < packetCount, packet < index.count {
        let size = Int(index.sizes[packet])
        guard bytes + size <= capacity else { break }
        guard file.read(at: index.offsets[packet], count: size, into: buffer + bytes) else {
            throw AudioFileError(AudioFileError.fileInvalidFileCode, "\(file.path): packet \(packet) lies past the end of the file")
        }
        descriptions?[packets] = AudioStreamPacketDescription(mStartOffset: Int64(bytes), mVariableFramesInPacket: frames?[packet] ?? 0,
                                                              mDataByteSize: UInt32(size))
        bytes += size
        packets += 1
        packet += 1
    }
    return (packets, bytes)
}
