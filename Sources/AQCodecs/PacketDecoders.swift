import AQCore
import AQMedia
import CAudioTypes
import CFFmpeg

/// The compressed formats aqjack decodes (playback queues, `AudioConverter`, AudioFile reading,
/// `kAudioFormatProperty_DecodeFormatIDs`) and the rules for each: which format IDs, how many
/// frames a packet holds, what the magic cookie must be, and which decoder plays it. The one
/// place that list lives; every caller asks here.
public enum PacketDecoders {
    /// Format IDs decoded besides linear PCM, in the order `DecodeFormatIDs` lists them: the
    /// AAC family (LC, HE, HE v2, LD, ELD), Apple Lossless, MPEG Layer I/II/III, FLAC, Opus,
    /// AC-3 and E-AC-3. libavcodec decodes them all (Debian's build has every decoder).
    public static let formatIDs: [UInt32] = [
        AudioFormatValues.mpeg4AAC, AudioFormatValues.mpeg4AACHighEfficiency, AudioFormatValues.mpeg4AACHighEfficiencyV2,
        AudioFormatValues.mpeg4AACLowDelay, AudioFormatValues.mpeg4AACEnhancedLowDelay, AudioFormatValues.appleLossless,
        AudioFormatValues.mpegLayer1, AudioFormatValues.mpegLayer2, AudioFormatValues.mpegLayer3,
        AudioFormatValues.flac, AudioFormatValues.opus, AudioFormatValues.ac3, AudioFormatValues.enhancedAC3,
    ]

    /// The AAC family: one decoder, an AudioSpecificConfig for the cookie.
    public static let aacFamily: Set<UInt32> = [AudioFormatValues.mpeg4AAC, AudioFormatValues.mpeg4AACHighEfficiency, AudioFormatValues.mpeg4AACHighEfficiencyV2,
                                                AudioFormatValues.mpeg4AACLowDelay, AudioFormatValues.mpeg4AACEnhancedLowDelay]

    public static func decodes(_ formatID: UInt32) -> Bool { formatIDs.contains(formatID) }

    /// Whether packets of `formatID` carry all their decoder needs in their own headers (MPEG
    /// audio, AC-3, E-AC-3), so a magic cookie is ignored.
    public static func ignoresCookie(_ formatID: UInt32) -> Bool {
        [AudioFormatValues.mpegLayer1, AudioFormatValues.mpegLayer2, AudioFormatValues.mpegLayer3,
         AudioFormatValues.ac3, AudioFormatValues.enhancedAC3].contains(formatID)
    }

    /// The frames at a stream's start that the decoder for `formatID` with `cookie` drops itself:
    /// an Opus stream's pre-skip (the OpusHead's bytes 10-11, little-endian), which libavcodec's
    /// decoder leaves out of its output; 0 for every other format, whose decoders give every
    /// frame (a file's priming then trims them). A file reader subtracts these from its priming
    /// so that the packet table describes the frames the converter gives.
    public static func framesSkippedByDecoder(_ formatID: UInt32, cookie: [UInt8]) -> Int {
        guard formatID == AudioFormatValues.opus, cookie.count >= 12, cookie.starts(with: Array("OpusHead".utf8)) else { return 0 }
        return Int(cookie[10]) | Int(cookie[11]) << 8
    }

    /// The frames one packet of `formatID` decodes to, as Apple's FormatInfo gives them (0: it
    /// varies and the stream says); nil for a format not decoded here.
    public static func framesPerPacket(_ formatID: UInt32) -> UInt32? {
        switch formatID {
        case AudioFormatValues.mpeg4AAC: 1024
        case AudioFormatValues.mpeg4AACHighEfficiency, AudioFormatValues.mpeg4AACHighEfficiencyV2: 2048
        case AudioFormatValues.mpeg4AACLowDelay, AudioFormatValues.mpeg4AACEnhancedLowDelay: 512
        case AudioFormatValues.appleLossless, AudioFormatValues.flac: 4096
        case AudioFormatValues.mpegLayer1: 384
        case AudioFormatValues.mpegLayer2, AudioFormatValues.mpegLayer3: 1152
        case AudioFormatValues.opus: 960
        case AudioFormatValues.ac3, AudioFormatValues.enhancedAC3: 1536
        default: nil
        }
    }

    /// What a format may carry: the most channels and the rates, to refuse a description no
    /// stream of it can have before a decoder is opened.
    static func limits(_ formatID: UInt32) -> (channels: ClosedRange<UInt32>, maxRate: Double) {
        switch formatID {
        case AudioFormatValues.mpegLayer1, AudioFormatValues.mpegLayer2, AudioFormatValues.mpegLayer3: (1 ... 2, 48000)
        case AudioFormatValues.mpeg4AACHighEfficiencyV2: (2 ... 2, 96000)
        case AudioFormatValues.opus: (1 ... 255, 48000)
        case AudioFormatValues.ac3, AudioFormatValues.enhancedAC3: (1 ... 8, 48000)
        case AudioFormatValues.appleLossless, AudioFormatValues.flac: (1 ... 8, 1_536_000)
        default: (1 ... 8, 96000)
        }
    }

    /// Checks a description to decode: a rate and channel count the format can have.
    ///
    /// - Throws: 'fmt?' naming the format and what it needs.
    public static func check(_ format: AudioStreamBasicDescription) throws(AudioFileError) {
        guard decodes(format.mFormatID) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                 "format \(fourCharacterCode(format.mFormatID)) is not decoded here; expected one of " + formatIDs.map(fourCharacterCode).joined(separator: ", "))
        }
        let (channels, maxRate) = limits(format.mFormatID)
        guard format.mSampleRate.isFinite, format.mSampleRate > 0, format.mSampleRate <= maxRate, channels.contains(format.mChannelsPerFrame) else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                 "\(fourCharacterCode(format.mFormatID)) playback needs the stream's rate (up to \(Int(maxRate)) Hz) and \(channels.lowerBound) ... \(channels.upperBound) channels; got \(format.mSampleRate) Hz, \(format.mChannelsPerFrame) channels")
        }
    }

    /// `format` completed as Apple's FormatInfo completes a compressed description: its frames
    /// per packet when 0, variable bytes per packet, no bytes per frame or bits.
    public static func completed(_ format: AudioStreamBasicDescription) -> AudioStreamBasicDescription {
        var completed = format
        if completed.mFramesPerPacket == 0 { completed.mFramesPerPacket = framesPerPacket(format.mFormatID) ?? 0 }
        completed.mBytesPerPacket = 0
        completed.mBytesPerFrame = 0
        completed.mBitsPerChannel = 0
        return completed
    }

    /// The AudioSpecificConfig an AAC-family description decodes with: the cookie's (an
    /// ES_Descriptor, an 'esds' payload or a bare config) or, without one, the one the
    /// description implies (AAC-LC, or HE-AAC/HE-AAC v2 at half the rate). LD and ELD need
    /// their cookie.
    public static func aacConfig(_ format: AudioStreamBasicDescription, cookie: [UInt8]) throws(AudioFileError) -> AudioSpecificConfig {
        if !cookie.isEmpty { return try ElementaryStreamDescriptor(parsing: cookie).audioSpecificConfig }
        let rate = Int(format.mSampleRate), channels = Int(format.mChannelsPerFrame)
        switch format.mFormatID {
        case AudioFormatValues.mpeg4AAC:
            return try AudioSpecificConfig(objectType: Int(format.mFormatFlags == 0 ? AudioFormatValues.aacLowComplexity : format.mFormatFlags), sampleRate: rate, channelCount: channels)
        case AudioFormatValues.mpeg4AACHighEfficiency:
            return try AudioSpecificConfig(highEfficiency: 5, coreRate: rate / 2, outputRate: rate, channelCount: channels)
        case AudioFormatValues.mpeg4AACHighEfficiencyV2:
            return try AudioSpecificConfig(highEfficiency: 29, coreRate: rate / 2, outputRate: rate, channelCount: 1)
        default:
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                 "\(fourCharacterCode(format.mFormatID)) needs its magic cookie (the stream's AudioSpecificConfig)")
        }
    }

    /// The decoder for packets of `format` (checked with ``check(_:)``) with its magic cookie.
    /// 'aac ' decodes the AAC core alone (SBR data skipped), as Apple's; 'aach' and 'aacp'
    /// decode SBR and parametric stereo. The decoder's output must have `format`'s channels.
    ///
    /// - Throws: 'fmt?' naming what is wrong with the cookie or the description.
    public static func decoder(for format: AudioStreamBasicDescription, cookie: [UInt8]) throws(AudioConverterError) -> any PacketDecoding {
        try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try check(format) }
        let rate = Int(format.mSampleRate), channels = Int(format.mChannelsPerFrame)
        switch format.mFormatID {
        case _ where aacFamily.contains(format.mFormatID):
            let config = try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try aacConfig(format, cookie: cookie) }
            if format.mFormatID == AudioFormatValues.mpeg4AAC {
                let core = try inDomain(AudioConverterError.self) { () throws(AudioFileError) in try AudioSpecificConfig(parsing: config.coreOnlyBytes) }
                return try AACDecoder(config: core, expectedChannelCount: channels)
            }
            return try AACDecoder(config: config, expectedChannelCount: channels)
        case AudioFormatValues.appleLossless:
            guard !cookie.isEmpty else {
                throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "Apple Lossless input needs its magic cookie (the ALACSpecificConfig)")
            }
            return try ALACDecoder(cookie: cookie, sampleRate: rate, channelCount: channels)
        case AudioFormatValues.mpegLayer1, AudioFormatValues.mpegLayer2, AudioFormatValues.mpegLayer3:
            let layer = format.mFormatID == AudioFormatValues.mpegLayer1 ? 1 : format.mFormatID == AudioFormatValues.mpegLayer2 ? 2 : 3
            return try LibavPacketDecoder(name: "MPEG Layer \(layer)", codecID: layer == 1 ? AV_CODEC_ID_MP1 : layer == 2 ? AV_CODEC_ID_MP2 : AV_CODEC_ID_MP3,
                                          extradata: [], sampleRate: rate, channelCount: channels)
        case AudioFormatValues.flac:
            return try LibavPacketDecoder(name: "FLAC", codecID: AV_CODEC_ID_FLAC, extradata: try flacStreamInfo(cookie), sampleRate: rate, channelCount: channels)
        case AudioFormatValues.opus:
            guard cookie.isEmpty || cookie.starts(with: Array("OpusHead".utf8)) else {
                throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                          "Opus magic cookie of \(cookie.count) bytes: expected none or an OpusHead header (RFC 7845 5.1)")
            }
            return try LibavPacketDecoder(name: "Opus", codecID: AV_CODEC_ID_OPUS, extradata: cookie, sampleRate: rate, channelCount: channels)
        default:
            let enhanced = format.mFormatID == AudioFormatValues.enhancedAC3
            return try LibavPacketDecoder(name: enhanced ? "E-AC-3" : "AC-3", codecID: enhanced ? AV_CODEC_ID_EAC3 : AV_CODEC_ID_AC3,
                                          extradata: [], sampleRate: rate, channelCount: channels)
        }
    }

    /// Checks a magic cookie for `format` as a queue's `kAudioQueueProperty_MagicCookie` takes
    /// it: opens the decoder it makes (and drops it).
    public static func checkCookie(_ cookie: [UInt8], for format: AudioStreamBasicDescription) throws(AudioConverterError) {
        _ = try decoder(for: format, cookie: cookie)
    }

    /// The FLAC STREAMINFO (34 bytes) in a cookie: bare, after a metadata block header, after
    /// "fLaC", or in the 'dfLa' box payload (version and flags, then metadata blocks) that
    /// MPEG-4 and Apple's CAF carry; none when the cookie is empty (the frames' headers say
    /// enough).
    static func flacStreamInfo(_ cookie: [UInt8]) throws(AudioConverterError) -> [UInt8] {
        if cookie.isEmpty || cookie.count == 34 { return cookie }
        for skip in [4, 8] where cookie.count >= skip + 34 {
            // A metadata block header (type 0 = STREAMINFO, length 34) at skip - 4.
            let header = cookie[(skip - 4) ..< skip]
            if header.first.map({ $0 & 0x7F }) == 0, Array(header.dropFirst()) == [0, 0, 34] { return Array(cookie[skip ..< skip + 34]) }
        }
        throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode,
                                  "FLAC magic cookie of \(cookie.count) bytes: expected none, STREAMINFO (34 bytes), a STREAMINFO block or a 'dfLa' payload")
    }

    /// The formats a stream of `format` with `cookie` decodes to, richest first, as Apple's
    /// `kAudioFormatProperty_FormatList` and the file and stream `FormatList` properties list
    /// them: an explicitly signalled HE-AAC v2 stream as 'aacp', 'aach' and its 'aac ' core; HE-AAC as
    /// 'aach' and 'aac '; anything else as itself.
    public static func formatList(_ format: AudioStreamBasicDescription, cookie: [UInt8]) -> [AudioStreamBasicDescription] {
        guard aacFamily.contains(format.mFormatID), !cookie.isEmpty,
              let config = try? ElementaryStreamDescriptor(parsing: cookie).audioSpecificConfig, let outputRate = config.extensionSampleRate else { return [format] }
        func layer(_ id: UInt32, _ flags: Int, _ rate: Int, _ frames: UInt32, _ channels: Int) -> AudioStreamBasicDescription {
            AudioStreamBasicDescription(mSampleRate: Double(rate), mFormatID: id, mFormatFlags: UInt32(flags), mBytesPerPacket: 0, mFramesPerPacket: frames,
                                        mBytesPerFrame: 0, mChannelsPerFrame: UInt32(channels), mBitsPerChannel: 0, mReserved: 0)
        }
        var list: [AudioStreamBasicDescription] = []
        if config.signalsParametricStereo { list.append(layer(AudioFormatValues.mpeg4AACHighEfficiencyV2, 29, outputRate, 2048, 2)) }
        list.append(layer(AudioFormatValues.mpeg4AACHighEfficiency, 5, outputRate, 2048, config.channelCount))
        list.append(layer(AudioFormatValues.mpeg4AAC, config.coreObjectType, config.sampleRate, 1024, config.channelCount))
        return list
    }
}
