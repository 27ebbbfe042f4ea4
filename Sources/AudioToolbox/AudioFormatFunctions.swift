import AQMedia

// AudioFormat, Apple spelling: what the linear-PCM work needs (the codecs add the rest).

public typealias AudioFormatPropertyID = UInt32

/// `kAudioFormatProperty_FormatInfo` ('fmti'): completes an ASBD.
public let kAudioFormatProperty_FormatInfo: AudioFormatPropertyID = 0x666D_7469
/// `kAudioFormatProperty_FormatIsVBR` ('fvbr').
public let kAudioFormatProperty_FormatIsVBR: AudioFormatPropertyID = 0x6676_6272
/// `kAudioFormatUnsupportedPropertyError` ('prop').
public let kAudioFormatUnsupportedPropertyError: OSStatus = 0x7072_6F70
/// `kAudioFormatBadPropertySizeError` ('!siz').
public let kAudioFormatBadPropertySizeError: OSStatus = 0x2173_697A

/// The size of a format property's value.
public func AudioFormatGetPropertyInfo(_ inPropertyID: AudioFormatPropertyID, _ inSpecifierSize: UInt32,
                                       _ inSpecifier: UnsafeRawPointer?, _ outPropertyDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    switch inPropertyID {
    case kAudioFormatProperty_FormatInfo: outPropertyDataSize.pointee = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    case kAudioFormatProperty_FormatIsVBR: outPropertyDataSize.pointee = 4
    default: return kAudioFormatUnsupportedPropertyError
    }
    return noErr
}

/// `FormatInfo` completes a linear-PCM description from its rate, channels, bits and flags
/// (packed, one frame per packet), and checks it; `FormatIsVBR` answers 0 for linear PCM.
public func AudioFormatGetProperty(_ inPropertyID: AudioFormatPropertyID, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeRawPointer?,
                                   _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?, _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    switch inPropertyID {
    case kAudioFormatProperty_FormatInfo:
        guard let outPropertyData, let size = ioPropertyDataSize, Int(size.pointee) >= MemoryLayout<AudioStreamBasicDescription>.size else {
            return kAudioFormatBadPropertySizeError
        }
        var format = outPropertyData.load(as: AudioStreamBasicDescription.self)
        guard format.mFormatID == kAudioFormatLinearPCM else { return kAudioFormatUnsupportedDataFormatError }
        if format.mFramesPerPacket == 0 { format.mFramesPerPacket = 1 }
        if format.mBytesPerFrame == 0 { format.mBytesPerFrame = format.mChannelsPerFrame * format.mBitsPerChannel / 8 }
        if format.mBytesPerPacket == 0 { format.mBytesPerPacket = format.mBytesPerFrame * format.mFramesPerPacket }
        if format.mFormatFlags & (kAudioFormatFlagIsFloat | kAudioFormatFlagIsSignedInteger) == 0 { format.mFormatFlags |= kAudioFormatFlagIsSignedInteger }
        format.mFormatFlags |= kAudioFormatFlagIsPacked
        do throws(AudioStatusError) {
            _ = try LinearPCMLayout(validating: format)
        } catch {
            return error.status
        }
        outPropertyData.storeBytes(of: format, as: AudioStreamBasicDescription.self)
        return noErr
    case kAudioFormatProperty_FormatIsVBR:
        guard let outPropertyData else { return kAudioFormatBadPropertySizeError }
        outPropertyData.storeBytes(of: UInt32(0), as: UInt32.self)
        ioPropertyDataSize?.pointee = 4
        return noErr
    default:
        return kAudioFormatUnsupportedPropertyError
    }
}
