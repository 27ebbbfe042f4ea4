import AQMedia
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Takes that start and stop by themselves, decided on the queue thread (`aqjack record
/// --trigger DBFS [--hold SECONDS]` and `--armed`, each with an optional `--pre-roll SECONDS`):
///
/// - a level (`--trigger`): a take starts at the first frame in which any channel's peak reaches the level
///   (|sample| ≥ 10^(dBFS/20)), and ends `hold` seconds after the last such frame (those frames
///   included); then the recorder is armed again. Decided frame by frame on the delivered
///   samples, so the cut is at the frame, not at a period.
/// - a signal (`--armed`): each SIGUSR1 toggles recording, at the first frame of the next buffer the queue
///   delivers (within 0.1 s).
/// - commands (``request(_:)``: `--osc`, alone or with a level): start, stop and split at the first
///   frame of the next buffer; with `--trigger`, a take started so ends by the hold rule, and
///   the level starts the next.
/// - a pre-roll: while waiting, the last `pre-roll` seconds are kept in memory; a take starts
///   with them, so its first frame is exactly pre-roll × rate frames before the trigger frame
///   (fewer only when the recording has not run that long, or a pause broke the history).
///
/// Every take's BWF TimeReference is the device frame time of its first frame, in the takes' rate.
/// Frame positions (`first` of ``takeFrames(_:frames:at:into:)``) are in the takes' rate.
public final class TriggerController: TakeController, @unchecked Sendable {
    /// What starts takes: a peak level (linear, 0 ... 1), or SIGUSR1 (and commands).
    public enum Start: Sendable { case level(Float), signal }
    /// What a control surface asks for, carried out at the next buffer's first frame.
    public enum Request: Sendable { case start, stop, split }

    /// SIGUSR1s received (``Start/signal``); each one not yet applied toggles recording.
    public let toggleRequests = Atomic<Int>(0)
    private var appliedToggles = 0
    /// The requests for the next buffer: a request that repeats the one before it counts once,
    /// and at most ``requestsPerBuffer`` are kept (a later one replaces the last), so a flood of
    /// commands makes at most a few take changes a buffer.
    private let pending = Mutex<[Request]>([])
    static let requestsPerBuffer = 4
    private let start: Start
    private let holdFrames: Int
    private let bytesPerFrame: Int
    private let channelCount: Int
    /// The last frames while waiting: a ring of `preRollFrames` frames, in the files' layout,
    /// `historyCount` of them valid, the newest ending at frame `historyEnd`.
    private let preRollFrames: Int
    private let history: UnsafeMutableRawPointer
    private var historyStart = 0
    private var historyCount = 0
    private var historyEnd = 0.0
    /// The latest frame at or above the level in the take being written.
    private var lastLoudFrame = 0.0
    private var decoded: [Float] = []

    /// - Parameters:
    ///   - layout: the takes' frames (``TakeFiles/layout``).
    ///   - holdSeconds: how long a level-started take goes on after its last loud frame.
    ///   - preRollSeconds: how much of what came before its start a take begins with.
    ///   - sampleRate: the takes' rate, Hz.
    public init(layout: LinearPCMLayout, start: Start, holdSeconds: Double, preRollSeconds: Double, sampleRate: Double) {
        self.start = start
        holdFrames = Int((holdSeconds * sampleRate).rounded())
        preRollFrames = Int((preRollSeconds * sampleRate).rounded())
        bytesPerFrame = layout.bytesPerFrame
        channelCount = layout.channelCount
        self.layout = layout
        history = .allocate(byteCount: max(1, preRollFrames * bytesPerFrame), alignment: 16)
    }
    private let layout: LinearPCMLayout

    deinit { history.deallocate() }

    /// The SIGUSR1 source (``Start/signal``), kept while the session lives.
    private var signalSource: DispatchSourceSignal?

    /// Counts SIGUSR1 into ``toggleRequests`` from now on (the signal no longer kills the
    /// process). Call before any port connects, so a script that waits for the connection and
    /// then signals never hits the default action.
    public func listenForToggleSignal() {
        signal(SIGUSR1, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        source.setEventHandler { [weak self] in self?.toggleRequests.add(1, ordering: .releasing) }
        source.resume()
        signalSource = source
    }


    /// Asks for a take to start, stop or split (sample continuous) at the next buffer. Any thread.
    public func request(_ request: Request) {
        pending.withLock { queue in
            if queue.last == request { return }
            if queue.count == Self.requestsPerBuffer { queue.removeLast() }
            queue.append(request)
        }
    }
    public func takeFrames(_ data: UnsafeRawPointer, frames: Int, at first: Double, into takes: TakeFiles) throws(AudioFileError) -> Bool {
        var done = 0
        // SIGUSR1: toggle at this buffer's first frame.
        let toggles = toggleRequests.load(ordering: .acquiring)
        if case .signal = start, toggles != appliedToggles {
            let flips = toggles - appliedToggles
            appliedToggles = toggles
            if flips % 2 == 1 {
                if takes.isRecording { try takes.end() } else { try beginTake(at: first, in: takes) }
            }
        }
        // OSC: start, stop, or split (the next take's first frame follows the last's).
        for request in pending.withLock({ queue in defer { queue.removeAll(keepingCapacity: true) }; return queue }) {
            switch request {
            case .start:
                if !takes.isRecording {
                    try beginTake(at: first, in: takes)
                    // With --trigger, a take started on command ends as a triggered one does:
                    // `hold` after the last loud frame, and at least `hold` frames long (as if
                    // the frame before its first had been loud).
                    lastLoudFrame = first - 1
                }
            case .stop: try takes.end()
            case .split:
                if takes.isRecording {
                    try takes.end()
                    try beginTake(at: first, in: takes)
                }
            }
        }
        if case .level(let threshold) = start {
            if decoded.count < frames * channelCount { decoded = [Float](repeating: 0, count: frames * channelCount) }
            decoded.withUnsafeMutableBufferPointer { layout.decode(from: data, into: $0.baseAddress!, count: frames * channelCount) }
            while done < frames {
                if takes.isRecording {
                    // Through the hold after the last loud frame, then the take ends.
                    var end = frames
                    for frame in done ..< frames {
                        if isLoud(frame, threshold) { lastLoudFrame = first + Double(frame) }
                        if first + Double(frame) - lastLoudFrame > Double(holdFrames) { end = frame; break }
                    }
                    try takes.write(data + done * bytesPerFrame, frames: end - done)
                    done = end
                    if end < frames { try takes.end() }
                } else {
                    var trigger = frames
                    for frame in done ..< frames where isLoud(frame, threshold) { trigger = frame; break }
                    remember(data + done * bytesPerFrame, frames: trigger - done, at: first + Double(done))
                    done = trigger
                    if trigger < frames {
                        lastLoudFrame = first + Double(trigger)
                        try beginTake(at: first + Double(trigger), in: takes)
                    }
                }
            }
        } else if takes.isRecording {
            try takes.write(data, frames: frames)
        } else {
            remember(data, frames: frames, at: first)
        }
        return true
    }

    /// Whether any channel of `frame` (of ``decoded``) reaches `threshold`.
    private func isLoud(_ frame: Int, _ threshold: Float) -> Bool {
        let base = frame * channelCount
        for channel in 0 ..< channelCount where abs(decoded[base + channel]) >= threshold { return true }
        return false
    }

    /// Starts a take at device frame `trigger`, with the pre-roll the history holds before it.
    private func beginTake(at trigger: Double, in takes: TakeFiles) throws(AudioFileError) {
        // The history counts only if it ends right before the trigger (not before a pause).
        let count = Self.follows(historyEnd, trigger) ? historyCount : 0
        let firstFrame = trigger - Double(count)
        try takes.begin(at: firstFrame, timeReference: UInt64(max(0, firstFrame.rounded())))
        if count > 0 {
            let head = min(count, preRollFrames - historyStart)
            try takes.write(history + historyStart * bytesPerFrame, frames: head)
            try takes.write(history, frames: count - head)
        }
        historyStart = 0
        historyCount = 0
    }

    /// Whether a frame at `next` follows one that ended at `end` (positions in the takes' rate,
    /// fractional when resampled: within half a frame).
    private static func follows(_ end: Double, _ next: Double) -> Bool { abs(next - end) < 0.5 }

    /// Keeps the newest `preRollFrames` of the frames seen while waiting; a jump since the last
    /// ones (a pause) starts the history afresh.
    private func remember(_ bytes: UnsafeRawPointer, frames: Int, at sampleTime: Double) {
        guard preRollFrames > 0, frames > 0 else { return }
        if !Self.follows(historyEnd, sampleTime) { historyStart = 0; historyCount = 0 }
        historyEnd = sampleTime + Double(frames)
        let kept = min(frames, preRollFrames)
        let source = bytes + (frames - kept) * bytesPerFrame
        for index in 0 ..< kept {
            let slot = (historyStart + historyCount) % preRollFrames
            (history + slot * bytesPerFrame).copyMemory(from: source + index * bytesPerFrame, byteCount: bytesPerFrame)
            if historyCount < preRollFrames { historyCount += 1 } else { historyStart = (historyStart + 1) % preRollFrames }
        }
    }
}
