import AQMedia
import CAudioTypes

/// Completes a partly filled stream description as Apple's `kAudioFormatProperty_FormatInfo`
/// does: the engine's rule, which `AudioFormatGetProperty` only spells.
public enum FormatInfo {
    /// `format` with the fields its format ID implies filled in:
    /// - linear PCM: one frame per packet, packed bytes from the channels and bits, signed
    ///   integers unless float is asked for (then checked as the queues check it);
    /// - AAC: completed as the encoder takes it (``CompressedFormatValues/completedAAC(_:)``);
    /// - Apple Lossless and FLAC: 4096 frames per packet (Apple's ALAC encoder, libsndfile's FLAC
    ///   block), variable bytes.
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
        case AudioFormatValues.mpegLayer1, AudioFormatValues.mpegLayer2, AudioFormatValues.mpegLayer3:
            // A frame of 384 (Layer I) or 1152 samples per packet; variable packet sizes.
            if format.mFramesPerPacket == 0 { format.mFramesPerPacket = format.mFormatID == AudioFormatValues.mpegLayer1 ? 384 : 1152 }
            format.mBytesPerPacket = 0
            format.mBytesPerFrame = 0
            return format
        case AudioFormatValues.appleLossless, AudioFormatValues.flac:
            if format.mFramesPerPacket == 0 { format.mFramesPerPacket = 4096 }
            format.mBytesPerPacket = 0
            format.mBytesPerFrame = 0
            return format
        default:
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "format \(fourCharacterCode(format.mFormatID)) is not supported")
        }
    }
}
