@_exported import CAudioTypes
import AQMedia

// Apple's type names and constants, with Apple's exact values (CoreAudioBaseTypes.h,
// AudioQueue.h, AudioFile.h of the macOS 10.15 SDK).

public typealias OSStatus = Int32
public typealias AudioFormatID = UInt32
public typealias AudioFormatFlags = UInt32
public typealias AudioQueuePropertyID = UInt32
public typealias AudioQueueParameterID = UInt32
public typealias AudioQueueParameterValue = Float32
public typealias AudioFileTypeID = UInt32
public typealias AudioFilePropertyID = UInt32

public let noErr: OSStatus = 0

// Formats and flags.
public let kAudioFormatFlagIsFloat: AudioFormatFlags = AudioFormatValues.isFloat
public let kAudioFormatFlagIsBigEndian: AudioFormatFlags = AudioFormatValues.isBigEndian
public let kAudioFormatFlagIsSignedInteger: AudioFormatFlags = AudioFormatValues.isSignedInteger
public let kAudioFormatFlagIsPacked: AudioFormatFlags = AudioFormatValues.isPacked
public let kAudioFormatFlagIsAlignedHigh: AudioFormatFlags = AudioFormatValues.isAlignedHigh
public let kAudioFormatFlagIsNonInterleaved: AudioFormatFlags = AudioFormatValues.isNonInterleaved
public let kAudioFormatFlagIsNonMixable: AudioFormatFlags = AudioFormatValues.isNonMixable
public let kAudioFormatFlagsNativeEndian: AudioFormatFlags = 0
public let kAudioFormatFlagsNativeFloatPacked: AudioFormatFlags = AudioFormatValues.isFloat | AudioFormatValues.isPacked
public let kLinearPCMFormatFlagIsFloat = kAudioFormatFlagIsFloat
public let kLinearPCMFormatFlagIsBigEndian = kAudioFormatFlagIsBigEndian
public let kLinearPCMFormatFlagIsSignedInteger = kAudioFormatFlagIsSignedInteger
public let kLinearPCMFormatFlagIsPacked = kAudioFormatFlagIsPacked
public let kLinearPCMFormatFlagIsAlignedHigh = kAudioFormatFlagIsAlignedHigh
public let kLinearPCMFormatFlagIsNonInterleaved = kAudioFormatFlagIsNonInterleaved


// Queue properties.
public let kAudioQueueProperty_IsRunning: AudioQueuePropertyID = 0x6171_726E           // 'aqrn'
public let kAudioQueueDeviceProperty_SampleRate: AudioQueuePropertyID = 0x6171_7372    // 'aqsr'
public let kAudioQueueDeviceProperty_NumberChannels: AudioQueuePropertyID = 0x6171_6463 // 'aqdc'
public let kAudioQueueProperty_CurrentDevice: AudioQueuePropertyID = 0x6171_6364       // 'aqcd'
public let kAudioQueueProperty_MagicCookie: AudioQueuePropertyID = 0x6171_6D63         // 'aqmc'
public let kAudioQueueProperty_MaximumOutputPacketSize: AudioQueuePropertyID = 0x786F_7073 // 'xops'
public let kAudioQueueProperty_StreamDescription: AudioQueuePropertyID = 0x6171_6674   // 'aqft'
public let kAudioQueueProperty_EnableLevelMetering: AudioQueuePropertyID = 0x6171_6D65 // 'aqme'
public let kAudioQueueProperty_CurrentLevelMeter: AudioQueuePropertyID = 0x6171_6D76   // 'aqmv'
public let kAudioQueueProperty_CurrentLevelMeterDB: AudioQueuePropertyID = 0x6171_6D64 // 'aqmd'
public let kAudioQueueProperty_ChannelAssignments: AudioQueuePropertyID = 0x6171_6361  // 'aqca'
public let kAudioQueueProperty_ChannelLayout: AudioQueuePropertyID = 0x6171_636C       // 'aqcl'

/// Which device channel feeds (or is fed by) each queue channel, in queue channel order.
///
/// On JACK, `mDeviceUID` names a JACK client and `mChannelNumber` (1-based) picks that client's
/// Nth audio output port in the server's order; a full port name (`client:port`) in
/// `mDeviceUID` picks that port and ignores the number. As on Apple platforms the name is an
/// unretained `CFString` (`Unmanaged.passUnretained(uid as CFString)`): the caller keeps it
/// alive while the property is set.
public struct AudioQueueChannelAssignment {
    public var mDeviceUID: Unmanaged<CFString>
    public var mChannelNumber: UInt32
    public init(mDeviceUID: Unmanaged<CFString>, mChannelNumber: UInt32) {
        self.mDeviceUID = mDeviceUID
        self.mChannelNumber = mChannelNumber
    }
}

// Queue errors.
public let kAudioQueueErr_InvalidBuffer: OSStatus = -66687
public let kAudioQueueErr_BufferEmpty: OSStatus = -66686
public let kAudioQueueErr_DisposalPending: OSStatus = -66685
public let kAudioQueueErr_InvalidProperty: OSStatus = -66684
public let kAudioQueueErr_InvalidPropertySize: OSStatus = -66683
public let kAudioQueueErr_InvalidParameter: OSStatus = -66682
public let kAudioQueueErr_CannotStart: OSStatus = -66681
public let kAudioQueueErr_InvalidDevice: OSStatus = -66680
public let kAudioQueueErr_BufferInQueue: OSStatus = -66679
public let kAudioQueueErr_InvalidRunState: OSStatus = -66678
public let kAudioQueueErr_InvalidQueueType: OSStatus = -66677
public let kAudioQueueErr_Permissions: OSStatus = -66676
public let kAudioQueueErr_InvalidPropertyValue: OSStatus = -66675
public let kAudioQueueErr_PrimeTimedOut: OSStatus = -66674
public let kAudioQueueErr_TooManyTaps: OSStatus = -66670
public let kAudioQueueErr_InvalidTapContext: OSStatus = -66669
public let kAudioQueueErr_RecordUnderrun: OSStatus = -66668
public let kAudioQueueErr_InvalidTapType: OSStatus = -66667
public let kAudioQueueErr_BufferEnqueuedTwice: OSStatus = -66666
public let kAudio_ParamError: OSStatus = -50
public let kAudioQueueErr_CodecNotFound: OSStatus = -66673
public let kAudioFormatUnsupportedDataFormatError: OSStatus = 0x666D_743F   // 'fmt?'

// Files.
public let kAudioFileAIFFType: AudioFileTypeID = AudioFileTypeValues.aiff
public let kAudioFileAIFCType: AudioFileTypeID = AudioFileTypeValues.aifc
public let kAudioFileWAVEType: AudioFileTypeID = AudioFileTypeValues.wave
public let kAudioFileRF64Type: AudioFileTypeID = AudioFileTypeValues.rf64
public let kAudioFileCAFType: AudioFileTypeID = AudioFileTypeValues.caf
/// Sony Wave64: an aqjack addition, not an Apple file type.
public let kAudioFileWave64Type: AudioFileTypeID = AudioFileTypeValues.wave64

/// Flags for `AudioFileCreateWithURL`.
public struct AudioFileFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let eraseFile = AudioFileFlags(rawValue: 1)
    public static let dontPageAlignAudioData = AudioFileFlags(rawValue: 2)
}
/// The C names of a CF_OPTIONS type are not Swift names on Apple's platforms: there, as here,
/// Swift says they were renamed.
@available(*, unavailable, renamed: "AudioFileFlags.eraseFile")
public let kAudioFileFlags_EraseFile = AudioFileFlags.eraseFile
@available(*, unavailable, renamed: "AudioFileFlags.dontPageAlignAudioData")
public let kAudioFileFlags_DontPageAlignAudioData = AudioFileFlags.dontPageAlignAudioData

public let kAudioFilePropertyFileFormat: AudioFilePropertyID = 0x6666_6D74          // 'ffmt'
public let kAudioFilePropertyDataFormat: AudioFilePropertyID = 0x6466_6D74          // 'dfmt'
public let kAudioFilePropertyMagicCookieData: AudioFilePropertyID = 0x6D67_6963     // 'mgic'
public let kAudioFilePropertyAudioDataByteCount: AudioFilePropertyID = 0x6263_6E74  // 'bcnt'
public let kAudioFilePropertyAudioDataPacketCount: AudioFilePropertyID = 0x7063_6E74 // 'pcnt'
public let kAudioFilePropertyMaximumPacketSize: AudioFilePropertyID = 0x7073_7A65   // 'psze'
public let kAudioFilePropertyEstimatedDuration: AudioFilePropertyID = 0x6564_7572   // 'edur'
public let kAudioFilePropertyPacketSizeUpperBound: AudioFilePropertyID = 0x706B_7562 // 'pkub'
public let kAudioFilePropertyPacketTableInfo: AudioFilePropertyID = 0x706E_666F    // 'pnfo'
public let kAudioFilePropertyIsOptimized: AudioFilePropertyID = 0x6F70_746D         // 'optm'
public let kAudioFileAAC_ADTSType: AudioFileTypeID = AudioFileTypeValues.adts
public let kAudioFileM4AType: AudioFileTypeID = AudioFileTypeValues.m4a
public let kAudioFileMPEG4Type: AudioFileTypeID = AudioFileTypeValues.mpeg4
public let kAudioFileMP3Type: AudioFileTypeID = AudioFileTypeValues.mp3
public let kAudioFileFLACType: AudioFileTypeID = AudioFileTypeValues.flac
public let kAudioFileInvalidFileError: OSStatus = AudioFileError.fileInvalidFileCode
public let kAudioFileFileNotFoundError: OSStatus = AudioFileError.fileNotFoundCode
public let kAudioFileEndOfFileError: OSStatus = -39
public let kAudioFilePositionError: OSStatus = -40
public let kAudioFileOperationNotSupportedError: OSStatus = 0x6F70_3F3F   // 'op??'

public let kAudioFileUnspecifiedError: OSStatus = AudioFileError.fileUnspecifiedCode
public let kAudioFileUnsupportedFileTypeError: OSStatus = AudioFileError.fileUnsupportedTypeCode
public let kAudioFileUnsupportedDataFormatError: OSStatus = AudioFileError.fileUnsupportedDataFormatCode
public let kAudioFileUnsupportedPropertyError: OSStatus = AudioFileError.fileUnsupportedPropertyCode
public let kAudioFileBadPropertySizeError: OSStatus = AudioFileError.fileBadPropertySizeCode
public let kAudioFilePermissionsError: OSStatus = AudioFileError.filePermissionsCode
public let kAudioFileInvalidPacketOffsetError: OSStatus = AudioFileError.fileInvalidPacketOffsetCode
public let kAudioFileNotOpenError: OSStatus = AudioFileError.fileNotOpenCode

/// Stores a property value the way Apple's Get…Property functions do: `size` in must be at
/// least the value's size (else `tooSmall`), `size` out is the value's size.
func storeProperty<T>(_ value: T, into destination: UnsafeMutableRawPointer, size: UnsafeMutablePointer<UInt32>,
                      tooSmall: OSStatus) -> OSStatus {
    guard Int(size.pointee) >= MemoryLayout<T>.size else { return tooSmall }
    destination.storeBytes(of: value, as: T.self)
    size.pointee = UInt32(MemoryLayout<T>.size)
    return noErr
}

/// An answer that is only a status: why a property has no value (the HAL's, global file
/// information's and AudioFileStream's property lookups return `Result<…, StatusOnly>`).
struct StatusOnly: Error {
    let status: OSStatus
    init(_ status: OSStatus) { self.status = status }
}

/// Stores an object (a `CFString`, a `CFArray`) the way Apple's Get…Property functions return
/// one, owned by the caller: `size` in must hold a reference (else `tooSmall`), `size` out is
/// a reference's size.
func storePropertyObject<T: AnyObject>(_ value: T, into destination: UnsafeMutableRawPointer, size: UnsafeMutablePointer<UInt32>,
                                       tooSmall: OSStatus) -> OSStatus {
    guard Int(size.pointee) >= MemoryLayout<T>.size else { return tooSmall }
    destination.initializeMemory(as: T.self, repeating: value, count: 1)
    size.pointee = UInt32(MemoryLayout<T>.size)
    return noErr
}

/// Copies a variable-size property value (a magic cookie, a list): the whole value, refused
/// with `tooSmall` when `mustFit` and `size` has less room, else as much as fits; `size` then
/// says how many bytes were written.
func storePropertyBytes(_ value: [UInt8], into destination: UnsafeMutableRawPointer, size: UnsafeMutablePointer<UInt32>,
                        mustFit: Bool, tooSmall: OSStatus) -> OSStatus {
    if mustFit && Int(size.pointee) < value.count { return tooSmall }
    let count = min(value.count, Int(size.pointee))
    value.withUnsafeBytes { if let base = $0.baseAddress, count > 0 { destination.copyMemory(from: base, byteCount: count) } }
    size.pointee = UInt32(count)
    return noErr
}
