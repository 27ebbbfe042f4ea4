import AQCodecs
import AQMedia
import CAudioTypes

/// A queue's format, checked and completed once: the description the queue reports
/// (`kAudioQueueProperty_StreamDescription`, a rate of 0 replaced by the device's, AAC and ALAC
/// completed as Apple's FormatInfo completes them), and the linear-PCM layout of the frames
/// the queue itself produces or consumes (the format's own, or 32-bit float frames going into the
/// encoder or coming out of the decoder).
///
/// The C `AudioStreamBasicDescription` is the carrier here because the queues' public Swift
/// surface still takes one; every check and completion happens in ``init(_:deviceRate:purpose:)``.
public struct StreamFormat: Sendable {
    public enum Codec: Sendable, Equatable {
        case linearPCM, aac, appleLossless
        /// A format played (decoded) but not recorded: MPEG Layer I/II/III, HE-AAC, HE-AAC v2,
        /// AAC-LD/ELD, FLAC, Opus, AC-3, E-AC-3 (``PacketDecoders``); 'aac ' and 'alac' playback
        /// also decode through ``PacketDecoders``.
        case decodedOnly(formatID: UInt32)
    }
    /// Which way the queue goes: a recording queue encodes, a playback queue decodes.
    public enum Purpose: String, Sendable { case recording, playback }

    /// The completed description.
    public let description: AudioStreamBasicDescription
    /// The frames the queue's own signal path carries.
    public let frameLayout: LinearPCMLayout
    public let codec: Codec

    public var sampleRate: Double { description.mSampleRate }
    public var channelCount: Int { frameLayout.channelCount }
    public var isCompressed: Bool { codec != .linearPCM }
    /// Whether the frames are 32-bit float in this machine's byte order (the rings' own samples).
    public var isNativeFloat32: Bool {
        frameLayout.kind == .float && frameLayout.bitsPerChannel == 32 && frameLayout.isBigEndian == (1.bigEndian == 1)
    }

    /// Checks and completes `format`.
    /// - Parameters:
    ///   - deviceRate: the device's rate, which a rate of 0 becomes; nil before a device is open
    ///     (a 0 rate is then left as it is).
    ///   - purpose: a recording completes an ALAC description (bit depth from its flags, 16 by
    ///     default, 4096 frames per packet); playback takes the file's as it is.
    /// - Throws: `kAudioFormatUnsupportedDataFormatError` naming the field that is wrong.
    public init(_ format: AudioStreamBasicDescription, deviceRate: Double?, purpose: Purpose) throws(AudioFileError) {
        var completed = format
        // Playback completes AAC before taking the device's rate (the decoder's rate comes from
        // the cookie); a recording encodes at the resolved rate, so that is what is checked.
        if completed.mSampleRate == 0, let deviceRate, !(purpose == .playback && format.mFormatID == AudioFormatValues.mpeg4AAC) {
            completed.mSampleRate = deviceRate
        }
        switch format.mFormatID {
        case AudioFormatValues.mpeg4AAC, AudioFormatValues.appleLossless:
            if format.mFormatID == AudioFormatValues.appleLossless && purpose == .playback {
                guard format.mSampleRate.isFinite, format.mSampleRate > 0, format.mSampleRate <= 1_536_000,
                      (1 ... 8).contains(format.mChannelsPerFrame) else {
                    throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                           "Apple Lossless playback needs the file's rate and 1 ... 8 channels; got \(format.mSampleRate) Hz, \(format.mChannelsPerFrame) channels")
                }
                codec = .appleLossless
            } else if format.mFormatID == AudioFormatValues.appleLossless {
                try CompressedFormatValues.checkRate(completed.mSampleRate)
                completed = try CompressedFormatValues.completedALAC(completed, defaultBitDepth: 16, context: "Apple Lossless recording")
                codec = .appleLossless
            } else {
                if purpose == .recording { try CompressedFormatValues.checkRate(format.mSampleRate) }
                completed = try CompressedFormatValues.completedAAC(completed)
                if completed.mSampleRate == 0, let deviceRate { completed.mSampleRate = deviceRate }
                guard completed.mChannelsPerFrame > 0 else {
                    throw AudioFileError(AudioFileError.unsupportedDataFormatCode, purpose == .recording ? "mChannelsPerFrame is 0; an AAC recording needs 1 ... 6 or 8 channels"
                                                                                         : "mChannelsPerFrame is 0; AAC playback needs 1 ... 6 or 8 channels")
                }
                codec = .aac
            }
            frameLayout = try LinearPCMLayout(validating: CompressedFormatValues.floatPCM(sampleRate: max(1, completed.mSampleRate),
                                                                                          channelCount: Int(completed.mChannelsPerFrame)))
        case _ where PacketDecoders.decodes(format.mFormatID):
            guard purpose == .playback else {
                throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                     "\(fourCharacterCode(format.mFormatID)) is played here, not recorded: record linear PCM, AAC or Apple Lossless")
            }
            completed = PacketDecoders.completed(format)
            try PacketDecoders.check(completed)
            codec = .decodedOnly(formatID: format.mFormatID)
            frameLayout = try LinearPCMLayout(validating: CompressedFormatValues.floatPCM(sampleRate: completed.mSampleRate,
                                                                                          channelCount: Int(completed.mChannelsPerFrame)))
        default:
            frameLayout = try LinearPCMLayout(validating: completed)
            codec = .linearPCM
        }
        description = completed
    }
}
