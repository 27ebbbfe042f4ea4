import AQCore
import AQMedia

/// The queue domain: queue calls. Its errors (``AudioQueueError``) carry Apple's
/// kAudioQueueErr codes; a file, format or converter error met on the way keeps its own code
/// (`init(_:)`, `inDomain`).
public enum QueueErrorDomain: AudioErrorDomain {}

/// A queue call's error.
public typealias AudioQueueError = AudioDomainError<QueueErrorDomain>

extension AudioQueueError {
    /// `kAudioQueueErr_InvalidBuffer` (-66687): the buffer does not belong to this queue.
    public static var invalidBufferCode: Int32 { -66687 }
    /// `kAudioQueueErr_InvalidRunState` (-66678).
    public static var invalidRunStateCode: Int32 { -66678 }
    /// `kAudioQueueErr_InvalidProperty` (-66684).
    public static var invalidPropertyCode: Int32 { -66684 }
    /// `kAudioQueueErr_InvalidPropertySize` (-66683).
    public static var invalidPropertySizeCode: Int32 { -66683 }
    /// `kAudioQueueErr_InvalidPropertyValue` (-66675).
    public static var invalidPropertyValueCode: Int32 { -66675 }
    /// `kAudioQueueErr_InvalidDevice` (-66680): no JACK server, or no such JACK client/port.
    public static var invalidDeviceCode: Int32 { -66680 }
    /// `kAudioQueueErr_CannotStart` (-66681).
    public static var cannotStartCode: Int32 { -66681 }
    /// `kAudioQueueErr_BufferEmpty` (-66686): enqueuing a buffer with no data.
    public static var bufferEmptyCode: Int32 { -66686 }
    /// `kAudioQueueErr_EnqueueDuringReset` (-66632): enqueuing while the queue hands buffers back.
    public static var enqueueDuringResetCode: Int32 { -66632 }
    /// `kAudioQueueErr_InvalidParameter` (-66682).
    public static var invalidParameterCode: Int32 { -66682 }
    /// `kAudioQueueErr_BufferInQueue` (-66679): freeing a buffer that is enqueued.
    public static var bufferInQueueCode: Int32 { -66679 }
    /// `kAudioQueueErr_BufferEnqueuedTwice` (-66666).
    public static var bufferEnqueuedTwiceCode: Int32 { -66666 }
    /// `kAudioQueueErr_DisposalPending` (-66685).
    public static var disposalPendingCode: Int32 { -66685 }
    /// `kAudioQueueErr_RecordUnderrun` (-66668): data was lost because no buffer was enqueued.
    public static var recordUnderrunCode: Int32 { -66668 }
    /// `kAudioQueueErr_InvalidOfflineMode`: offline rendering asked of a queue not in (or not
    /// allowed to change) offline mode.
    public static var invalidOfflineModeCode: Int32 { -66626 }
    /// `kAudio_ParamError` (-50).
}
