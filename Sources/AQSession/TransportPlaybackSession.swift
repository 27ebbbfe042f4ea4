import AQCodecs
import AQCore
import AQMedia
import Foundation
import Synchronization

/// A file on the transport's timeline (`aqjack play --transport`), on any driver with a
/// transport (``AudioTransport``: JACK's, or the offline driver's): while the transport rolls at
/// transport frame `p`, the channels play the file's frame `p`, as a DAW track would (file frame
/// 0 at transport frame 0; silence before and past its end, and while stopped). The session is a
/// slow-sync client: a start or locate waits until the ring holds the new position, so the
/// first rolling frame is the file's (JACK waits up to its sync timeout, 2 s by default).
///
/// A ``TransportPlaybackProcessor`` plays from a planar ring of one second; a feeder reads the
/// file into it from the position the process thread asks for: the `aqjack-feed` thread, or on a
/// caller-clocked driver the end of each run (so run a starting transport a cycle or a few at a
/// time: each run's end is when the file arrives).
///
/// Threads: ``start()`` and ``stop()`` from the thread that owns the session; the counters from
/// any thread.
public final class TransportPlaybackSession: @unchecked Sendable {
    public let driver: any AudioDriver
    /// The output channels' full names, one per file channel (`<driver>:out_1` ...).
    public let channels: [String]
    private let processor: TransportPlaybackProcessor
    private let feed: TransportFeed
    private let done = Atomic<Bool>(false)
    private let failed = Mutex<String?>(nil)
    private var thread: Thread?
    /// The feeder thread's name (at most 15 bytes).
    public static let threadName = "aqjack-feed"

    /// Makes one output channel per channel of `source` on `driver`; nothing plays until
    /// ``start()``.
    /// - Throws: a file at another rate than the device's (the transport counts device frames),
    ///   or channels the driver refuses.
    public init(source: FrameSource, driver: any AudioDriver) throws(AudioDriverError) {
        guard source.sampleRate == Double(driver.sampleRate) else {
            let rate = source.sampleRate.rounded() == source.sampleRate ? "\(Int(source.sampleRate))" : "\(source.sampleRate)"
            throw AudioDriverError("a file plays frame for frame on the transport: '\(source.path)' is at \(rate) Hz, '\(driver.name)' at \(driver.sampleRate) Hz (convert it with aqjack convert -r \(driver.sampleRate))")
        }
        self.driver = driver
        channels = try driver.makeChannels(prefix: "out_", count: source.channelCount, direction: .output)
        // One second of ring; a start waits for a quarter of it at the new position.
        let (processor, feeder) = TransportPlaybackProcessor.make(channelCount: source.channelCount, capacityFrames: driver.sampleRate,
                                                                  readyFrames: driver.sampleRate / 4, meterWindowFrames: max(1, driver.sampleRate / 20))
        self.processor = processor
        feed = TransportFeed(source: source, feeder: feeder)
    }

    /// Starts the cycles and the feeding.
    public func start() throws(AudioDriverError) {
        try driver.start(processor: processor)
        if driver.isClockedByCaller {
            driver.onRunEnd { [weak self] in self?.pumpOnce() }
        } else {
            let thread = Thread { [self] in
                ThreadNaming.nameCurrentThread(Self.threadName)
                feedUntilStopped()
            }
            thread.name = Self.threadName
            thread.start()
            self.thread = thread
        }
    }

    /// Stops the cycles and the feeding (waits for the feeder thread to end).
    public func stop() {
        done.store(true, ordering: .releasing)
        if let thread { while !thread.isFinished { usleep(1000) } }
        thread = nil
        driver.stop()
    }

    /// Why feeding stopped, when the file failed (the rest plays as silence, counted missed).
    public var failure: String? { failed.withLock { $0 } }
    /// The outputs' levels as played, over windows of whole cycles of at least 50 ms. Any thread.
    public var outputLevels: CycleLevelMeter { processor.meter }
    /// Whether the transport rolled in the latest cycle. Any thread.
    public var isRolling: Bool { processor.isRolling.load(ordering: .relaxed) }
    /// Frames played from the file while the transport rolled.
    public var framesPlayed: Int { processor.playedFrameCount.load(ordering: .relaxed) }
    /// Frames the transport rolled over while the file's were not ready (silence): a master that
    /// does not wait for slow-sync clients, a feeder that fell behind, a damaged file.
    public var missedFrames: Int { processor.missedFrameCount.load(ordering: .relaxed) }
    /// Seeks the transport asked for (locates, the first roll).
    public var seeks: Int { processor.seekCount.load(ordering: .relaxed) }

    private func feedUntilStopped() {
        while !done.load(ordering: .acquiring), failure == nil {
            if !pumpOnce(seekWaitMilliseconds: 100) { feed.feeder.waitForCycle(milliseconds: 5) }
        }
    }

    @discardableResult
    private func pumpOnce(seekWaitMilliseconds: Int = 0) -> Bool {
        guard failure == nil, !done.load(ordering: .acquiring) else { return false }
        do throws(AudioFileError) {
            return try feed.pump(seekWaitMilliseconds: seekWaitMilliseconds)
        } catch {
            failed.withLock { $0 = error.message }
            return false
        }
    }
}
