import Foundation

/// `aqjack record --silence-alarm DBFS SECONDS`: notices when every channel has stayed below a
/// peak level for a time, and when sound returns after that. Fed one queue buffer at a time
/// with the buffer's peak over all channels (the queue's level meter), so its frames are exact
/// to one buffer (0.1 s): a silence is dated from the first buffer whose every frame was below
/// the level, a return from the first buffer with a frame at or above it. Lost frames (written
/// as silence) count as silence.
///
/// Frame positions and lengths are on the buffers' timeline (their sample times: JACK's frame
/// time, in the server's rate). A value type owned by the queue thread.
public struct SilenceAlarm: Sendable {
    /// The level, linear (10^(dBFS/20)): a buffer whose peak is below it is silent.
    public let threshold: Float
    /// How long the silence lasts before the alarm, frames.
    public let holdFrames: Double
    /// The first frame of the silence going on now, if one is.
    private var silentSince: Double?
    private var alarmed = false

    public enum Change: Equatable, Sendable {
        /// The alarm: silence since frame `since`, `frames` long so far.
        case silent(since: Double, frames: Double)
        /// Sound again at frame `at` after an alarm, the silence having lasted `silentFrames`.
        case sound(at: Double, silentFrames: Double)
    }

    /// - Parameters:
    ///   - decibels: the level, dBFS (peak).
    ///   - seconds: how long every channel stays below it before the alarm.
    ///   - sampleRate: the timeline's rate, Hz.
    public init(decibels: Double, seconds: Double, sampleRate: Double) {
        threshold = Float(pow(10, decibels / 20))
        holdFrames = seconds * sampleRate
    }

    /// Takes the next buffer: its first frame, its length and its peak (linear, every channel's
    /// largest). Returns the alarm or the return of sound when this buffer makes one.
    public mutating func observe(peak: Float, first: Double, frames: Double) -> Change? {
        if peak < threshold {
            let since = silentSince ?? first
            silentSince = since
            let length = first + frames - since
            guard !alarmed, length >= holdFrames else { return nil }
            alarmed = true
            return .silent(since: since, frames: length)
        }
        defer {
            silentSince = nil
            alarmed = false
        }
        guard alarmed, let since = silentSince else { return nil }
        return .sound(at: first, silentFrames: first - since)
    }
}
