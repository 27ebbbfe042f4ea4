/// An error of the queue, a file or a format: Apple's `OSStatus` code, and a message naming what
/// was wrong and what was expected. `AudioQueueError` and `AudioFileError` are its names in
/// their domains.
public struct AudioStatusError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The Apple `OSStatus` this error corresponds to.
    public let status: Int32
    public let message: String

    public init(_ status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(message) (OSStatus \(status))" }

    /// `kAudioQueueErr_InvalidBuffer` (-66687): the buffer does not belong to this queue.
    public static let invalidBufferCode: Int32 = -66687
    /// `kAudioQueueErr_InvalidRunState` (-66678).
    public static let invalidRunStateCode: Int32 = -66678
    /// `kAudioQueueErr_InvalidProperty` (-66684).
    public static let invalidPropertyCode: Int32 = -66684
    /// `kAudioQueueErr_InvalidPropertySize` (-66683).
    public static let invalidPropertySizeCode: Int32 = -66683
    /// `kAudioQueueErr_InvalidPropertyValue` (-66675).
    public static let invalidPropertyValueCode: Int32 = -66675
    /// `kAudioQueueErr_InvalidDevice` (-66680): no JACK server, or no such JACK client/port.
    public static let invalidDeviceCode: Int32 = -66680
    /// `kAudioQueueErr_CannotStart` (-66681).
    public static let cannotStartCode: Int32 = -66681
    /// `kAudioQueueErr_BufferEmpty` (-66686): enqueuing a buffer with no data.
    public static let bufferEmptyCode: Int32 = -66686
    /// `kAudioQueueErr_EnqueueDuringReset` (-66632): enqueuing while the queue hands buffers back.
    public static let enqueueDuringResetCode: Int32 = -66632
    /// `kAudioQueueErr_InvalidParameter` (-66682).
    public static let invalidParameterCode: Int32 = -66682
    /// `kAudioQueueErr_BufferInQueue` (-66679): freeing a buffer that is enqueued.
    public static let bufferInQueueCode: Int32 = -66679
    /// `kAudioQueueErr_BufferEnqueuedTwice` (-66666).
    public static let bufferEnqueuedTwiceCode: Int32 = -66666
    /// `kAudioQueueErr_DisposalPending` (-66685).
    public static let disposalPendingCode: Int32 = -66685
    /// `kAudioQueueErr_RecordUnderrun` (-66668): data was lost because no buffer was enqueued.
    public static let recordUnderrunCode: Int32 = -66668
    /// `kAudioQueueErr_InvalidOfflineMode`: offline rendering asked of a queue not in (or not
    /// allowed to change) offline mode.
    public static let invalidOfflineModeCode: Int32 = -66626
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
