import AQCore

/// The file domain: reading and writing files, checking stream descriptions and magic cookies.
/// Its errors (``AudioFileError``) carry AudioFile.h and AudioFormat.h codes; converters and
/// codecs throw ``AudioConverterError``, queues `AudioQueueError`, the JACK client `JackError`.
public enum FileErrorDomain: AudioErrorDomain {}

/// A file's or format's error.
public typealias AudioFileError = AudioDomainError<FileErrorDomain>

extension AudioFileError {
    // AudioFile.h result codes.
    /// `kAudioFileUnspecifiedError` ('wht?').
    public static var fileUnspecifiedCode: Int32 { 0x7768_743F }
    /// `kAudioFileUnsupportedFileTypeError` ('typ?').
    public static var fileUnsupportedTypeCode: Int32 { 0x7479_703F }
    /// `kAudioFileUnsupportedDataFormatError` ('fmt?'), the same value as the format error.
    public static var fileUnsupportedDataFormatCode: Int32 { 0x666D_743F }
    /// `kAudioFileUnsupportedPropertyError` ('pty?').
    public static var fileUnsupportedPropertyCode: Int32 { 0x7074_793F }
    /// `kAudioFileBadPropertySizeError` ('!siz').
    public static var fileBadPropertySizeCode: Int32 { 0x2173_697A }
    /// `kAudioFilePermissionsError` ('prm?').
    public static var filePermissionsCode: Int32 { 0x7072_6D3F }
    /// `kAudioFileInvalidPacketOffsetError` ('pck?').
    public static var fileInvalidPacketOffsetCode: Int32 { 0x7063_6B3F }
    /// `kAudioFileInvalidFileError` ('dta?').
    public static var fileInvalidFileCode: Int32 { 0x6474_613F }
    /// `kAudioFileNotOpenError` (-38).
    public static var fileNotOpenCode: Int32 { -38 }
    /// `kAudioFileFileNotFoundError` (-43).
    public static var fileNotFoundCode: Int32 { -43 }
}
