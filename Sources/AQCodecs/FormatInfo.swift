import AQMedia
import CAudioTypes

/// Completes a partly filled stream description as Apple's `kAudioFormatProperty_FormatInfo`
/// does: the engine's rule, which `AudioFormatGetProperty` only spells.
public enum FormatInfo {
    /// `format` with the fields its format ID implies filled in:
    /// - linear PCM: one frame per packet, packed bytes from the channels and bits, signed
    ///   integers unless float is asked for (then checked as the queues check it);
    /// - AAC: completed as the encoder takes it (``CompressedFormatValues/completedAAC(_:)``);
    /// - the formats only decoded here (``PacketDecoders``): their frames per packet (Apple
    ///   Lossless and FLAC 4096, MPEG Layer III 1152, HE-AAC 2048, Opus 960, AC-3 1536 ...),
    ///   variable bytes.
    ///
    /// - Throws: 'fmt?' for a format it does not know or a linear-PCM description that stays
    ///   inconsistent, naming the field.
    public static func completed(_ format: AudioStreamBasicDescription) throws(AudioFileError) -> AudioStreamBasicDescription {
        var format = format
        switch format.mFormatID {
        case AudioFormatValues.linearPCM:
            if format.mFramesPerPacket == 0 { format.mFramesPerPacket = 1 }
            if format.mBytesPerFrame == 0 { format.mBytesPerFrame = format.mChannelsPerFrame * format.mBitsPerChannel / 8 }
            if format.mBytesPerPacket == 0 { format.mBytesPerPacket = format.mBytesPerFrame * format.mFramesPerPacket }
            if format.mFormatFlags & (AudioFormatValues.isFloat | AudioFormatValues.isSignedInteger) == 0 { format.mFormatFlags |= AudioFormatValues.isSignedInteger }
            format.mFormatFlags |= AudioFormatValues.isPacked
            _ = try LinearPCMLayout(validating: format)
            return format
        case AudioFormatValues.mpeg4AAC:
            return try CompressedFormatValues.completedAAC(format)
        case _ where PacketDecoders.decodes(format.mFormatID):
            return PacketDecoders.completed(format)
        default:
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "format \(fourCharacterCode(format.mFormatID)) is not supported")
        }
    }
}
