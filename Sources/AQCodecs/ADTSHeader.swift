import AQMedia

/// The 7-byte ADTS header (ISO/IEC 13818-7 6.2) that frames each raw AAC packet in an `.aac`
/// file (`kAudioFileAAC_ADTSType`). Seed 002: "ADTS headers are needed when writing raw AAC to
/// a file". Written without CRC; parsed with or without (9 bytes with CRC).
public struct ADTSHeader: Equatable, Sendable {
    public static let byteCount = 7
    /// MPEG-4 audio object type (ADTS carries 1 ... 4; AAC-LC = 2).
    public var objectType: Int
    public var sampleRateIndex: Int
    public var channelConfiguration: Int
    /// The whole frame: header plus payload, bytes.
    public var frameLength: Int
    /// 7, or 9 when a CRC follows the fixed header.
    public var headerLength: Int

    public var sampleRate: Int { AudioSpecificConfig.sampleRates[sampleRateIndex] }
    public var payloadLength: Int { frameLength - headerLength }

    /// A header for a payload of `payloadLength` bytes in the stream `config` describes.
    public init(config: AudioSpecificConfig, payloadLength: Int) throws(AudioFileError) {
        guard (1 ... 4).contains(config.objectType) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "ADTS carries AAC object types 1 ... 4; this stream is type \(config.objectType)")
        }
        guard let index = AudioSpecificConfig.sampleRates.firstIndex(of: config.sampleRate) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "ADTS cannot carry a rate of \(config.sampleRate) Hz")
        }
        guard payloadLength + Self.byteCount < 1 << 13 else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "AAC packet of \(payloadLength) bytes is too long for an ADTS frame (8184 at most)")
        }
        objectType = config.objectType
        sampleRateIndex = index
        channelConfiguration = config.channelConfiguration
        frameLength = payloadLength + Self.byteCount
        headerLength = Self.byteCount
    }

    /// Parses a header at the start of `bytes` (at least 7 bytes); nil when there is no valid
    /// sync word, layer, rate index or length.
    public init?(parsing bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 7, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else { return nil }
        let protectionAbsent = bytes[1] & 1 == 1
        objectType = Int(bytes[2] >> 6) + 1
        sampleRateIndex = Int(bytes[2] >> 2 & 0x0F)
        channelConfiguration = Int(bytes[2] & 1) << 2 | Int(bytes[3] >> 6)
        frameLength = Int(bytes[3] & 3) << 11 | Int(bytes[4]) << 3 | Int(bytes[5] >> 5)
        headerLength = protectionAbsent ? 7 : 9
        guard sampleRateIndex < AudioSpecificConfig.sampleRates.count, frameLength > headerLength,
              bytes[6] & 3 == 0 else { return nil }   // one raw data block per frame
    }

    /// The 7 header bytes (MPEG-4 ID, layer 0, no CRC, buffer fullness 0x7FF = VBR).
    public var bytes: [UInt8] {
        [0xFF, 0xF1,
         UInt8((objectType - 1) << 6 | sampleRateIndex << 2 | channelConfiguration >> 2),
         UInt8((channelConfiguration & 3) << 6 | frameLength >> 11),
         UInt8(frameLength >> 3 & 0xFF),
         UInt8((frameLength & 7) << 5 | 0x1F),
         0xFC]
    }

    /// The stream's config as the header describes it.
    public var audioSpecificConfig: AudioSpecificConfig {
        get throws(AudioFileError) {
            // The header's own configuration (5.1 stays 5.1); ADTS has no program config element here.
            try AudioSpecificConfig(objectType: objectType, sampleRate: sampleRate, channelConfiguration: channelConfiguration)
        }
    }
}
