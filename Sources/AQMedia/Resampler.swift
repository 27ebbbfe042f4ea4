import CSampleRate

/// Sample-rate conversion of interleaved Float frames through libsamplerate.
///
/// libsamplerate compensates its own filter delay: output frame `k` corresponds to input time
/// `k / ratio` from the first input frame, and the frames the filter still holds come out when
/// ``flush(_:)`` is called. Not real-time: runs on the queue thread. Not thread-safe.
public final class Resampler {
    /// Apple's `kAudioConverterSampleRateConverterQuality` values mapped onto libsamplerate's
    /// converters: Max and High → SRC_SINC_BEST_QUALITY, Medium → SRC_SINC_MEDIUM_QUALITY,
    /// Low → SRC_SINC_FASTEST, Min → SRC_LINEAR.
    public enum Quality: Sendable {
        case best, medium, fastest, linear

        /// From Apple's 0 ... 0x7F quality scale (Max 0x7F, High 0x60, Medium 0x40, Low 0x20, Min 0).
        public init(appleQuality value: UInt32) {
            switch value {
            case 0x60...: self = .best
            case 0x40 ..< 0x60: self = .medium
            case 0x20 ..< 0x40: self = .fastest
            default: self = .linear
            }
        }

        var converter: Int32 {
            switch self {
            case .best: Int32(SRC_SINC_BEST_QUALITY)
            case .medium: Int32(SRC_SINC_MEDIUM_QUALITY)
            case .fastest: Int32(SRC_SINC_FASTEST)
            case .linear: Int32(SRC_LINEAR)
            }
        }
    }

    public let channelCount: Int
    /// Output rate over input rate.
    public let ratio: Double
    private let state: OpaquePointer
    private var output: [Float]

    public init(channelCount: Int, ratio: Double, quality: Quality) throws(AudioConverterError) {
        var error: Int32 = 0
        guard src_is_valid_ratio(ratio) != 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "sample-rate ratio \(ratio) is outside what libsamplerate converts (1/256 ... 256)")
        }
        guard let state = src_new(quality.converter, Int32(channelCount), &error) else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "libsamplerate: \(String(cString: src_strerror(error)))")
        }
        self.state = state
        self.channelCount = channelCount
        self.ratio = ratio
        output = [Float](repeating: 0, count: 4096 * channelCount)
    }

    deinit { src_delete(state) }

    /// Converts `frameCount` interleaved frames, handing the output to `body` in pieces.
    public func process(_ input: UnsafePointer<Float>, frameCount: Int, _ body: (UnsafePointer<Float>, Int) -> Void) {
        run(input, frameCount: frameCount, endOfInput: false, body)
    }

    /// Hands out what the filter still holds (its delay line), then starts afresh.
    public func flush(_ body: (UnsafePointer<Float>, Int) -> Void) {
        var none: Float = 0
        run(&none, frameCount: 0, endOfInput: true, body)
        src_reset(state)
    }

    /// Forgets all history (after a discontinuity).
    public func reset() { src_reset(state) }

    private func run(_ input: UnsafePointer<Float>, frameCount: Int, endOfInput: Bool, _ body: (UnsafePointer<Float>, Int) -> Void) {
        var used = 0
        let outputFrames = output.count / channelCount
        while true {
            var generated = 0
            var inputUsed = 0
            output.withUnsafeMutableBufferPointer { out in
                var data = SRC_DATA(data_in: input + used * channelCount, data_out: out.baseAddress,
                                    input_frames: Int(frameCount - used), output_frames: Int(outputFrames),
                                    input_frames_used: 0, output_frames_gen: 0, end_of_input: endOfInput ? 1 : 0, src_ratio: ratio)
                src_process(state, &data)
                generated = Int(data.output_frames_gen)
                inputUsed = Int(data.input_frames_used)
            }
            used += inputUsed
            if generated > 0 { output.withUnsafeBufferPointer { body($0.baseAddress!, generated) } }
            if generated == 0 && (used >= frameCount) { break }
            if !endOfInput && used >= frameCount && generated < outputFrames { break }
        }
    }
}
