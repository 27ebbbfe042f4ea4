import AQCodecs
import AQMedia

// AudioFormat, Apple spelling: describing formats, listing codecs, reading AAC cookies.

public typealias AudioFormatPropertyID = UInt32

/// `kAudioFormatProperty_FormatInfo` ('fmti'): completes an ASBD; the specifier may be a magic cookie.
public let kAudioFormatProperty_FormatInfo: AudioFormatPropertyID = 0x666D_7469
/// `kAudioFormatProperty_FormatIsVBR` ('fvbr').
public let kAudioFormatProperty_FormatIsVBR: AudioFormatPropertyID = 0x6676_6272
/// `kAudioFormatProperty_FormatName` ('fnam'): a `CFString` (`NSString`), as on Apple platforms.
public let kAudioFormatProperty_FormatName: AudioFormatPropertyID = 0x666E_616D
/// `kAudioFormatProperty_Encoders` ('aven'): specifier a format ID; AudioClassDescription[].
public let kAudioFormatProperty_Encoders: AudioFormatPropertyID = 0x6176_656E
/// `kAudioFormatProperty_Decoders` ('avde').
public let kAudioFormatProperty_Decoders: AudioFormatPropertyID = 0x6176_6465
/// `kAudioFormatProperty_ASBDFromESDS` ('essd'): specifier an ES_Descriptor (AAC magic cookie).
public let kAudioFormatProperty_ASBDFromESDS: AudioFormatPropertyID = 0x6573_7364
/// `kAudioFormatProperty_EncodeFormatIDs` ('acof') / `DecodeFormatIDs` ('acif').
public let kAudioFormatProperty_EncodeFormatIDs: AudioFormatPropertyID = 0x6163_6F66
public let kAudioFormatProperty_DecodeFormatIDs: AudioFormatPropertyID = 0x6163_6966
/// `kAudioFormatUnsupportedPropertyError` ('prop').
public let kAudioFormatUnsupportedPropertyError: OSStatus = 0x7072_6F70
/// `kAudioFormatBadPropertySizeError` ('!siz').
public let kAudioFormatBadPropertySizeError: OSStatus = 0x2173_697A
/// `kAudioFormatBadSpecifierSizeError` ('!spc').
public let kAudioFormatBadSpecifierSizeError: OSStatus = 0x2173_7063
/// `kAudioFormatUnknownFormatError` ('!fmt').
public let kAudioFormatUnknownFormatError: OSStatus = 0x2166_6D74

/// The codecs aqjack has, all through libavcodec: encoders for AAC-LC and Apple Lossless,
/// decoders for every format of ``PacketDecoders`` (linear PCM needs no codec).
private func codecs(_ component: UInt32, for format: AudioFormatID) -> [AudioClassDescription] {
    guard format == kAudioFormatMPEG4AAC || format == kAudioFormatAppleLossless || (PacketDecoders.decodes(format) && component == kAudioDecoderComponentType) else { return [] }
    return [AudioClassDescription(mType: component, mSubType: format, mManufacturer: kAppleSoftwareAudioCodecManufacturer)]
}

/// The value of a format property, or its error.
private func formatProperty(_ id: AudioFormatPropertyID, specifier: [UInt8], input: AudioStreamBasicDescription?) -> Result<[UInt8], AudioFileError> {
    func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    func array<T>(_ values: [T]) -> [UInt8] { values.withUnsafeBytes { Array($0) } }
    func formatID() -> AudioFormatID? {
        specifier.count >= 4 ? specifier.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } : nil
    }
    do throws(AudioFileError) {
        switch id {
        case kAudioFormatProperty_FormatInfo:
            guard let format = input else { return .failure(AudioFileError(kAudioFormatBadPropertySizeError, "FormatInfo needs an ASBD")) }
            if !specifier.isEmpty, format.mFormatID == kAudioFormatMPEG4AAC || format.mFormatID == 0 {
                // The specifier is a magic cookie: it decides the stream.
                return .success(bytes(CompressedFormatValues.aacDescription(try ElementaryStreamDescriptor(parsing: specifier).audioSpecificConfig)))
            }
            return .success(bytes(try FormatInfo.completed(format)))
        case kAudioFormatProperty_FormatIsVBR:
            guard let format = input else { return .failure(AudioFileError(kAudioFormatBadSpecifierSizeError, "FormatIsVBR needs an ASBD specifier")) }
            return .success(bytes(UInt32(format.mFormatID == kAudioFormatLinearPCM || format.mBytesPerPacket > 0 ? 0 : 1)))
        case kAudioFormatProperty_Encoders, kAudioFormatProperty_Decoders:
            guard let format = formatID() else { return .failure(AudioFileError(kAudioFormatBadSpecifierSizeError, "specifier must be a 4-byte format ID")) }
            return .success(array(codecs(id == kAudioFormatProperty_Encoders ? kAudioEncoderComponentType : kAudioDecoderComponentType, for: format)))
        case kAudioFormatProperty_EncodeFormatIDs:
            // What queues record and converters encode.
            return .success(array([kAudioFormatLinearPCM, kAudioFormatMPEG4AAC, kAudioFormatAppleLossless]))
        case kAudioFormatProperty_DecodeFormatIDs:
            // What playback queues play and converters decode.
            return .success(array([kAudioFormatLinearPCM] + PacketDecoders.formatIDs))
        case kAudioFormatProperty_FormatList:
            guard specifier.count >= MemoryLayout<AudioFormatInfo>.size else {
                return .failure(AudioFileError(kAudioFormatBadSpecifierSizeError, "FormatList needs an AudioFormatInfo specifier"))
            }
            let info = specifier.withUnsafeBytes { $0.loadUnaligned(as: AudioFormatInfo.self) }
            let cookie = info.mMagicCookie.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(info.mMagicCookieSize))) } ?? []
            return .success(formatListBytes(info.mASBD, cookie: cookie))
        case kAudioFormatProperty_FirstPlayableFormatFromList:
            guard specifier.count >= MemoryLayout<AudioFormatListItem>.size else {
                return .failure(AudioFileError(kAudioFormatBadSpecifierSizeError, "FirstPlayableFormatFromList needs an array of AudioFormatListItem"))
            }
            guard let index = firstPlayableItem(specifier) else {
                return .failure(AudioFileError(kAudioFormatUnsupportedDataFormatError, "no format in the list is played here"))
            }
            return .success(bytes(UInt32(index)))
        case kAudioFormatProperty_ASBDFromESDS:
            return .success(bytes(CompressedFormatValues.aacDescription(try ElementaryStreamDescriptor(parsing: specifier).audioSpecificConfig)))
        default:
            return .failure(AudioFileError(kAudioFormatUnsupportedPropertyError, "property \(fourCharacterCode(id)) is not supported"))
        }
    } catch {
        return .failure(error)
    }
}

/// The ASBD a property reads: the specifier for FormatIsVBR/FormatName, the output buffer for FormatInfo.
private func arguments(_ id: AudioFormatPropertyID, _ specifierSize: UInt32, _ specifier: UnsafeRawPointer?,
                       _ output: UnsafeMutableRawPointer?) -> (specifier: [UInt8], format: AudioStreamBasicDescription?) {
    let bytes = specifier.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(specifierSize))) } ?? []
    let asbdSize = MemoryLayout<AudioStreamBasicDescription>.size
    switch id {
    case kAudioFormatProperty_FormatInfo:
        return (bytes, output?.loadUnaligned(as: AudioStreamBasicDescription.self))
    case kAudioFormatProperty_FormatIsVBR, kAudioFormatProperty_FormatName:
        guard let specifier, Int(specifierSize) >= asbdSize else { return (bytes, nil) }
        return (bytes, specifier.loadUnaligned(as: AudioStreamBasicDescription.self))
    default:
        return (bytes, nil)
    }
}

/// A readable name, e.g. "AAC, 2 channels, 44100 Hz" or "16-bit signed integer (big endian), 2 channels, 44100 Hz".
public func formatName(_ format: AudioStreamBasicDescription) -> String {
    let channels = "\(format.mChannelsPerFrame) channel" + (format.mChannelsPerFrame == 1 ? "" : "s")
    let rate = format.mSampleRate.isFinite && abs(format.mSampleRate) < 1e12 ? "\(Int(format.mSampleRate)) Hz" : "\(format.mSampleRate) Hz"
    switch format.mFormatID {
    case kAudioFormatLinearPCM:
        let kind = format.mFormatFlags & kAudioFormatFlagIsFloat != 0 ? "float" : "signed integer"
        let endian = format.mFormatFlags & kAudioFormatFlagIsBigEndian != 0 ? "big endian" : "little endian"
        return "Linear PCM, \(format.mBitsPerChannel)-bit \(kind) (\(endian)), \(channels), \(rate)"
    case kAudioFormatMPEG4AAC: return "AAC, \(channels), \(rate)"
    case kAudioFormatAppleLossless: return "Apple Lossless, \(channels), \(rate)"
    case kAudioFormatFLAC: return "FLAC, \(channels), \(rate)"
    case kAudioFormatMPEGLayer1, kAudioFormatMPEGLayer2, kAudioFormatMPEGLayer3:
        return "MPEG Layer \(format.mFormatID & 0xFF - 0x30), \(channels), \(rate)"
    default: return "\(fourCharacterCode(format.mFormatID)), \(channels), \(rate)"
    }
}

/// The size of a format property's value.
@discardableResult
public func AudioFormatGetPropertyInfo(_ inPropertyID: AudioFormatPropertyID, _ inSpecifierSize: UInt32,
                                       _ inSpecifier: UnsafeRawPointer?, _ outPropertyDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    switch inPropertyID {
    case kAudioFormatProperty_FormatInfo, kAudioFormatProperty_ASBDFromESDS:
        outPropertyDataSize.pointee = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        return noErr
    case kAudioFormatProperty_FormatName:
        outPropertyDataSize.pointee = UInt32(MemoryLayout<CFString>.size)
        return noErr
    default:
        let (specifier, format) = arguments(inPropertyID, inSpecifierSize, inSpecifier, nil)
        switch formatProperty(inPropertyID, specifier: specifier, input: format) {
        case .success(let value):
            outPropertyDataSize.pointee = UInt32(value.count)
            return noErr
        case .failure(let error): return error.status
        }
    }
}

/// Reads a format property:
/// - `FormatInfo` completes the ASBD in `outPropertyData` (linear PCM: packed, one frame per
///   packet; AAC: 1024 frames per packet, VBR; the other decoded formats their frames per
///   packet; with a magic cookie as specifier, the cookie's stream), checking it;
/// - `FormatIsVBR`, `FormatName` (a `CFString`), `Encoders`/`Decoders` (the codec
///   list for the format ID in the specifier), `ASBDFromESDS`, `EncodeFormatIDs`/`DecodeFormatIDs`,
///   `FormatList` (an `AudioFormatInfo` specifier) and `FirstPlayableFormatFromList`.
@discardableResult
public func AudioFormatGetProperty(_ inPropertyID: AudioFormatPropertyID, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeRawPointer?,
                                   _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>?, _ outPropertyData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let outPropertyData, let ioPropertyDataSize else { return kAudioFormatBadPropertySizeError }
    if inPropertyID == kAudioFormatProperty_FormatInfo && Int(ioPropertyDataSize.pointee) < MemoryLayout<AudioStreamBasicDescription>.size {
        return kAudioFormatBadPropertySizeError
    }
    let (specifier, format) = arguments(inPropertyID, inSpecifierSize, inSpecifier, outPropertyData)
    if inPropertyID == kAudioFormatProperty_FormatName {
        guard let format else { return kAudioFormatBadSpecifierSizeError }
        return storePropertyObject(formatName(format) as CFString, into: outPropertyData, size: ioPropertyDataSize,
                                   tooSmall: kAudioFormatBadPropertySizeError)
    }
    switch formatProperty(inPropertyID, specifier: specifier, input: format) {
    case .success(let value):
        let fixedSize = inPropertyID == kAudioFormatProperty_FormatInfo || inPropertyID == kAudioFormatProperty_ASBDFromESDS
            || inPropertyID == kAudioFormatProperty_FormatIsVBR
        return storePropertyBytes(value, into: outPropertyData, size: ioPropertyDataSize, mustFit: fixedSize,
                                  tooSmall: kAudioFormatBadPropertySizeError)
    case .failure(let error): return error.status
    }
}
