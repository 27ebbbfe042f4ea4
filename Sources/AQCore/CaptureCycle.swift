/// What the process thread records about one captured cycle, passed in-band with its samples
/// (jack_capture's `buffer->overruns`).
@frozen
public struct CaptureCycle: BitwiseCopyable, Equatable, Sendable {
    /// JACK frame time of the first frame, extended to 64 bits so it never wraps.
    public var frameTime: UInt64
    /// Frames in the cycle; the ring holds its `frameCount × channelCount` samples as one planar
    /// block (channel after channel; ``CaptureReader`` hands them on interleaved).
    public var frameCount: Int
    /// Frames the process thread had to drop since the previous record because the ring was full.
    public var droppedFramesBefore: Int
    /// Microseconds (`jack_get_time` clock) at which the cycle started, and the server's estimate
    /// of the next cycle's start: together they map frames to host time.
    public var cycleStartMicros: UInt64
    public var nextCycleStartMicros: UInt64
    /// Whether JACK's transport rolled during the cycle, and the transport frame of the
    /// record's first frame.
    public var transportRolling: Bool
    public var transportFrame: UInt64

    @inlinable
    public init(frameTime: UInt64, frameCount: Int, droppedFramesBefore: Int,
                cycleStartMicros: UInt64, nextCycleStartMicros: UInt64,
                transportRolling: Bool = false, transportFrame: UInt64 = 0) {
        self.frameTime = frameTime
        self.frameCount = frameCount
        self.droppedFramesBefore = droppedFramesBefore
        self.cycleStartMicros = cycleStartMicros
        self.nextCycleStartMicros = nextCycleStartMicros
        self.transportRolling = transportRolling
        self.transportFrame = transportFrame
    }
}
