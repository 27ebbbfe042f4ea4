import AQCodecs
import AQMedia
import Foundation

// AudioFileGetGlobalInfo(Size): what file types AudioFile reads and writes, their names,
// extensions, UTIs and MIME types, and the formats each holds — from AQCodecs' ``FileTypes``
// table (the one `aqjack convert` and `aqjack record` decide by), plus MP3, which is read only.

/// `CFArray`: Foundation's `NSArray` (`as! [String]` bridges it, as on Apple platforms).
public typealias CFArray = NSArray

public let kAudioFileGlobalInfo_ReadableTypes: AudioFilePropertyID = 0x6166_7266                       // 'afrf'
public let kAudioFileGlobalInfo_WritableTypes: AudioFilePropertyID = 0x6166_7766                       // 'afwf'
public let kAudioFileGlobalInfo_FileTypeName: AudioFilePropertyID = 0x6674_6E6D                        // 'ftnm'
public let kAudioFileGlobalInfo_AvailableFormatIDs: AudioFilePropertyID = 0x666D_6964                  // 'fmid'
public let kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat: AudioFilePropertyID = 0x7364_6964 // 'sdid'
public let kAudioFileGlobalInfo_AllExtensions: AudioFilePropertyID = 0x616C_7874                       // 'alxt'
public let kAudioFileGlobalInfo_AllUTIs: AudioFilePropertyID = 0x6175_7469                             // 'auti'
public let kAudioFileGlobalInfo_AllMIMETypes: AudioFilePropertyID = 0x616D_696D                        // 'amim'
public let kAudioFileGlobalInfo_ExtensionsForType: AudioFilePropertyID = 0x6665_7874                   // 'fext'
public let kAudioFileGlobalInfo_UTIsForType: AudioFilePropertyID = 0x6675_7469                         // 'futi'
public let kAudioFileGlobalInfo_MIMETypesForType: AudioFilePropertyID = 0x666D_696D                    // 'fmim'
public let kAudioFileGlobalInfo_TypesForMIMEType: AudioFilePropertyID = 0x746D_696D                    // 'tmim'
public let kAudioFileGlobalInfo_TypesForUTI: AudioFilePropertyID = 0x7475_7469                         // 'tuti'
public let kAudioFileGlobalInfo_TypesForExtension: AudioFilePropertyID = 0x7465_7874                   // 'text'

/// The specifier of `AvailableStreamDescriptionsForFormat`.
public struct AudioFileTypeAndFormatID: Sendable {
    public var mFileType: AudioFileTypeID
    public var mFormatID: AudioFormatID
    public init(mFileType: AudioFileTypeID, mFormatID: AudioFormatID) {
        self.mFileType = mFileType
        self.mFormatID = mFormatID
    }
    public init() { self.init(mFileType: 0, mFormatID: 0) }
}

/// A file type as Apple's global info describes it.
private struct GlobalFileType {
    let typeID: UInt32
    let name: String
    let extensions: [String]
    let utis: [String]
    let mimeTypes: [String]
    let formats: [UInt32]
    let writable: Bool

    /// Names, UTIs and MIME types as Apple's AudioFile reports them for its types.
    static let all: [GlobalFileType] = FileTypes.all.map { entry in
        let (name, utis, mimes): (String, [String], [String]) = switch entry.typeID {
        case AudioFileTypeValues.wave: ("WAVE", ["com.microsoft.waveform-audio"], ["audio/wav", "audio/x-wav", "audio/vnd.wave"])
        case AudioFileTypeValues.wave64: ("Wave64", ["com.sony.wave64"], ["audio/x-w64"])
        case AudioFileTypeValues.rf64: ("RF64", ["public.rf64-audio"], ["audio/x-rf64"])
        case AudioFileTypeValues.aiff: ("AIFF", ["public.aiff-audio"], ["audio/aiff", "audio/x-aiff"])
        case AudioFileTypeValues.aifc: ("AIFC", ["public.aifc-audio"], ["audio/aiff", "audio/x-aiff"])
        case AudioFileTypeValues.caf: ("CAF", ["com.apple.coreaudio-format"], ["audio/x-caf"])
        case AudioFileTypeValues.adts: ("AAC ADTS", ["public.aac-audio"], ["audio/aac", "audio/x-aac"])
        case AudioFileTypeValues.m4a: ("Apple MPEG-4 Audio", ["com.apple.m4a-audio"], ["audio/x-m4a", "audio/mp4"])
        case AudioFileTypeValues.mpeg4: ("MPEG-4 Audio", ["public.mpeg-4"], ["audio/mp4", "video/mp4"])
        case AudioFileTypeValues.flac: ("FLAC", ["org.xiph.flac"], ["audio/flac"])
        default: (fourCharacterCode(entry.typeID), [], [])
        }
        return GlobalFileType(typeID: entry.typeID, name: name, extensions: entry.extensions, utis: utis, mimeTypes: mimes,
                              formats: entry.codecs, writable: true)
    } + [GlobalFileType(typeID: AudioFileTypeValues.mp3, name: "MPEG Layer 3", extensions: ["mp3"], utis: ["public.mp3"],
                        mimeTypes: ["audio/mpeg", "audio/mpeg3", "audio/mp3"], formats: [AudioFormatValues.mpegLayer3], writable: false)]

    static func find(_ typeID: UInt32) -> GlobalFileType? { all.first { $0.typeID == typeID } }

    /// The linear-PCM layouts this type stores: 16-, 24- and 32-bit integers in its byte order,
    /// and 32-bit float where it takes floats; one description with the codec's ID otherwise.
    func descriptions(for formatID: UInt32) -> [AudioStreamBasicDescription] {
        guard formatID == AudioFormatValues.linearPCM else {
            return [AudioStreamBasicDescription(mSampleRate: 0, mFormatID: formatID, mFormatFlags: 0, mBytesPerPacket: 0,
                                                mFramesPerPacket: formatID == AudioFormatValues.mpeg4AAC ? 1024 : 0, mBytesPerFrame: 0,
                                                mChannelsPerFrame: 0, mBitsPerChannel: 0, mReserved: 0)]
        }
        let bigEndian = typeID == AudioFileTypeValues.aiff
        let endian = bigEndian ? AudioFormatValues.isBigEndian : 0
        var result = [16, 24, 32].map { bits in
            AudioStreamBasicDescription(mSampleRate: 0, mFormatID: formatID,
                                        mFormatFlags: AudioFormatValues.isSignedInteger | AudioFormatValues.isPacked | endian,
                                        mBytesPerPacket: 0, mFramesPerPacket: 1, mBytesPerFrame: 0, mChannelsPerFrame: 0,
                                        mBitsPerChannel: UInt32(bits), mReserved: 0)
        }
        if typeID != AudioFileTypeValues.aiff {
            result.append(AudioStreamBasicDescription(mSampleRate: 0, mFormatID: formatID,
                                                      mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                                      mBytesPerPacket: 0, mFramesPerPacket: 1, mBytesPerFrame: 0, mChannelsPerFrame: 0,
                                                      mBitsPerChannel: 32, mReserved: 0))
        }
        return result
    }
}

/// A global-info answer: an array of numbers or descriptions, a string, or a string array.
private enum GlobalValue {
    case bytes([UInt8], elementSize: Int)
    case string(String)
    case strings([String])

    static func array<T>(_ values: [T]) -> GlobalValue {
        .bytes(values.withUnsafeBytes { Array($0) }, elementSize: MemoryLayout<T>.stride)
    }

    var size: Int {
        switch self {
        case .bytes(let bytes, _): bytes.count
        case .string: MemoryLayout<CFString>.size
        case .strings: MemoryLayout<CFArray>.size
        }
    }
}

private func globalValue(_ property: AudioFilePropertyID, _ specifierSize: UInt32, _ specifier: UnsafeRawPointer?) -> Result<GlobalValue, StatusOnly> {
    func specifiedType() -> Result<GlobalFileType, StatusOnly> {
        guard let specifier, specifierSize >= 4 else { return .failure(StatusOnly(kAudioFileBadPropertySizeError)) }
        guard let type = GlobalFileType.find(specifier.loadUnaligned(as: UInt32.self)) else {
            return .failure(StatusOnly(kAudioFileUnsupportedFileTypeError))
        }
        return .success(type)
    }
    func specifiedString() -> Result<String, StatusOnly> {
        guard let specifier, Int(specifierSize) >= MemoryLayout<CFString>.size else { return .failure(StatusOnly(kAudioFileBadPropertySizeError)) }
        return .success((specifier.load(as: CFString.self) as String).lowercased())
    }
    let all = GlobalFileType.all
    switch property {
    case kAudioFileGlobalInfo_ReadableTypes: return .success(.array(all.map(\.typeID)))
    case kAudioFileGlobalInfo_WritableTypes: return .success(.array(all.filter(\.writable).map(\.typeID)))
    case kAudioFileGlobalInfo_FileTypeName: return specifiedType().map { .string($0.name) }
    case kAudioFileGlobalInfo_AvailableFormatIDs: return specifiedType().map { .array($0.formats) }
    case kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat:
        guard let specifier, Int(specifierSize) >= MemoryLayout<AudioFileTypeAndFormatID>.size else {
            return .failure(StatusOnly(kAudioFileBadPropertySizeError))
        }
        let pair = specifier.loadUnaligned(as: AudioFileTypeAndFormatID.self)
        guard let type = GlobalFileType.find(pair.mFileType) else { return .failure(StatusOnly(kAudioFileUnsupportedFileTypeError)) }
        guard type.formats.contains(pair.mFormatID) else { return .failure(StatusOnly(kAudioFileUnsupportedDataFormatError)) }
        return .success(.array(type.descriptions(for: pair.mFormatID)))
    case kAudioFileGlobalInfo_AllExtensions: return .success(.strings(all.flatMap(\.extensions)))
    case kAudioFileGlobalInfo_AllUTIs: return .success(.strings(all.flatMap(\.utis)))
    case kAudioFileGlobalInfo_AllMIMETypes: return .success(.strings(Array(NSOrderedSet(array: all.flatMap(\.mimeTypes)).array as! [String])))
    case kAudioFileGlobalInfo_ExtensionsForType: return specifiedType().map { .strings($0.extensions) }
    case kAudioFileGlobalInfo_UTIsForType: return specifiedType().map { .strings($0.utis) }
    case kAudioFileGlobalInfo_MIMETypesForType: return specifiedType().map { .strings($0.mimeTypes) }
    case kAudioFileGlobalInfo_TypesForExtension:
        return specifiedString().map { ext in .array(all.filter { $0.extensions.contains(ext) }.map(\.typeID)) }
    case kAudioFileGlobalInfo_TypesForUTI:
        return specifiedString().map { uti in .array(all.filter { $0.utis.contains(uti) }.map(\.typeID)) }
    case kAudioFileGlobalInfo_TypesForMIMEType:
        return specifiedString().map { mime in .array(all.filter { $0.mimeTypes.contains(mime) }.map(\.typeID)) }
    default: return .failure(StatusOnly(kAudioFileUnsupportedPropertyError))
    }
}


/// The size of a global-info value (arrays: the whole array; strings and string arrays: one reference).
@discardableResult
public func AudioFileGetGlobalInfoSize(_ inPropertyID: AudioFilePropertyID, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeMutableRawPointer?,
                                       _ outDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    switch globalValue(inPropertyID, inSpecifierSize, inSpecifier) {
    case .success(let value):
        outDataSize.pointee = UInt32(value.size)
        return noErr
    case .failure(let failure): return failure.status
    }
}

/// A global-info value: arrays of type or format IDs or stream descriptions (as many whole
/// elements as fit), a `CFString` (a file type's name) or a `CFArray` of `CFString`s, owned by
/// the caller.
@discardableResult
public func AudioFileGetGlobalInfo(_ inPropertyID: AudioFilePropertyID, _ inSpecifierSize: UInt32, _ inSpecifier: UnsafeMutableRawPointer?,
                                   _ ioDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    switch globalValue(inPropertyID, inSpecifierSize, inSpecifier) {
    case .failure(let failure): return failure.status
    case .success(.bytes(let bytes, let elementSize)):
        let fitting = Int(ioDataSize.pointee) / elementSize * elementSize
        return storePropertyBytes(Array(bytes.prefix(fitting)), into: outPropertyData, size: ioDataSize, mustFit: false,
                                  tooSmall: kAudioFileBadPropertySizeError)
    case .success(.string(let text)):
        return storePropertyObject(text as CFString, into: outPropertyData, size: ioDataSize, tooSmall: kAudioFileBadPropertySizeError)
    case .success(.strings(let texts)):
        return storePropertyObject(texts as NSArray, into: outPropertyData, size: ioDataSize, tooSmall: kAudioFileBadPropertySizeError)
    }
}
