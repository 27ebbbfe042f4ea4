import CAudioTypes

/// Running level-meter sums per channel (squares for the RMS, peaks), as both queue directions
/// meter their frames (`kAudioQueueProperty_CurrentLevelMeter`): a recording queue over each
/// buffer, a playback queue over each 1024-frame block going into its ring. Queue thread.
struct LevelSums {
    private var squares: [Double]
    private var peaks: [Float]

    init(channelCount: Int) {
        squares = Array(repeating: 0, count: channelCount)
        peaks = Array(repeating: 0, count: channelCount)
    }

    var channelCount: Int { squares.count }

    /// Adds `frameCount` interleaved frames.
    mutating func add(_ samples: UnsafePointer<Float>, frameCount: Int) {
        let channels = squares.count
        // Through fresh local copies of the sums, once per call: every access to an array
        // property is an exclusivity check, which per sample cost more than the rest of the
        // path; and the peaks, written in the array's own buffer, might alias `samples` as far
        // as the compiler knows, which kept the channel loop scalar (perf: 14 % of a 1024-channel
        // aqjack record, more than interleaving the channels).
        withUnsafeTemporaryAllocation(of: Double.self, capacity: channels) { localSquares in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: channels) { localPeaks in
                squares.withUnsafeBufferPointer { _ = localSquares.initialize(fromContentsOf: $0) }
                peaks.withUnsafeBufferPointer { _ = localPeaks.initialize(fromContentsOf: $0) }
                for frame in 0 ..< frameCount {
                    let row = samples + frame * channels
                    for channel in 0 ..< channels {
                        let sample = row[channel]
                        localSquares[channel] += Double(sample * sample)
                        localPeaks[channel] = max(localPeaks[channel], abs(sample))
                    }
                }
                squares.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: localSquares) }
                peaks.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: localPeaks) }
            }
        }
    }

    /// Each channel's RMS and peak over `frameCount` frames; the sums start again.
    mutating func take(frameCount: Int) -> [AudioQueueLevelMeterState] {
        defer {
            for channel in squares.indices {
                squares[channel] = 0
                peaks[channel] = 0
            }
        }
        return squares.indices.map {
            AudioQueueLevelMeterState(mAveragePower: Float((squares[$0] / Double(max(1, frameCount))).squareRoot()), mPeakPower: peaks[$0])
        }
    }
}
