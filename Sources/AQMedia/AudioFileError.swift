import AQCore

/// An error of a file or a format (the file domain: reading and writing files, checking stream
/// descriptions and magic cookies): Apple's `OSStatus` code (AudioFile.h and AudioFormat.h
/// values), and a message naming what was wrong and what was expected. Converters and codecs
/// throw ``AudioConverterError``, queues `AudioQueueError`, the JACK client `JackError`.
public struct AudioFileError: AudioStatusCarrying, Equatable {
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
