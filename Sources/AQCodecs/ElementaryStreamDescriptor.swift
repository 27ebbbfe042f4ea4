import AQMedia

/// The MPEG-4 ES_Descriptor (ISO/IEC 14496-1 7.2.6.5) that Core Audio uses as the magic cookie
/// of AAC (`kAudioFormatMPEG4AAC`): the same bytes travel unchanged between the queue's
/// `kAudioQueueProperty_MagicCookie`, the converter's `CompressionMagicCookie`, a CAF file's
/// `kuki` chunk and (after a 4-byte version/flags field) an MP4 `esds` box; this is what
/// `kAudioFormatProperty_ASBDFromESDS` reads.
///
/// Layout written (Apple's style, each length in the 4-byte 0x80-continued form):
/// `03 len ES_ID(2) flags(1)` · `04 len objectType(0x40) streamType(0x15) bufferSizeDB(3)
/// maxBitrate(4) avgBitrate(4)` · `05 len AudioSpecificConfig` · `06 len 02`.
public struct ElementaryStreamDescriptor: Equatable, Sendable {
    public var audioSpecificConfig: AudioSpecificConfig
    /// Bits per second (0 when unknown).
    public var averageBitRate: UInt32
    public var maximumBitRate: UInt32
    /// Bytes: the decoder's input buffer size (largest packet).
    public var bufferSize: UInt32

    public init(audioSpecificConfig: AudioSpecificConfig, averageBitRate: UInt32 = 0, maximumBitRate: UInt32 = 0, bufferSize: UInt32 = 0) {
        self.audioSpecificConfig = audioSpecificConfig
        self.averageBitRate = averageBitRate
        self.maximumBitRate = maximumBitRate
        self.bufferSize = bufferSize
    }

    /// The ES_Descriptor bytes (the magic cookie).
    public var bytes: [UInt8] {
        let config = audioSpecificConfig.bytes
        var decoderConfig: [UInt8] = [0x40, 0x15]
        decoderConfig += Self.bigEndian(bufferSize, byteCount: 3)
        decoderConfig += Self.bigEndian(maximumBitRate, byteCount: 4) + Self.bigEndian(averageBitRate, byteCount: 4)
        decoderConfig += Self.descriptor(tag: 0x05, config)
        var body: [UInt8] = [0, 0, 0]   // ES_ID 0, no dependency, URL or OCR stream
        body += Self.descriptor(tag: 0x04, decoderConfig)
        body += Self.descriptor(tag: 0x06, [0x02])   // SLConfigDescriptor: predefined MP4
        return Self.descriptor(tag: 0x03, body)
    }

    /// Parses an ES_Descriptor; also accepts an `esds` box payload (4 bytes of version/flags
    /// first) and a bare AudioSpecificConfig as FFmpeg produces, so any cookie a user has works.
    ///
    /// - Throws: `kAudioFormatUnsupportedDataFormatError` ('fmt?') naming what is missing.
    public init(parsing data: [UInt8]) throws(AudioFileError) {
        var start = 0
        if data.count > 4, data[0] == 0, data[1] == 0, data[2] == 0, data[3] == 0, data.count > 4 && data[4] == 0x03 { start = 4 }
        guard data.count > start, data[start] == 0x03 else {
            // Not a descriptor: a bare AudioSpecificConfig (FFmpeg's extradata) is accepted.
            self.init(audioSpecificConfig: try AudioSpecificConfig(parsing: data))
            return
        }
        var cursor = DescriptorCursor(data: data, position: start)
        guard let esBody = cursor.enter(tag: 0x03) else { throw Self.malformed("ES_Descriptor (tag 0x03)", data) }
        var inner = DescriptorCursor(data: data, position: esBody.lowerBound, end: esBody.upperBound)
        guard let flags = inner.skipESHeader() else { throw Self.malformed("ES_Descriptor header", data) }
        _ = flags
        guard let decoderBody = inner.find(tag: 0x04) else { throw Self.malformed("DecoderConfigDescriptor (tag 0x04)", data) }
        guard decoderBody.count >= 13 else { throw Self.malformed("DecoderConfigDescriptor of \(decoderBody.count) bytes", data) }
        let d = decoderBody.lowerBound
        guard data[d] == 0x40 || data[d] == 0x66 || data[d] == 0x67 || data[d] == 0x68 else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "ES_Descriptor objectTypeIndication 0x\(String(data[d], radix: 16)): expected 0x40 (MPEG-4 audio) or 0x66–0x68 (MPEG-2 AAC)")
        }
        func word(_ at: Int, _ count: Int) -> UInt32 { (0 ..< count).reduce(0) { $0 << 8 | UInt32(data[at + $1]) } }
        var decoder = DescriptorCursor(data: data, position: d + 13, end: decoderBody.upperBound)
        guard let specific = decoder.find(tag: 0x05) else { throw Self.malformed("DecoderSpecificInfo (tag 0x05)", data) }
        let config = try AudioSpecificConfig(parsing: Array(data[specific]))
        self.init(audioSpecificConfig: config, averageBitRate: word(d + 9, 4), maximumBitRate: word(d + 5, 4), bufferSize: word(d + 2, 3))
    }

    /// The objectTypeIndication of an ES_Descriptor (or `esds` payload): 0x40 MPEG-4 audio,
    /// 0x66-0x68 MPEG-2 AAC, 0x69 MPEG-2 audio (Layer III at half rates), 0x6B MPEG-1 audio;
    /// nil when `data` is no descriptor.
    static func objectType(in data: [UInt8]) -> UInt8? {
        let start = data.count > 4 && data[0 ..< 4].allSatisfy({ $0 == 0 }) && data[4] == 0x03 ? 4 : 0
        guard data.count > start, data[start] == 0x03 else { return nil }
        var cursor = DescriptorCursor(data: data, position: start)
        guard let esBody = cursor.enter(tag: 0x03) else { return nil }
        var inner = DescriptorCursor(data: data, position: esBody.lowerBound, end: esBody.upperBound)
        guard inner.skipESHeader() != nil, let decoderBody = inner.find(tag: 0x04), !decoderBody.isEmpty else { return nil }
        return data[decoderBody.lowerBound]
    }

    private static func malformed(_ what: String, _ data: [UInt8]) -> AudioFileError {
        AudioFileError(AudioFileError.unsupportedDataFormatCode,
                         "AAC magic cookie of \(data.count) bytes has no valid \(what); expected an MPEG-4 ES_Descriptor")
    }

    static func descriptor(tag: UInt8, _ body: [UInt8]) -> [UInt8] {
        let length = UInt32(body.count)
        return [tag, 0x80 | UInt8(length >> 21 & 0x7F), 0x80 | UInt8(length >> 14 & 0x7F), 0x80 | UInt8(length >> 7 & 0x7F),
                UInt8(length & 0x7F)] + body
    }

    static func bigEndian(_ value: UInt32, byteCount: Int) -> [UInt8] {
        (0 ..< byteCount).map { UInt8(truncatingIfNeeded: value >> UInt32(8 * (byteCount - 1 - $0))) }
    }
}

/// Walks tag/length descriptors inside bounds; never reads past them.
private struct DescriptorCursor {
    let data: [UInt8]
    var position: Int
    let end: Int

    init(data: [UInt8], position: Int, end: Int? = nil) {
        self.data = data
        self.position = position
        self.end = min(end ?? data.count, data.count)
    }

    /// Reads the descriptor at the cursor if it has `tag`; returns its body's range and moves past it.
    mutating func enter(tag: UInt8) -> Range<Int>? {
        guard position < end, data[position] == tag else { return nil }
        return next()?.body
    }

    /// Reads one descriptor: tag and body range, moving past it.
    mutating func next() -> (tag: UInt8, body: Range<Int>)? {
        guard position < end else { return nil }
        let tag = data[position]
        var cursor = position + 1
        var length = 0
        for _ in 0 ..< 4 {
            guard cursor < end else { return nil }
            let byte = data[cursor]
            cursor += 1
            length = length << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 { break }
        }
        guard length <= end - cursor else { return nil }
        position = cursor + length
        return (tag, cursor ..< cursor + length)
    }

    /// Skips descriptors until one with `tag`.
    mutating func find(tag: UInt8) -> Range<Int>? {
        while let item = next() {
            if item.tag == tag { return item.body }
        }
        return nil
    }

    /// Skips ES_ID and the optional fields its flags announce; returns the flags.
    mutating func skipESHeader() -> UInt8? {
        guard end - position >= 3 else { return nil }
        let flags = data[position + 2]
        position += 3
        if flags & 0x80 != 0 { position += 2 }   // dependsOn_ES_ID
        if flags & 0x40 != 0 {                   // URL
            guard position < end else { return nil }
            position += 1 + Int(data[position])
        }
        if flags & 0x20 != 0 { position += 2 }   // OCR_ES_Id
        return position <= end ? flags : nil
    }
}
