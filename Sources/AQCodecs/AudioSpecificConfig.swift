import AQMedia

/// MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1): the few bytes that tell an AAC
/// decoder the object type, sample rate and channel configuration.
public struct AudioSpecificConfig: Equatable, Sendable {
    /// MPEG-4 audio object type: 2 = AAC-LC (`kMPEG4Object_AAC_LC`), 5 = SBR, 29 = PS ...
    public var objectType: Int
    /// Hz.
    public var sampleRate: Int
    /// The channel configuration: 1 = mono, 2 = stereo ... 6 = 5.1, 7 = 7.1 (8 channels); 0 =
    /// the channels are listed by a program config element (PCE) after the core fields.
    public var channelConfiguration: Int
    /// With channel configuration 0: the channels the program config element lists.
    public var programChannelCount: Int?
    /// The encoded bytes (what was parsed, or the 2-byte minimum built from the fields).
    public let bytes: [UInt8]
    /// With explicit SBR signalling (object type 5, HE-AAC, or 29, HE-AAC v2, ISO/IEC 14496-3
    /// 1.6.5.2): the rate SBR decodes to, Hz; ``sampleRate`` is then the AAC core's. Nil for a
    /// config that does not signal SBR (a decoder may still find SBR data in the packets).
    public var extensionSampleRate: Int?
    /// The core's object type under an explicit SBR/PS signal (2, AAC-LC); else ``objectType``.
    public var coreObjectType: Int

    /// Whether the config signals HE-AAC (SBR) or HE-AAC v2 (SBR and parametric stereo).
    public var signalsSBR: Bool { extensionSampleRate != nil }
    public var signalsParametricStereo: Bool { objectType == 29 }
    /// What the decoder puts out: the SBR rate when signalled, else the core's (Hz).
    public var outputSampleRate: Int { extensionSampleRate ?? sampleRate }
    /// What the decoder puts out: parametric stereo makes two channels of a mono core.
    public var outputChannelCount: Int { signalsParametricStereo && channelCount == 1 ? 2 : channelCount }
    /// Frames per packet: 2048 with SBR (each 1024-frame core packet doubled), else 1024 (512
    /// for the low-delay types 23 and 39).
    public var outputFramesPerPacket: Int { signalsSBR ? 2048 : [23, 39].contains(coreObjectType) ? 512 : 1024 }

    /// The sampling-frequency table of ISO/IEC 14496-3 (index 0 ... 12).
    public static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    /// Channel configurations 1 ... 7 carry these channel counts.
    public static func channelCount(forConfiguration configuration: Int) -> Int? {
        switch configuration {
        case 1 ... 6: configuration
        case 7: 8
        default: nil
        }
    }

    public static func configuration(forChannelCount channels: Int) -> Int? {
        switch channels {
        case 1 ... 6: channels
        case 8: 7
        default: nil
        }
    }

    public var channelCount: Int {
        channelConfiguration == 0 ? programChannelCount ?? 0 : Self.channelCount(forConfiguration: channelConfiguration) ?? 0
    }

    /// The layouts aqjack codes 6 and 8 channels in: every channel full-band, no LFE (AAC's own
    /// 6- and 8-channel configurations are 5.1 and 7.1, whose fourth channel is an LFE limited to
    /// about 120 Hz: a 1107 Hz tone on it decoded 47 dB down, issue 9 item 6). A program config
    /// element names them: 6 channels as FFmpeg's 6.0 (front: a pair and a centre; side: a pair;
    /// back: a centre), 8 as its octagonal (front: a pair and a centre; side: a pair; back: a pair
    /// and a centre), element for element what FFmpeg's encoder writes for those layouts.
    /// Each element: (is a channel pair, tag).
    static func programLayout(forChannelCount channels: Int) -> (front: [(Bool, Int)], side: [(Bool, Int)], back: [(Bool, Int)])? {
        switch channels {
        case 6: ([(true, 0), (false, 0)], [(true, 1)], [(false, 1)])
        case 8: ([(true, 0), (false, 0)], [(true, 1)], [(true, 2), (false, 1)])
        default: nil
        }
    }

    /// Builds the config for an object type, a rate from the table and 1–6 or 8 channels: the
    /// two-byte form for 1–5 channels, the program-config form (``programLayout(forChannelCount:)``)
    /// for 6 and 8.
    public init(objectType: Int, sampleRate: Int, channelCount: Int) throws(AudioFileError) {
        guard Self.configuration(forChannelCount: channelCount) != nil else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "AAC with \(channelCount) channels: expected 1 ... 6 or 8 channels")
        }
        try self.init(objectType: objectType, sampleRate: sampleRate,
                      channelConfiguration: Self.programLayout(forChannelCount: channelCount) == nil ? Self.configuration(forChannelCount: channelCount)! : 0,
                      programChannelCount: channelCount)
    }

    /// Builds the config with an explicit channel configuration (an ADTS header's): 1 ... 7 as
    /// it is, 0 with the program layout of `programChannelCount` channels.
    public init(objectType: Int, sampleRate: Int, channelConfiguration configuration: Int, programChannelCount: Int? = nil) throws(AudioFileError) {
        guard let rateIndex = Self.sampleRates.firstIndex(of: sampleRate) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "AAC sample rate \(sampleRate) Hz is not one of MPEG-4's: \(Self.sampleRates.map(String.init).joined(separator: ", "))")
        }
        guard (1 ... 30).contains(objectType) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "MPEG-4 audio object type \(objectType): expected 1 ... 30")
        }
        var writer = BitWriter()
        // 5 bits object type, 4 bits rate index, 4 bits channels, 3 bits GASpecificConfig (all 0).
        writer.write(objectType, 5)
        writer.write(rateIndex, 4)
        if configuration == 0 {
            guard let channels = programChannelCount, let layout = Self.programLayout(forChannelCount: channels) else {
                throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                       "AAC channel configuration 0 is written for 6 or 8 channels here; asked for \(programChannelCount.map(String.init) ?? "none")")
            }
            writer.write(0, 4)
            writer.write(0, 3)
            // program_config_element (ISO/IEC 14496-3 4.4.1.1): tag 0, object type (profile) =
            // object type - 1, the rate index, the element counts, no LFE/assoc/CC, no mixdowns.
            writer.write(0, 4)
            writer.write(objectType - 1, 2)
            writer.write(rateIndex, 4)
            writer.write(layout.front.count, 4)
            writer.write(layout.side.count, 4)
            writer.write(layout.back.count, 4)
            writer.write(0, 2)
            writer.write(0, 3)
            writer.write(0, 4)
            writer.write(0, 3)
            for (isPair, tag) in layout.front + layout.side + layout.back {
                writer.write(isPair ? 1 : 0, 1)
                writer.write(tag, 4)
            }
            writer.alignToByte()
            writer.write(0, 8)   // no comment
            self.programChannelCount = channels
        } else {
            guard Self.channelCount(forConfiguration: configuration) != nil else {
                throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "AAC channel configuration \(configuration): expected 0 ... 7")
            }
            writer.write(configuration, 4)
            writer.write(0, 3)
            self.programChannelCount = nil
        }
        self.objectType = objectType
        self.sampleRate = sampleRate
        channelConfiguration = configuration
        coreObjectType = objectType
        bytes = writer.bytes
    }

    /// Parses a config (at least 2 bytes); extensions after the core fields are kept in `bytes`.
    public init(parsing data: [UInt8]) throws(AudioFileError) {
        var reader = BitReader(data)
        guard data.count >= 2, var objectType = reader.read(5) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "AudioSpecificConfig of \(data.count) bytes: expected at least 2")
        }
        if objectType == 31, let extended = reader.read(6) { objectType = 32 + extended }
        guard let rateIndex = reader.read(4) else { throw Self.truncated(data) }
        var rate: Int
        if rateIndex == 15 {
            guard let explicit = reader.read(24) else { throw Self.truncated(data) }
            rate = explicit
        } else {
            guard rateIndex < Self.sampleRates.count else {
                throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                       "AudioSpecificConfig sampling-frequency index \(rateIndex): expected 0 ... 12 or 15")
            }
            rate = Self.sampleRates[rateIndex]
        }
        guard let configuration = reader.read(4) else { throw Self.truncated(data) }
        guard objectType != 0, rate > 0 else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "AudioSpecificConfig with object type 0 or rate 0")
        }
        if rate == 0 { rate = 44100 }
        self.objectType = objectType
        sampleRate = rate
        channelConfiguration = configuration
        coreObjectType = objectType
        if objectType == 5 || objectType == 29 {
            // Hierarchical signalling: the SBR rate, then the core's object type.
            guard let extensionIndex = reader.read(4) else { throw Self.truncated(data) }
            let extensionRate = extensionIndex == 15 ? reader.read(24) : extensionIndex < Self.sampleRates.count ? Self.sampleRates[extensionIndex] : nil
            guard let extensionRate, extensionRate > 0, var core = reader.read(5) else {
                throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                     "AudioSpecificConfig of object type \(objectType) (SBR) with extension sampling-frequency index \(extensionIndex): expected 0 ... 12 or 15 and a core object type")
            }
            if core == 31, let extended = reader.read(6) { core = 32 + extended }
            extensionSampleRate = extensionRate
            coreObjectType = core
        }
        programChannelCount = configuration == 0 ? Self.programChannelCount(after: &reader, objectType: coreObjectType) : nil
        bytes = data
    }

    /// The config that decodes the AAC core alone, as Apple's 'aac ' decoder does (the base
    /// layer of ``PacketDecoders/formatList(_:cookie:)``): the core's object type and rate with
    /// a sync extension saying SBR is not present, so a decoder skips SBR data in the packets
    /// rather than doubling the rate mid-stream. Configs with a program config element stay as
    /// they are.
    public var coreOnlyBytes: [UInt8] {
        guard channelConfiguration != 0, coreObjectType == 2, let rateIndex = Self.sampleRates.firstIndex(of: sampleRate) else { return bytes }
        var writer = BitWriter()
        writer.write(2, 5)
        writer.write(rateIndex, 4)
        writer.write(channelConfiguration, 4)
        writer.write(0, 3)          // GASpecificConfig: 1024 frames, no core coder, no extension
        writer.write(0x2B7, 11)     // syncExtensionType
        writer.write(5, 5)          // extensionAudioObjectType: SBR
        writer.write(0, 1)          // sbrPresentFlag: no
        return writer.bytes
    }

    /// An explicitly signalled HE-AAC (object type 5) or HE-AAC v2 (29) config over an AAC-LC
    /// core of `coreRate` and `channelCount` channels (1 for v2), decoding to `outputRate`.
    public init(highEfficiency objectType: Int, coreRate: Int, outputRate: Int, channelCount: Int) throws(AudioFileError) {
        guard objectType == 5 || objectType == 29, let core = Self.sampleRates.firstIndex(of: coreRate),
              let output = Self.sampleRates.firstIndex(of: outputRate), let configuration = Self.configuration(forChannelCount: channelCount),
              channelCount <= 5, objectType == 5 || channelCount == 1 else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                 "HE-AAC object type \(objectType), core \(coreRate) Hz, output \(outputRate) Hz, \(channelCount) channels: expected 5 or 29, table rates, 1 ... 5 channels (1 for 29)")
        }
        var writer = BitWriter()
        writer.write(objectType, 5)
        writer.write(core, 4)
        writer.write(configuration, 4)
        writer.write(output, 4)
        writer.write(2, 5)          // the AAC-LC core
        writer.write(0, 3)          // GASpecificConfig: 1024 frames, no core coder, no extension
        self.objectType = objectType
        sampleRate = coreRate
        channelConfiguration = configuration
        extensionSampleRate = outputRate
        coreObjectType = 2
        bytes = writer.bytes
    }

    /// Reads a GASpecificConfig and the program config element after it (ISO/IEC 14496-3
    /// 4.4.1.1) and counts the channels it lists (a pair counts 2, LFEs 1); nil when the object
    /// type has no GASpecificConfig or the bits run out.
    private static func programChannelCount(after reader: inout BitReader, objectType: Int) -> Int? {
        guard [1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23].contains(objectType) else { return nil }
        guard reader.read(1) != nil, let dependsOnCore = reader.read(1) else { return nil }   // frameLengthFlag
        if dependsOnCore == 1 { guard reader.read(14) != nil else { return nil } }
        guard reader.read(1) != nil else { return nil }                                      // extensionFlag
        guard reader.read(4) != nil, reader.read(2) != nil, reader.read(4) != nil,           // tag, profile, rate
              let front = reader.read(4), let side = reader.read(4), let back = reader.read(4),
              let lfe = reader.read(2), reader.read(3) != nil, reader.read(4) != nil else { return nil }
        for width in [4, 4, 3] {                                                               // mixdowns
            guard let present = reader.read(1) else { return nil }
            if present == 1 { guard reader.read(width) != nil else { return nil } }
        }
        var channels = lfe
        for _ in 0 ..< front + side + back {
            guard let isPair = reader.read(1), reader.read(4) != nil else { return nil }
            channels += isPair == 1 ? 2 : 1
        }
        return channels > 0 ? channels : nil
    }

    private static func truncated(_ data: [UInt8]) -> AudioFileError {
        AudioFileError(AudioFileError.unsupportedDataFormatCode, "AudioSpecificConfig of \(data.count) bytes is truncated")
    }
}

/// Writes big-endian bit fields.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var bitCount = 0

    mutating func write(_ value: Int, _ count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            if bitCount % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(bitCount % 8) }
            bitCount += 1
        }
    }

    mutating func alignToByte() { bitCount = (bitCount + 7) / 8 * 8 }
}

/// Reads big-endian bit fields; `nil` past the end.
struct BitReader {
    private let data: [UInt8]
    private var bitPosition = 0
    init(_ data: [UInt8]) { self.data = data }

    mutating func read(_ count: Int) -> Int? {
        guard bitPosition + count <= data.count * 8 else { return nil }
        var value = 0
        for _ in 0 ..< count {
            let byte = data[bitPosition >> 3]
            value = value << 1 | Int(byte >> (7 - UInt8(bitPosition & 7)) & 1)
            bitPosition += 1
        }
        return value
    }
}
