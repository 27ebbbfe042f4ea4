import AQCore
import AQMedia

/// An error of a queue call (the queue's domain): Apple's `OSStatus` code, and a message naming
/// what was wrong and what was expected. A file, format or codec error met on the way (a bad
/// format, a cookie that does not parse) keeps its own code: ``init(_:)-(AudioStatusCarrying)``.
public struct AudioQueueError: AudioStatusCarrying, Equatable {
    public let status: Int32
    public let message: String

    public init(_ status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The same code and message as another domain's error.
    public init(_ error: some AudioStatusCarrying) {
        self.init(error.status, error.message)
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
    /// `kAudioFormatUnsupportedDataFormatError` ('fmt?'): Apple's queue answers invalid formats with this code.
    public static let unsupportedDataFormatCode: Int32 = AudioFileError.unsupportedDataFormatCode
    /// `kAudio_ParamError` (-50).
    public static let parameterCode: Int32 = AudioFileError.parameterCode
}

/// Runs `body`, which throws another domain's error (a file, format or converter error), as a queue call: the error becomes an
/// ``AudioQueueError`` with the same code and message.
@inlinable
func asQueueError<Result, Failure: AudioStatusCarrying>(_ body: () throws(Failure) -> Result) throws(AudioQueueError) -> Result {
    do {
        return try body()
    } catch {
        throw AudioQueueError(error)
    }
}
