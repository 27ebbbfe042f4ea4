import Synchronization

/// Peak and RMS of planar channels measured on the process thread over windows of whole cycles,
/// read from any thread: what a client with no queue (the plugin host) shows on a meter.
///
/// The process thread adds each cycle's buffers (``add(_:frames:)``); once a window holds at
/// least `windowFrames` frames its levels are published, per channel one atomic word (peak and
/// RMS together, so a reader never sees them from different windows), and a new window starts.
/// ``levels`` reads the latest published window.
///
/// Threads: ``add(_:frames:)`` on the process thread only (real-time safe: no allocation, lock
/// or reference counting; memory allocated at init); ``levels`` from any thread.
public final class CycleLevelMeter: @unchecked Sendable {
    /// Channels metered (buffers beyond these in ``add(_:frames:)`` are ignored).
    public let channelCount: Int
    /// Frames a window holds at least, at the driver's rate.
    public let windowFrames: Int
    /// Process thread only: the running window's peaks (linear) and sums of squares.
    private let peaks: UnsafeMutablePointer<Float>
    private let squares: UnsafeMutablePointer<Double>
    private var counted = 0
    /// Per channel the latest window's levels: peak's bits << 32 | mean square's bits (the square
    /// root is the reader's, off the process thread).
    private let published: UnsafeMutablePointer<Atomic<UInt64>>

    /// - Parameters:
    ///   - channelCount: channels metered.
    ///   - windowFrames: frames a window holds at least (rounded up to whole cycles), > 0.
    public init(channelCount: Int, windowFrames: Int) {
        precondition(windowFrames > 0, "a meter's window holds at least one frame")
        self.channelCount = channelCount
        self.windowFrames = windowFrames
        peaks = .allocate(capacity: max(1, channelCount))
        peaks.initialize(repeating: 0, count: max(1, channelCount))
        squares = .allocate(capacity: max(1, channelCount))
        squares.initialize(repeating: 0, count: max(1, channelCount))
        published = .allocate(capacity: max(1, channelCount))
        for channel in 0 ..< max(1, channelCount) { (published + channel).initialize(to: Atomic(0)) }
    }

    deinit {
        peaks.deallocate()
        squares.deallocate()
        (published).deinitialize(count: max(1, channelCount))
        published.deallocate()
    }

    /// Adds a cycle: `frames` samples of each buffer, channel by channel.
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func add(_ buffers: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frames: Int) {
        let channels = min(channelCount, buffers.count)
        for channel in 0 ..< channels {
            let samples = buffers[channel]
            var peak = peaks[channel]
            var sum = 0.0
            for frame in 0 ..< frames {
                let sample = samples[frame]
                peak = max(peak, abs(sample))
                sum += Double(sample * sample)
            }
            peaks[channel] = peak
            squares[channel] += sum
        }
        counted += frames
        guard counted >= windowFrames else { return }
        for channel in 0 ..< channels {
            let meanSquare = Float(squares[channel] / Double(counted))
            published[channel].store(UInt64(peaks[channel].bitPattern) << 32 | UInt64(meanSquare.bitPattern), ordering: .relaxed)
            peaks[channel] = 0
            squares[channel] = 0
        }
        counted = 0
    }

    /// The latest window's linear peak and RMS per channel (zeros before the first window). Any thread.
    public var levels: [(peak: Float, rms: Float)] {
        (0 ..< channelCount).map { channel in
            let word = published[channel].load(ordering: .relaxed)
            return (Float(bitPattern: UInt32(word >> 32)), Float(bitPattern: UInt32(word & 0xFFFF_FFFF)).squareRoot())
        }
    }
}
