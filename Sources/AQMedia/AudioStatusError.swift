/// What every aqjack error carries whatever its domain (``AudioStatusError`` for files, formats
/// and codecs; `AudioQueueError` for queues; `JackError` for the JACK client): Apple's
/// `OSStatus` and a message naming what was wrong and what was expected.
public protocol AudioStatusCarrying: Error, CustomStringConvertible, Sendable {
    /// The Apple `OSStatus` the error corresponds to.
    var status: Int32 { get }
    /// What was wrong and what was expected.
    var message: String { get }
}

/// An error of a file, a format or a codec: Apple's `OSStatus` code (AudioFile.h, AudioFormat.h,
/// AudioConverter.h values), and a message naming what was wrong and what was expected.
/// `AudioFileError` is its name in the file domain.
public struct AudioStatusError: AudioStatusCarrying, Equatable {
    /// The Apple `OSStatus` this error corresponds to.
    public let status: Int32
    public let message: String

    public init(_ status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(message) (OSStatus \(status))" }

    /// `kAudioFormatUnsupportedDataFormatError` ('fmt?'): the stream description is inconsistent
    /// or not supported. Apple's queue answers invalid formats with this code.
    public static let unsupportedDataFormatCode: Int32 = 0x666D_743F
    /// `kAudio_ParamError` (-50).
    public static let parameterCode: Int32 = -50

    // AudioFile.h result codes.
    /// `kAudioFileUnspecifiedError` ('wht?').
    public static let fileUnspecifiedCode: Int32 = 0x7768_743F
    /// `kAudioFileUnsupportedFileTypeError` ('typ?').
    public static let fileUnsupportedTypeCode: Int32 = 0x7479_703F
    /// `kAudioFileUnsupportedDataFormatError` ('fmt?'), the same value as the format error.
    public static let fileUnsupportedDataFormatCode: Int32 = 0x666D_743F
    /// `kAudioFileUnsupportedPropertyError` ('pty?').
    public static let fileUnsupportedPropertyCode: Int32 = 0x7074_793F
    /// `kAudioFileBadPropertySizeError` ('!siz').
    public static let fileBadPropertySizeCode: Int32 = 0x2173_697A
    /// `kAudioFilePermissionsError` ('prm?').
    public static let filePermissionsCode: Int32 = 0x7072_6D3F
    /// `kAudioFileInvalidPacketOffsetError` ('pck?').
    public static let fileInvalidPacketOffsetCode: Int32 = 0x7063_6B3F
    /// `kAudioFileInvalidFileError` ('dta?').
    public static let fileInvalidFileCode: Int32 = 0x6474_613F
    /// `kAudioFileNotOpenError` (-38).
    public static let fileNotOpenCode: Int32 = -38
    /// `kAudioFileFileNotFoundError` (-43).
    public static let fileNotFoundCode: Int32 = -43
}

/// Errors of AudioFile calls.
public typealias AudioFileError = AudioStatusError
