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
        // Through local buffers, once per call: every access to an array property is an
        // exclusivity check, which per sample cost more than the rest of the path.
        squares.withUnsafeMutableBufferPointer { squares in
            peaks.withUnsafeMutableBufferPointer { peaks in
                for frame in 0 ..< frameCount {
                    for channel in 0 ..< channels {
                        let sample = samples[frame * channels + channel]
                        squares[channel] += Double(sample * sample)
                        peaks[channel] = max(peaks[channel], abs(sample))
                    }
                }
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
