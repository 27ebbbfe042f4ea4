/// An error of the audio queue or its formats: Apple's `OSStatus` code, and a message naming
/// what was wrong and what was expected.
public struct AudioQueueError: Error, Equatable, CustomStringConvertible, Sendable {
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
    /// `kAudioQueueErr_BufferInQueue` (-66679): freeing a buffer that is enqueued.
    public static let bufferInQueueCode: Int32 = -66679
    /// `kAudioQueueErr_BufferEnqueuedTwice` (-66666).
    public static let bufferEnqueuedTwiceCode: Int32 = -66666
    /// `kAudioQueueErr_DisposalPending` (-66685).
    public static let disposalPendingCode: Int32 = -66685
    /// `kAudioQueueErr_RecordUnderrun` (-66668): data was lost because no buffer was enqueued.
    public static let recordUnderrunCode: Int32 = -66668
    /// `kAudioFormatUnsupportedDataFormatError` ('fmt?'): the stream description is inconsistent
    /// or not supported. Apple's queue answers invalid formats with this code.
    public static let unsupportedDataFormatCode: Int32 = 0x666D_743F
    /// `kAudio_ParamError` (-50).
    public static let parameterCode: Int32 = -50
}
