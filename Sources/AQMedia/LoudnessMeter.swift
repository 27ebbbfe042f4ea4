import CEBUR128
import Foundation

/// A file's loudness as EBU R 128 and Broadcast Wave version 2 give it, measured by libebur128
/// over the frames as they are written. Used on one thread (the disk writer's).
public final class LoudnessMeter {
    /// What bext version 2 holds: each in hundredths when written (LUFS, LU, dBTP).
    public struct Result: Sendable, Equatable {
        /// Integrated loudness, LUFS (-inf for silence: written as not given).
        public var integrated: Double
        /// Loudness range, LU.
        public var range: Double
        /// Largest true peak of any channel, dBTP.
        public var truePeak: Double
        /// Largest momentary (400 ms) and short-term (3 s) loudness, LUFS, read after every write.
        public var maxMomentary: Double
        public var maxShortTerm: Double
    }

    private let state: UnsafeMutablePointer<ebur128_state>
    private let channels: Int
    private var maxMomentary = -Double.infinity
    private var maxShortTerm = -Double.infinity

    /// - Returns: nil when libebur128 cannot measure this many channels at this rate.
    public init?(channels: Int, sampleRate: Double) {
        let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue
                         | EBUR128_MODE_M.rawValue | EBUR128_MODE_S.rawValue)
        guard channels > 0, let state = ebur128_init(UInt32(channels), UInt(sampleRate.rounded()), mode) else { return nil }
        self.state = state
        self.channels = channels
    }

    deinit {
        var pointer: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&pointer)
    }

    /// Adds `frames` interleaved frames.
    public func add(_ samples: UnsafePointer<Float>, frames: Int) {
        guard frames > 0 else { return }
        ebur128_add_frames_float(state, samples, frames)
        var value = 0.0
        if ebur128_loudness_momentary(state, &value) == EBUR128_SUCCESS.rawValue { maxMomentary = max(maxMomentary, value) }
        if ebur128_loudness_shortterm(state, &value) == EBUR128_SUCCESS.rawValue { maxShortTerm = max(maxShortTerm, value) }
    }

    /// The measures of every frame added so far.
    public var result: Result {
        var integrated = -Double.infinity, range = 0.0, peak = 0.0
        _ = ebur128_loudness_global(state, &integrated)
        _ = ebur128_loudness_range(state, &range)
        for channel in 0 ..< channels {
            var value = 0.0
            if ebur128_true_peak(state, UInt32(channel), &value) == EBUR128_SUCCESS.rawValue { peak = max(peak, value) }
        }
        return Result(integrated: integrated, range: range, truePeak: peak > 0 ? 20 * log10(peak) : -.infinity,
                      maxMomentary: maxMomentary, maxShortTerm: maxShortTerm)
    }
}
