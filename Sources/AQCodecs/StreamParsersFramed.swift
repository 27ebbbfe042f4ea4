import AQMedia
import CAudioTypes

// The self-framed stream parsers, ADTS and MP3: each frame has a header that gives its length,
// so packets are handed out as their frames complete. Bytes that are not a frame (a tag, damage,
// the middle of a frame after a seek) are skipped up to the next frame header that matches the
// stream's format. A seek can only estimate where a packet starts (from the average frame size).

/// The 4-byte MPEG audio Layer III frame header (ISO/IEC 11172-3 and 13818-3).
struct MP3FrameHeader: Equatable {
    /// 1 (MPEG-1), 2 (MPEG-2) or 25 (MPEG-2.5).
    let version: Int
    let sampleRate: Int
    let bitRate: Int
    let channelCount: Int
    /// The whole frame, header included, bytes.
    let frameLength: Int
    var framesPerPacket: Int { version == 1 ? 1152 : 576 }

    private static let rates = [1: [44100, 48000, 32000], 2: [22050, 24000, 16000], 25: [11025, 12000, 8000]]
    private static let bitRates1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    private static let bitRates2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]

    /// Parses a Layer III header at the start of `bytes`; nil when it is not one (free-format
    /// frames, whose length the header does not give, are not taken).
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 else { return nil }
        let versionBits = Int(bytes[1] >> 3 & 3)
        let layerBits = Int(bytes[1] >> 1 & 3)
        let bitRateIndex = Int(bytes[2] >> 4)
        let rateIndex = Int(bytes[2] >> 2 & 3)
        guard versionBits != 1, layerBits == 1, bitRateIndex != 0, bitRateIndex != 15, rateIndex != 3 else { return nil }
        version = versionBits == 3 ? 1 : versionBits == 2 ? 2 : 25
        sampleRate = Self.rates[version]![rateIndex]
        bitRate = (version == 1 ? Self.bitRates1 : Self.bitRates2)[bitRateIndex] * 1000
        channelCount = bytes[3] >> 6 == 3 ? 1 : 2
        let padding = Int(bytes[2] >> 1 & 1)
        frameLength = (version == 1 ? 144 : 72) * bitRate / sampleRate + padding
    }

    /// Whether `other` belongs to the same stream (a resync must not lock onto a false sync).
    func matches(_ other: MP3FrameHeader) -> Bool {
        version == other.version && sampleRate == other.sampleRate && channelCount == other.channelCount
    }
}

/// The shared frame loop: find a header, wait for its frame, hand out as many whole frames as
/// have arrived.
class FramedStreamParser: StreamContainerParser {
    /// The first frame's header, which fixes the stream's format.
    private(set) var started = false
    private var framesSeen: Int64 = 0
    private var bytesSeen: Int64 = 0

    /// The frame at the start of `bytes`: its length and the payload's range within it; nil
    /// when there is no frame header there (or not enough bytes to tell: `needMore`).
    func frame(_ bytes: UnsafeRawBufferPointer, needMore: inout Bool) -> (length: Int, payload: Range<Int>)? { nil }
    /// Fixes the format from the first frame.
    func start(_ bytes: UnsafeRawBufferPointer, info: AudioStreamInfo, events: (AudioStreamEvent) -> Void) throws(AudioFileError) {}
    /// Whether the first frame (all of it in `frame`) is a header rather than audio (MP3's
    /// Xing/Info/VBRI frame), having taken what it says into `info`.
    func isHeaderFrame(_ frame: UnsafeRawBufferPointer, info: AudioStreamInfo) -> Bool { false }

    func step(_ input: UnsafeRawBufferPointer, at offset: Int64, info: AudioStreamInfo,
              events: (AudioStreamEvent) -> Void, packets: AudioStreamPacketHandler) throws(AudioFileError) -> Int {
        var needMore = false
        guard frame(input, needMore: &needMore) != nil else {
            // Not a frame here: wait to tell, or skip a byte towards the next sync word.
            return needMore ? 0 : 1
        }
        if !started {
            // The whole first frame before anything is reported (it may be a header frame).
            let first = frame(input, needMore: &needMore)!
            guard first.length <= input.count else { return 0 }
            try start(input, info: info, events: events)
            if isHeaderFrame(UnsafeRawBufferPointer(rebasing: input[0 ..< first.length]), info: info) {
                started = true
                info.dataOffset = offset + Int64(first.length)
                events(.property(AudioFileStreamProperties.dataOffset))
                if info.audioDataPacketCount != nil { events(.property(AudioFileStreamProperties.audioDataPacketCount)) }
                if info.audioDataByteCount != nil { events(.property(AudioFileStreamProperties.audioDataByteCount)) }
                info.isReadyToProducePackets = true
                events(.property(AudioFileStreamProperties.readyToProducePackets))
                return first.length
            }
            info.dataOffset = offset
            events(.property(AudioFileStreamProperties.dataOffset))
            info.isReadyToProducePackets = true
            events(.property(AudioFileStreamProperties.readyToProducePackets))
            started = true
        }
        var descriptions: [AudioStreamPacketDescription] = []
        var payload: [UInt8] = []
        var used = 0
        while used < input.count {
            var more = false
            let rest = UnsafeRawBufferPointer(rebasing: input[used...])
            guard let next = frame(rest, needMore: &more), next.length <= rest.count else { break }
            descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(payload.count), mVariableFramesInPacket: 0,
                                                             mDataByteSize: UInt32(next.payload.count)))
            payload.append(contentsOf: rest[next.payload])
            info.maximumPacketSize = max(info.maximumPacketSize, next.payload.count)
            used += next.length
            framesSeen += 1
            bytesSeen += Int64(next.length)
        }
        if !descriptions.isEmpty {
            payload.withUnsafeBytes { raw in descriptions.withUnsafeBufferPointer { packets(raw, $0.count, $0) } }
        }
        return used
    }

    func seek(toPacket packet: Int64, info: AudioStreamInfo) throws(AudioFileError) -> (offset: Int64, estimated: Bool)? {
        let average = framesSeen > 0 ? Double(bytesSeen) / Double(framesSeen) : Double(max(1, info.maximumPacketSize))
        let bytes = (Double(packet) * average).rounded()
        guard bytes < 0x1p62, case let (offset, false) = info.dataOffset.addingReportingOverflow(Int64(bytes)) else {
            throw packetOutOfRange(packet)
        }
        return (offset, true)
    }
}

/// ADTS: raw AAC packets (headers stripped, as Core Audio's stream parser gives them), with the
/// stream's ES_Descriptor as magic cookie.
final class ADTSStreamParser: FramedStreamParser {
    private var first: ADTSHeader?

    override func frame(_ bytes: UnsafeRawBufferPointer, needMore: inout Bool) -> (length: Int, payload: Range<Int>)? {
        guard bytes.count >= 9 else {
            needMore = bytes.count < 2 || (bytes[0] == 0xFF && bytes[1] & 0xF6 == 0xF0)
            return nil
        }
        guard let header = ADTSHeader(parsing: bytes) else { return nil }
        if let first, first.sampleRateIndex != header.sampleRateIndex || first.channelConfiguration != header.channelConfiguration
            || first.objectType != header.objectType { return nil }
        return (header.frameLength, header.headerLength ..< header.frameLength)
    }

    override func start(_ bytes: UnsafeRawBufferPointer, info: AudioStreamInfo, events: (AudioStreamEvent) -> Void) throws(AudioFileError) {
        let header = ADTSHeader(parsing: bytes)!
        first = header
        let config = try header.audioSpecificConfig
        info.dataFormat = AudioStreamBasicDescription(mSampleRate: Double(header.sampleRate), mFormatID: AudioFormatValues.mpeg4AAC,
                                                      mFormatFlags: UInt32(header.objectType), mBytesPerPacket: 0, mFramesPerPacket: 1024,
                                                      mBytesPerFrame: 0, mChannelsPerFrame: UInt32(config.channelCount), mBitsPerChannel: 0, mReserved: 0)
        info.magicCookie = ElementaryStreamDescriptor(audioSpecificConfig: config).bytes
        events(.property(AudioFileStreamProperties.dataFormat))
        events(.property(AudioFileStreamProperties.magicCookieData))
    }
}

/// MP3: whole frames, headers included (an MP3 packet is its frame).
final class MP3StreamParser: FramedStreamParser {
    private var first: MP3FrameHeader?

    override func frame(_ bytes: UnsafeRawBufferPointer, needMore: inout Bool) -> (length: Int, payload: Range<Int>)? {
        guard bytes.count >= 4 else {
            needMore = bytes.count < 2 || (bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0)
            return nil
        }
        guard let header = MP3FrameHeader(bytes), first.map({ $0.matches(header) }) ?? true else { return nil }
        return (header.frameLength, 0 ..< header.frameLength)
    }

    /// LAME's and Xing's "Xing"/"Info" tag after the side information, or Fraunhofer's "VBRI"
    /// 32 bytes in: the stream's frame and byte counts, not audio (ffmpeg skips it too).
    override func isHeaderFrame(_ frame: UnsafeRawBufferPointer, info: AudioStreamInfo) -> Bool {
        guard let header = MP3FrameHeader(frame) else { return false }
        let sideInfo = header.version == 1 ? (header.channelCount == 1 ? 17 : 32) : (header.channelCount == 1 ? 9 : 17)
        let xing = 4 + sideInfo
        if frame.count >= xing + 16, ["Xing", "Info"].contains(frame.fourCC(xing)) {
            let flags = frame.be32(xing + 4)
            var cursor = xing + 8
            if flags & 1 != 0 { info.audioDataPacketCount = Int64(frame.be32(cursor)); cursor += 4 }
            if flags & 2 != 0 { info.audioDataByteCount = audioBytes(total: frame.be32(cursor), headerFrame: frame.count) }
            return true
        }
        if frame.count >= 4 + 32 + 18, frame.fourCC(36) == "VBRI" {
            info.audioDataByteCount = audioBytes(total: frame.be32(36 + 10), headerFrame: frame.count)
            info.audioDataPacketCount = Int64(frame.be32(36 + 14))
            return true
        }
        return false
    }

    /// The audio bytes after the header frame when the header counts `total` bytes with it; nil
    /// (unknown) for a count smaller than the header frame itself.
    private func audioBytes(total: UInt32, headerFrame: Int) -> Int64? {
        Int64(total) >= Int64(headerFrame) ? Int64(total) - Int64(headerFrame) : nil
    }

    override func start(_ bytes: UnsafeRawBufferPointer, info: AudioStreamInfo, events: (AudioStreamEvent) -> Void) throws(AudioFileError) {
        let header = MP3FrameHeader(bytes)!
        first = header
        info.dataFormat = AudioStreamBasicDescription(mSampleRate: Double(header.sampleRate), mFormatID: AudioFormatValues.mpegLayer3,
                                                      mFormatFlags: 0, mBytesPerPacket: 0, mFramesPerPacket: UInt32(header.framesPerPacket),
                                                      mBytesPerFrame: 0, mChannelsPerFrame: UInt32(header.channelCount), mBitsPerChannel: 0, mReserved: 0)
        info.bitRate = UInt32(header.bitRate)
        events(.property(AudioFileStreamProperties.dataFormat))
        events(.property(AudioFileStreamProperties.bitRate))
    }
}
