import AQCodecs
import AQMedia
import CAudioTypes
import Foundation

/// A packet file (AAC or ALAC in ADTS, CAF or MPEG-4) whose writes run on the ``DiskWriter``
/// thread: ``writePackets(_:byteCount:descriptions:startPacket:)`` copies the packets and their
/// descriptions into a ``DiskStream`` and returns at once; the packet writes, header and
/// fragment updates and the close run on the disk thread.
///
/// Packets that find no room (a disk further behind than the ring holds) are not written: a
/// compressed stream has no silence to put in their place without encoding it, so the file
/// is shorter by them; they are counted in ``droppedPackets`` and reported. A write that fails
/// ends the writing; the next call throws its error.
///
/// Threads: one producer thread at a time (the queue thread); once ``close()`` has returned,
/// every member tells what the file holds.
public final class DiskBackedPacketFile: PacketFileWriting, @unchecked Sendable {
    public let fileType: UInt32
    public let dataFormat: AudioStreamBasicDescription
    public let stream: DiskStream
    /// The file, on the disk thread only until the stream has finished.
    private let inner: any PacketFileWriting
    private var givenPackets: Int64 = 0
    private var givenBytes: Int64 = 0
    private var largestPacket = 0
    private var cookie: [UInt8]
    private var table: PacketTable?
    private var isClosed = false
    /// Packets that found no room in the ring and were not written.
    public private(set) var droppedPackets: Int64 = 0

    /// Writes `inner` through `stream`; `inner` belongs to the disk thread from now on.
    public init(_ inner: any PacketFileWriting, stream: DiskStream) {
        self.inner = inner
        self.stream = stream
        fileType = inner.fileType
        dataFormat = inner.dataFormat
        cookie = inner.magicCookie
        table = inner.packetTable
    }

    /// Bytes of ring for `seconds` of packets of at most `maximumPacketSize` bytes, each
    /// `framesPerPacket` frames at `sampleRate`: at least 1 MiB.
    public static func ringBytes(maximumPacketSize: Int, framesPerPacket: Int, sampleRate: Double, seconds: Double = 3) -> Int {
        let packets = sampleRate * seconds / Double(max(1, framesPerPacket)) + 1
        return Int(min(max(packets * Double(maximumPacketSize), 1_048_576), 512 * 1_048_576))
    }

    public var packetCount: Int64 { isClosed ? inner.packetCount : givenPackets }
    public var byteCount: Int64 { isClosed ? inner.byteCount : givenBytes }
    public var maximumPacketSize: Int { isClosed ? inner.maximumPacketSize : largestPacket }
    public var magicCookie: [UInt8] { cookie }
    public var marksPriming: Bool { isClosed ? inner.marksPriming : true }

    public func describeStart(_ metadata: RecordingMetadata, frame: UInt64, originated: Date) throws(AudioFileError) {
        try checkDisk()
        stream.perform { [inner] () throws(AudioFileError) in try inner.describeStart(metadata, frame: frame, originated: originated) }
    }

    public func setMagicCookie(_ cookie: [UInt8]) throws(AudioFileError) {
        try checkDisk()
        self.cookie = cookie
        stream.perform { [inner] () throws(AudioFileError) in try inner.setMagicCookie(cookie) }
    }

    public var packetTable: PacketTable? {
        get { table }
        set {
            table = newValue
            stream.perform(always: true) { [inner] () throws(AudioFileError) in inner.packetTable = newValue }
        }
    }

    public func writePackets(_ data: UnsafeRawPointer, byteCount: Int, descriptions: UnsafeBufferPointer<AudioStreamPacketDescription>,
                             startPacket: Int64) throws(AudioFileError) {
        try checkDisk()
        guard !descriptions.isEmpty else { return }
        let copied = Array(descriptions)
        let sent = stream.send(data, count: byteCount) { [inner] (bytes) throws(AudioFileError) in
            try copied.withUnsafeBufferPointer { (list) throws(AudioFileError) in
                try inner.writePackets(bytes, byteCount: byteCount, descriptions: list, startPacket: inner.packetCount)
            }
        }
        guard sent else {
            droppedPackets += Int64(copied.count)
            return
        }
        givenPackets += Int64(copied.count)
        givenBytes += Int64(byteCount)
        largestPacket = max(largestPacket, copied.map { Int($0.mDataByteSize) }.max() ?? 0)
    }

    /// Writes what is queued, closes the file and waits for the disk thread to have done so.
    public func close() throws(AudioFileError) {
        guard !isClosed else { return }
        stream.perform(always: true) { [inner] () throws(AudioFileError) in try inner.close() }
        let failure = stream.finish()
        isClosed = true
        if let failure { throw failure }
    }

    private func checkDisk() throws(AudioFileError) {
        if let failure = stream.failure { throw failure }
    }
}
