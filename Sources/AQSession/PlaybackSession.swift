import AQCodecs
import AQCore
import AudioQueue
import CAudioTypes
import Synchronization

/// Files in sequence (looped as asked) played by an output queue on any driver (`aqjack play`):
/// the queue's callback refills each buffer from the ``FileSequence``; once everything has been
/// read the queue drains and stops by itself, and the session has ended.
///
/// The start is arranged for a fast first sound: the first buffer holds only ``firstFrames`` and
/// is filled on a helper thread while the caller connects the ports (a server round trip each);
/// the other buffers are filled right after the start, while the first plays.
///
/// Threads: ``start(atFrame:meanwhile:)`` and ``stop()`` from the thread that owns the session;
/// the refills on the queue thread; the counters from any thread.
public final class PlaybackSession: @unchecked Sendable {
    public let files: FileSequence
    public let queue: AudioOutputQueue
    /// Frames per buffer (at the files' rate): 0.1 s.
    public let bufferFrames: Int
    /// Buffers the queue cycles through.
    public static let bufferCount = 3
    /// Frames in the first buffer, filled before the start: 40 ms (15 periods of 128 at 48 kHz).
    /// Filled fully, the 10 MB of three buffers at 256 channels were copied while the caller made
    /// its connections, and the server's side of each connect shared the CPUs with that copy.
    public let firstFrames: Int
    private let deviceRate: Double

    private static func bufferFrames(sampleRate: Double) -> Int { max(1, Int(sampleRate) / 10) }
    /// The frames every buffer holds at the start: what to read ahead.
    public static func readAheadFrames(sampleRate: Double) -> Int { bufferCount * bufferFrames(sampleRate: sampleRate) }
    private let ended = Atomic<Bool>(false)

    /// Makes the queue (interleaved Floats in the files' shape) on `driver`; nothing plays yet.
    /// Starts reading the first buffers' frames ahead on a helper thread, unless the caller
    /// already did (``readAheadFrames(sampleRate:)``, before opening the driver).
    public init(files: FileSequence, driver: any AudioDriver) throws(AudioQueueError) {
        self.files = files
        bufferFrames = Self.bufferFrames(sampleRate: files.sampleRate)
        firstFrames = max(1, Int(files.sampleRate) / 25)
        deviceRate = Double(driver.sampleRate)
        let format = CompressedFormatValues.floatPCM(sampleRate: files.sampleRate, channelCount: files.channelCount)
        files.startReadAhead(frames: Self.readAheadFrames(sampleRate: files.sampleRate))
        queue = try AudioOutputQueue(format: format, driver: driver) { queue, buffer in
            if !files.feed(buffer, to: queue), files.finish() { queue.stop(immediate: false) }
        }
        queue.onRunningChange = { [weak self] running in if !running { self?.ended.store(true, ordering: .releasing) } }
    }

    /// Fills the first buffer (on a helper thread, while `meanwhile` runs on this one), primes,
    /// starts at device frame `frame` (nil: the next cycle), then fills the other buffers.
    public func start(atFrame frame: UInt64? = nil, meanwhile: () throws(AudioQueueError) -> Void = {}) throws(AudioQueueError) {
        let byteCapacity = 4 * files.channelCount * bufferFrames
        let (files, queue, firstFrames) = (files, queue, firstFrames)
        let filling = BackgroundValue {
            Result { () throws(AudioQueueError) in
                let buffer = try queue.allocateBuffer(byteCapacity: byteCapacity)
                _ = files.feed(buffer, to: queue, maximumFrames: firstFrames)
            }
        }
        let done = Result { () throws(AudioQueueError) in try meanwhile() }
        try filling.take().get()
        try done.get()
        if files.finish() { queue.stop(immediate: false) }
        queue.prime()
        try queue.start(atFrame: frame)
        for _ in 1 ..< Self.bufferCount {
            let buffer = try queue.allocateBuffer(byteCapacity: byteCapacity)
            if !files.feed(buffer, to: queue), files.finish() { queue.stop(immediate: false) }
        }
    }

    /// Whether the queue has stopped (the files played to their end, or ``stop()``).
    public var hasEnded: Bool { ended.load(ordering: .acquiring) }

    /// Stops at once (what was not played is dropped).
    public func stop() { queue.stop(immediate: true) }

    /// Frames played, at the files' rate (the device's frames converted).
    public var framesPlayed: Int64 {
        Int64((Double(queue.playedFrameCount) * files.sampleRate / deviceRate).rounded())
    }
}
