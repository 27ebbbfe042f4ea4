import AQMedia

/// MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1): the few bytes that tell an AAC
/// decoder the object type, sample rate and channel configuration.
public struct AudioSpecificConfig: Equatable, Sendable {
    /// MPEG-4 audio object type: 2 = AAC-LC (`kMPEG4Object_AAC_LC`), 5 = SBR, 29 = PS ...
    public var objectType: Int
    /// Hz.
    public var sampleRate: Int
    /// The channel configuration: 1 = mono, 2 = stereo ... 7 = 7.1 (8 channels); 0 = in-band
    /// program config element (not supported here).
    public var channelConfiguration: Int
    /// The encoded bytes (what was parsed, or the 2-byte minimum built from the fields).
    public let bytes: [UInt8]

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

    public var channelCount: Int { Self.channelCount(forConfiguration: channelConfiguration) ?? 0 }

    /// Builds the two-byte config for an object type, a rate from the table and 1–6 or 8 channels.
    public init(objectType: Int, sampleRate: Int, channelCount: Int) throws(AudioStatusError) {
        guard let rateIndex = Self.sampleRates.firstIndex(of: sampleRate) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
                                   "AAC sample rate \(sampleRate) Hz is not one of MPEG-4's: \(Self.sampleRates.map(String.init).joined(separator: ", "))")
        }
        guard let configuration = Self.configuration(forChannelCount: channelCount) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
                                   "AAC with \(channelCount) channels: expected 1 ... 6 or 8 channels")
        }
        guard (1 ... 30).contains(objectType) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "MPEG-4 audio object type \(objectType): expected 1 ... 30")
        }
        self.objectType = objectType
        self.sampleRate = sampleRate
        channelConfiguration = configuration
        // 5 bits object type, 4 bits rate index, 4 bits channels, 3 bits GASpecificConfig (all 0).
        let bits = UInt16(objectType) << 11 | UInt16(rateIndex) << 7 | UInt16(configuration) << 3
        bytes = [UInt8(bits >> 8), UInt8(bits & 0xFF)]
    }

    /// Parses a config (at least 2 bytes); extensions after the core fields are kept in `bytes`.
    public init(parsing data: [UInt8]) throws(AudioStatusError) {
        var reader = BitReader(data)
        guard data.count >= 2, var objectType = reader.read(5) else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
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
                throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode,
                                       "AudioSpecificConfig sampling-frequency index \(rateIndex): expected 0 ... 12 or 15")
            }
            rate = Self.sampleRates[rateIndex]
        }
        guard let configuration = reader.read(4) else { throw Self.truncated(data) }
        guard objectType != 0, rate > 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "AudioSpecificConfig with object type 0 or rate 0")
        }
        if rate == 0 { rate = 44100 }
        self.objectType = objectType
        sampleRate = rate
        channelConfiguration = configuration
        bytes = data
    }

    private static func truncated(_ data: [UInt8]) -> AudioStatusError {
        AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "AudioSpecificConfig of \(data.count) bytes is truncated")
    }
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
