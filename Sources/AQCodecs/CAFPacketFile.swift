import AQMedia
import CAudioTypes
import Foundation

// Core Audio Format files holding compressed packets (AAC), after Apple's "Core Audio Format
// Specification 1.0": 'caff' v1 header, then chunks of (type, Int64 big-endian size, data):
// 'desc' (the ASBD, big-endian), 'kuki' (the magic cookie), 'data' (UInt32 edit count, then the
// packets) and 'pakt' (packet count, valid frames, priming, remainder, then each packet's size
// as a variable-length integer). Linear PCM, and ALAC in CAF written from frames, go through
// libsndfile instead; ALAC in CAF is read here, as packets.

/// Big-endian CAF field helpers.
enum CAF {
    static func be64(_ value: UInt64) -> [UInt8] { (0 ..< 8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) } }
    static func be32(_ value: UInt32) -> [UInt8] { (0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32($0))) } }
    static func read64(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } }
    static func read32(_ bytes: ArraySlice<UInt8>) -> UInt32 { bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) } }

    static func chunk(_ type: String, size: Int64) -> [UInt8] { Array(type.utf8) + be64(UInt64(bitPattern: size)) }

    static func description(_ format: AudioStreamBasicDescription) -> [UInt8] {
        be64(format.mSampleRate.bitPattern) + be32(format.mFormatID) + be32(format.mFormatFlags) + be32(format.mBytesPerPacket)
            + be32(format.mFramesPerPacket) + be32(format.mChannelsPerFrame) + be32(format.mBitsPerChannel)
    }

    static func parseDescription(_ bytes: ArraySlice<UInt8>) -> AudioStreamBasicDescription {
        let b = bytes.startIndex
        return AudioStreamBasicDescription(mSampleRate: Double(bitPattern: read64(bytes[b...])), mFormatID: read32(bytes[(b + 8)...]),
                                           mFormatFlags: read32(bytes[(b + 12)...]), mBytesPerPacket: read32(bytes[(b + 16)...]),
                                           mFramesPerPacket: read32(bytes[(b + 20)...]), mBytesPerFrame: 0,
                                           mChannelsPerFrame: read32(bytes[(b + 24)...]), mBitsPerChannel: read32(bytes[(b + 28)...]), mReserved: 0)
    }

    /// A variable-length integer: 7 bits per byte, most significant first, high bit = more.
    static func variableLength(_ value: UInt64) -> [UInt8] {
        var groups: [UInt8] = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 {
            groups.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        return groups.reversed()
    }
}

/// Writes AAC packets to a CAF file, readable after a crash: the header, 'desc', 'kuki' (set
/// before the first packet, or built from the format), a reserved region holding 'pakt' and a
/// 'free' chunk, and a 'data' chunk of size -1 ("unknown, to the end of the file") go out
/// first. Each write appends the packets to 'data' and their sizes to the packet table in
/// place, rewriting the table's counts and the 'free' chunk that follows it, then flushes: a
/// killed recording is a valid CAF holding every packet written. ``close()`` writes the final
/// priming/remainder and the data size.
///
/// The reserved region is ``reservedTableBytes`` (256 KiB): about 130,000 packet sizes, 46
/// minutes of 48 kHz AAC. A longer recording stops updating the table in place (the file is
/// then only complete once closed, when the region becomes 'free' and a full 'pakt' follows
/// the data).
public final class CAFPacketFileWriter: PacketFileWriting {
    public let fileType = AudioFileTypeValues.caf
    public let dataFormat: AudioStreamBasicDescription
    public private(set) var packetCount: Int64 = 0
    public private(set) var byteCount: Int64 = 0
    public private(set) var maximumPacketSize = 0
    public private(set) var magicCookie: [UInt8]
    public var packetTable: PacketTable?
    private let file: WritableFile
    private var sizes: [UInt32] = []
    private var dataChunkOffset: Int64 = -1
    private var cookieOffset: Int64 = -1
    /// Bytes reserved before 'data' for 'pakt' + 'free'.
    public static let reservedTableBytes = 256 * 1024
    private var tableOffset: Int64 = -1
    /// Bytes of packet-size entries in the in-place table.
    private var tableEntryBytes = 0
    /// False once the entries outgrew the reserved region.
    private var tableInPlace = true
    /// The 'info' chunk's body (``describeStart(_:frame:originated:)``), written with the header.
    private var information: [UInt8]?

    public init(path: String, format: AudioStreamBasicDescription, eraseExisting: Bool) throws(AudioFileError) {
        guard format.mFormatID == AudioFormatValues.mpeg4AAC else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                   "compressed CAF files hold AAC here; the format is \(fourCharacterCode(format.mFormatID))")
        }
        let completed = try CompressedFormatValues.completedAAC(format)
        let config = try AudioSpecificConfig(objectType: Int(completed.mFormatFlags), sampleRate: Int(completed.mSampleRate),
                                             channelCount: Int(completed.mChannelsPerFrame))
        dataFormat = completed
        magicCookie = ElementaryStreamDescriptor(audioSpecificConfig: config, bufferSize: UInt32(CompressedFormatValues.aacMaximumPacketBytes(channels: Int(config.channelCount)))).bytes
        file = try WritableFile(path: path, eraseExisting: eraseExisting)
    }

    /// Before the first packet: replaces the cookie. After: accepted when it has the same size
    /// (rewritten in place; seed 000 copies the cookie again after recording), else 'op??'-like
    /// `kAudioFileUnsupportedPropertyError` explaining why.
    public func setMagicCookie(_ cookie: [UInt8]) throws(AudioFileError) {
        _ = try ElementaryStreamDescriptor(parsing: cookie)
        if dataChunkOffset < 0 {
            magicCookie = cookie
        } else if cookie.count == magicCookie.count {
            try file.overwrite(cookie, at: cookieOffset)
            magicCookie = cookie
        } else {
            throw AudioFileError(AudioFileError.fileUnsupportedPropertyCode,
                                   "\(file.path): a magic cookie of \(cookie.count) bytes cannot replace the \(magicCookie.count)-byte one after packets were written")
        }
    }

    /// Gives the file an 'info' chunk of ``RecordingMetadata/cafInformation(timeReference:originated:reference:)``;
    /// before the first packet.
    public func describeStart(_ metadata: RecordingMetadata, frame: UInt64, originated: Date) throws(AudioFileError) {
        guard dataChunkOffset < 0 else {
            throw AudioFileError(AudioFileError.fileUnsupportedPropertyCode, "\(file.path): a CAF 'info' chunk goes in before the first packet")
        }
        let reference = metadata.reference(originated: originated)
        information = RecordingMetadata.cafInformationChunk(metadata.cafInformation(timeReference: frame, originated: originated, reference: reference))
    }

    private func writeHeader() throws(AudioFileError) {
        try file.write(Array("caff".utf8) + [0, 1, 0, 0])
        try file.write(CAF.chunk("desc", size: 32) + CAF.description(dataFormat))
        if let information { try file.write(CAF.chunk("info", size: Int64(information.count)) + information) }
        try file.write(CAF.chunk("kuki", size: Int64(magicCookie.count)))
        cookieOffset = file.position
        try file.write(magicCookie)
        tableOffset = file.position
        try file.write(tableRegion(entries: []))
        dataChunkOffset = file.position
        try file.write(CAF.chunk("data", size: -1) + [0, 0, 0, 0])
    }

    /// The 24-byte 'pakt' body header for the packets written so far (or the final table).
    private func tableHeader(final: Bool) -> [UInt8] {
        let frames = packetCount * Int64(dataFormat.mFramesPerPacket)
        let defaultPriming = Int64(min(frames, Int64(AACEncoder.defaultPrimingFrames)))
        let priming = Int64(packetTable?.primingFrames ?? Int32(defaultPriming))
        // While recording: every frame after the priming counts; the final table says exactly.
        let table = final ? (packetTable ?? PacketTable(validFrameCount: frames - defaultPriming, primingFrames: Int32(defaultPriming), remainderFrames: 0))
                          : PacketTable(validFrameCount: max(0, frames - priming), primingFrames: Int32(priming), remainderFrames: 0)
        return CAF.be64(UInt64(packetCount)) + CAF.be64(UInt64(bitPattern: table.validFrameCount))
            + CAF.be32(UInt32(bitPattern: table.primingFrames)) + CAF.be32(UInt32(bitPattern: table.remainderFrames))
    }

    /// 'pakt' (header and these entries) followed by a 'free' chunk filling the reserved region.
    private func tableRegion(entries: [UInt8]) -> [UInt8] {
        let pakt = CAF.chunk("pakt", size: Int64(24 + entries.count)) + tableHeader(final: false) + entries
        return pakt + freeChunk(bytes: Self.reservedTableBytes - pakt.count)
    }

    /// A 'free' chunk of `bytes` bytes in all (header included; at least 12).
    private func freeChunk(bytes: Int) -> [UInt8] {
        CAF.chunk("free", size: Int64(bytes - 12)) + [UInt8](repeating: 0, count: bytes - 12)
    }

    public func writePackets(_ data: UnsafeRawPointer, byteCount: Int, descriptions: UnsafeBufferPointer<AudioStreamPacketDescription>,
                             startPacket: Int64) throws(AudioFileError) {
        try validatedPackets(descriptions, byteCount: byteCount, startPacket: startPacket, expected: packetCount, path: file.path)
        if dataChunkOffset < 0 { try writeHeader() }
        var entries: [UInt8] = []
        for description in descriptions {
            let size = Int(description.mDataByteSize)
            try file.write(data + Int(description.mStartOffset), count: size)
            sizes.append(UInt32(size))
            entries += CAF.variableLength(UInt64(size))
            packetCount += 1
            self.byteCount += Int64(size)
            maximumPacketSize = max(maximumPacketSize, size)
        }
        try updateTableInPlace(appending: entries)
        try file.flush()
    }

    /// Appends entries to the in-place 'pakt', rewrites its size and counts and the 'free'
    /// chunk after it. The packet data is written first, so at every moment the table never
    /// lists a packet whose bytes are not in the file.
    private func updateTableInPlace(appending entries: [UInt8]) throws(AudioFileError) {
        guard tableInPlace, !entries.isEmpty else { return }
        let used = 12 + 24 + tableEntryBytes + entries.count
        guard used + 12 <= Self.reservedTableBytes else {
            tableInPlace = false
            return
        }
        try file.overwrite(entries, at: tableOffset + Int64(12 + 24 + tableEntryBytes))
        tableEntryBytes += entries.count
        try file.overwrite(CAF.chunk("free", size: Int64(Self.reservedTableBytes - used - 12)), at: tableOffset + Int64(used))
        try file.overwrite(CAF.chunk("pakt", size: Int64(24 + tableEntryBytes)) + tableHeader(final: false), at: tableOffset)
    }

    public func close() throws(AudioFileError) {
        if dataChunkOffset < 0 { try writeHeader() }
        try file.overwrite(CAF.be64(UInt64(byteCount + 4)), at: dataChunkOffset + 4)
        if tableInPlace {
            try file.overwrite(tableHeader(final: true), at: tableOffset + 12)
        } else {
            // The table outgrew its region: the region becomes 'free', the full table follows the data.
            try file.overwrite(freeChunk(bytes: Self.reservedTableBytes), at: tableOffset)
            var body = tableHeader(final: true)
            for size in sizes { body += CAF.variableLength(UInt64(size)) }
            try file.write(CAF.chunk("pakt", size: Int64(body.count)) + body)
        }
        try file.close()
    }
}

/// Reads a CAF file of AAC packets ('desc', 'kuki', 'pakt', 'data'); refuses, with the reason,
/// a file whose chunks are truncated or whose packet table does not fit its data.
public final class CAFPacketFileReader: PacketFileReading {
    public let fileType = AudioFileTypeValues.caf
    public let dataFormat: AudioStreamBasicDescription
    public let magicCookie: [UInt8]
    public let packetTable: PacketTable?
    public var packetCount: Int64 { Int64(index.count) }
    public var byteCount: Int64 { index.totalBytes }
    public var maximumPacketSize: Int { index.maximumSize }
    private let file: ReadableFile
    private let index: PacketIndex

    /// The format in a CAF file's 'desc' chunk, or nil when it is not a CAF file: lets the
    /// opener choose between this reader (compressed) and libsndfile (linear PCM, ALAC).
    public static func dataFormat(ofFileAt path: String) -> AudioStreamBasicDescription? {
        guard let file = try? ReadableFile(path: path), let head = file.read(at: 0, count: 8 + 12 + 32),
              head[0 ..< 4].elementsEqual("caff".utf8), head[8 ..< 12].elementsEqual("desc".utf8) else { return nil }
        return CAF.parseDescription(head[20...])
    }

    public init(path: String) throws(AudioFileError) {
        func invalid(_ why: String) -> AudioFileError {
            AudioFileError(AudioFileError.fileInvalidFileCode, "\(path) is not a valid CAF file: \(why)")
        }
        file = try ReadableFile(path: path)
        guard let head = file.read(at: 0, count: 8), head[0 ..< 4].elementsEqual("caff".utf8) else { throw invalid("no 'caff' header") }
        var offset: Int64 = 8
        var format: AudioStreamBasicDescription?
        var cookie: [UInt8] = []
        var table: (packets: Int64, valid: Int64, priming: Int32, remainder: Int32, sizes: [UInt8])?
        var data: (start: Int64, size: Int64)?
        while offset + 12 <= file.size, let header = file.read(at: offset, count: 12) {
            let type = String(decoding: header[0 ..< 4], as: UTF8.self)
            var size = Int64(bitPattern: CAF.read64(header[4...]))
            let body = offset + 12
            if size == -1 && type == "data" { size = file.size - body }
            guard size >= 0, size <= file.size - body else { throw invalid("chunk '\(type)' of \(size) bytes runs past the end") }
            switch type {
            case "desc":
                guard size >= 32, let bytes = file.read(at: body, count: 32) else { throw invalid("short 'desc'") }
                format = CAF.parseDescription(bytes[...])
            case "kuki":
                guard size <= 1 << 20, let bytes = file.read(at: body, count: Int(size)) else { throw invalid("'kuki' too large") }
                cookie = bytes
            case "pakt":
                guard size >= 24, size <= 1 << 30, let bytes = file.read(at: body, count: Int(size)) else { throw invalid("short 'pakt'") }
                table = (Int64(bitPattern: CAF.read64(bytes[0...])), Int64(bitPattern: CAF.read64(bytes[8...])),
                         Int32(bitPattern: CAF.read32(bytes[16...])), Int32(bitPattern: CAF.read32(bytes[20...])), Array(bytes[24...]))
            case "data":
                guard size >= 4 else { throw invalid("'data' shorter than its edit count") }
                data = (body + 4, size - 4)
            default: break
            }
            offset = body + size
        }
        guard let format else { throw invalid("no 'desc' chunk") }
        guard format.mSampleRate.isFinite, format.mSampleRate >= 1, format.mSampleRate <= 1_536_000 else {
            throw invalid("'desc' sample rate \(format.mSampleRate); expected 1 ... 1536000 Hz")
        }
        guard (1 ... 256).contains(format.mChannelsPerFrame), format.mFramesPerPacket <= 1 << 20 else {
            throw invalid("'desc' has \(format.mChannelsPerFrame) channels and \(format.mFramesPerPacket) frames per packet")
        }
        guard Self.readsPackets(of: format) else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                   "\(path): CAF packets of \(fourCharacterCode(format.mFormatID)) are read through libsndfile, not as packets")
        }
        guard let data else { throw invalid("no 'data' chunk") }
        guard let table else {
            throw invalid("no 'pakt' packet table (AAC packets cannot be split without one; aqjack writes it before the data, but a recording longer than ~46 minutes killed before closing has none)")
        }
        guard table.packets >= 0, table.packets <= Int64(table.sizes.count) else { throw invalid("'pakt' lists \(table.packets) packets in \(table.sizes.count) bytes") }
        guard table.valid >= 0, table.priming >= 0, table.remainder >= 0 else {
            throw invalid("'pakt' has \(table.valid) valid, \(table.priming) priming and \(table.remainder) remainder frames; expected 0 or more of each")
        }
        var index = PacketIndex()
        var cursor = 0
        var position = data.start
        for packet in 0 ..< Int(table.packets) {
            var value: UInt64 = 0
            var more = true
            var length = 0
            while more {
                guard cursor < table.sizes.count, length < 5 else { throw invalid("'pakt' entry \(packet) is truncated") }
                let byte = table.sizes[cursor]
                value = value << 7 | UInt64(byte & 0x7F)
                more = byte & 0x80 != 0
                cursor += 1
                length += 1
            }
            guard value <= 1 << 16, position + Int64(value) <= data.start + data.size else {
                throw invalid("packet \(packet) of \(value) bytes lies outside the 'data' chunk")
            }
            index.append(offset: position, size: Int(value))
            position += Int64(value)
        }
        var completed = format
        completed.mBytesPerFrame = 0
        if completed.mFramesPerPacket == 0 { completed.mFramesPerPacket = 1024 }
        // Apple Lossless without its format flag (ffmpeg's CAFs): the depth the cookie gives.
        if completed.mFormatID == AudioFormatValues.appleLossless, completed.mFormatFlags == 0, let depth = ALAC.bitDepth(ofCookie: cookie) {
            completed.mFormatFlags = ALAC.formatFlag(bitDepth: depth)
        }
        dataFormat = completed
        let isAAC = format.mFormatID == AudioFormatValues.mpeg4AAC
        magicCookie = !isAAC ? cookie : cookie.isEmpty ? (try? AudioSpecificConfig(objectType: Int(max(2, format.mFormatFlags)), sampleRate: Int(format.mSampleRate),
                                                                 channelCount: Int(format.mChannelsPerFrame))).map { ElementaryStreamDescriptor(audioSpecificConfig: $0).bytes } ?? []
                                     : cookie
        packetTable = PacketTable(validFrameCount: table.valid, primingFrames: table.priming, remainderFrames: table.remainder)
        self.index = index
    }

    /// Whether a CAF of `format` is read here as packets: AAC (any frames per packet field), and
    /// the other formats ``PacketDecoders`` decodes whose packets hold a fixed number of frames
    /// (Apple Lossless, FLAC, HE-AAC, MPEG audio, Opus, AC-3, E-AC-3 ...), as Apple's AudioFile
    /// reads them; a packet table with frames per packet (variable) is not read here.
    public static func readsPackets(of format: AudioStreamBasicDescription) -> Bool {
        format.mFormatID == AudioFormatValues.mpeg4AAC || (PacketDecoders.decodes(format.mFormatID) && format.mFramesPerPacket > 0)
    }

    public func readPackets(startPacket: Int64, packetCount: Int, into buffer: UnsafeMutableRawPointer, capacity: Int,
                            descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) throws(AudioFileError) -> (packets: Int, bytes: Int) {
        try copyPackets(from: file, index: index, startPacket: startPacket, packetCount: packetCount, into: buffer, capacity: capacity,
                        descriptions: descriptions)
    }

    public func close() {}
}
