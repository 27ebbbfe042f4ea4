import AQMedia
import CAudioTypes

/// Writes raw AAC packets as an ADTS stream (`.aac`, `kAudioFileAAC_ADTSType`): a 7-byte header
/// before each packet. Crash-safe by nature: every flushed frame is readable. ADTS has no room
/// for a packet table; priming is not recorded (readers see it as audio).
public final class ADTSFileWriter: PacketFileWriting {
    /// ADTS has nowhere to mark the priming.
    public var marksPriming: Bool { false }
    public let fileType = AudioFileTypeValues.adts
    public let dataFormat: AudioStreamBasicDescription
    public private(set) var packetCount: Int64 = 0
    public private(set) var byteCount: Int64 = 0
    public private(set) var maximumPacketSize = 0
    public private(set) var magicCookie: [UInt8] = []
    public var packetTable: PacketTable?
    private var config: AudioSpecificConfig
    private let file: WritableFile

    /// - Throws: 'fmt?' unless the format is AAC at an MPEG-4 rate with 1–6 or 8 channels.
    public init(path: String, format: AudioStreamBasicDescription, eraseExisting: Bool) throws(AudioFileError) {
        guard format.mFormatID == AudioFormatValues.mpeg4AAC else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                   "an ADTS file holds AAC; the format is \(fourCharacterCode(format.mFormatID))")
        }
        let completed = try CompressedFormatValues.completedAAC(format)
        config = try AudioSpecificConfig(objectType: Int(completed.mFormatFlags), sampleRate: Int(completed.mSampleRate),
                                         channelCount: Int(completed.mChannelsPerFrame))
        try Self.requireChannelConfiguration(config)
        dataFormat = completed
        file = try WritableFile(path: path, eraseExisting: eraseExisting)
    }

    /// ADTS headers carry a channel configuration (1 ... 7), not a program config element: the
    /// full-band 6- and 8-channel layouts aqjack codes (``AudioSpecificConfig/programLayout(forChannelCount:)``)
    /// cannot be named in one, and 5.1/7.1 would lose channel 4 to the LFE: refused.
    static func requireChannelConfiguration(_ config: AudioSpecificConfig) throws(AudioFileError) {
        guard config.channelConfiguration != 0 else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                   "ADTS (.aac) cannot carry \(config.channelCount) full-band AAC channels (its headers name only AAC's 5.1 and 7.1, whose channel 4 is a band-limited LFE): write .m4a or .caf")
        }
    }

    /// ADTS carries no cookie; the cookie's config must match the file's format.
    public func setMagicCookie(_ cookie: [UInt8]) throws(AudioFileError) {
        let parsed = try ElementaryStreamDescriptor(parsing: cookie).audioSpecificConfig
        guard parsed.sampleRate == config.sampleRate, parsed.channelCount == config.channelCount, parsed.objectType <= 4 else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                   "the magic cookie describes \(parsed.sampleRate) Hz, \(parsed.channelCount) channels, object type \(parsed.objectType); the file is \(config.sampleRate) Hz, \(config.channelCount) channels")
        }
        magicCookie = cookie
    }

    public func writePackets(_ data: UnsafeRawPointer, byteCount: Int, descriptions: UnsafeBufferPointer<AudioStreamPacketDescription>,
                             startPacket: Int64) throws(AudioFileError) {
        try validatedPackets(descriptions, byteCount: byteCount, startPacket: startPacket, expected: packetCount, path: file.path)
        for description in descriptions {
            let size = Int(description.mDataByteSize)
            try file.write(ADTSHeader(config: config, payloadLength: size).bytes)
            try file.write(data + Int(description.mStartOffset), count: size)
            packetCount += 1
            self.byteCount += Int64(size)
            maximumPacketSize = max(maximumPacketSize, size)
        }
        try file.flush()
    }

    public func close() throws(AudioFileError) { try file.close() }
}

/// Reads an ADTS stream: scans the frame headers once to index the packets (raw payloads,
/// headers stripped). The stream's format comes from the first header; a frame whose header
/// does not match it, or that runs past the end of the file, ends the stream there.
public final class ADTSFileReader: PacketFileReading {
    public let fileType = AudioFileTypeValues.adts
    public let dataFormat: AudioStreamBasicDescription
    public let magicCookie: [UInt8]
    /// ADTS cannot carry priming or remainder frames: nil.
    public let packetTable: PacketTable? = nil
    public var packetCount: Int64 { Int64(index.count) }
    public var byteCount: Int64 { index.totalBytes }
    public var maximumPacketSize: Int { index.maximumSize }
    private let file: ReadableFile
    private let index: PacketIndex

    /// - Throws: 'dta?' when the file does not start with a valid ADTS header (an ID3 tag
    ///   before it is skipped).
    public init(path: String) throws(AudioFileError) {
        file = try ReadableFile(path: path)
        var offset: Int64 = 0
        if let tag = file.read(at: 0, count: 10), tag[0] == 0x49, tag[1] == 0x44, tag[2] == 0x33 {   // "ID3"
            offset = 10 + Int64(tag[6] & 0x7F) << 21 + Int64(tag[7] & 0x7F) << 14 + Int64(tag[8] & 0x7F) << 7 + Int64(tag[9] & 0x7F)
        }
        guard let first = file.read(at: offset, count: 9).flatMap({ bytes in bytes.withUnsafeBytes { ADTSHeader(parsing: $0) } }),
              let config = try? first.audioSpecificConfig else {
            throw AudioFileError(AudioFileError.fileInvalidFileCode, "\(path) is not an ADTS AAC stream (no valid ADTS header at byte \(offset))")
        }
        var index = PacketIndex()
        while let bytes = file.read(at: offset, count: 9) ?? file.read(at: offset, count: 7),
              let header = bytes.withUnsafeBytes({ ADTSHeader(parsing: $0) }),
              header.sampleRateIndex == first.sampleRateIndex, header.channelConfiguration == first.channelConfiguration,
              offset + Int64(header.frameLength) <= file.size {
            index.append(offset: offset + Int64(header.headerLength), size: header.payloadLength)
            offset += Int64(header.frameLength)
        }
        self.index = index
        dataFormat = CompressedFormatValues.aacDescription(config)
        magicCookie = ElementaryStreamDescriptor(audioSpecificConfig: config, bufferSize: UInt32(CompressedFormatValues.aacMaximumPacketBytes(channels: Int(config.channelCount)))).bytes
    }

    public func readPackets(startPacket: Int64, packetCount: Int, into buffer: UnsafeMutableRawPointer, capacity: Int,
                            descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) throws(AudioFileError) -> (packets: Int, bytes: Int) {
        try copyPackets(from: file, index: index, startPacket: startPacket, packetCount: packetCount, into: buffer, capacity: capacity,
                        descriptions: descriptions)
    }

    public func close() {}
}
