import AQCore
import CSampleRate
import CSoxr

/// Sample-rate conversion of interleaved Float frames, through libsoxr (the default: the fastest
/// and cleanest here) or libsamplerate (the design's named dependency, still selectable).
///
/// Both engines compensate their filter's delay: output frame `k` corresponds to input time
/// `k / ratio` from the first input frame, and the frames the filter still holds come out when
/// ``flush(_:)`` is called. Not real-time: runs on the queue thread (libsoxr on one thread, none
/// of its own). Not thread-safe.
public final class Resampler {
    /// Which library converts.
    public enum Engine: String, Sendable, CaseIterable {
        /// libsoxr 0.1.3: `best` is its very-high-quality recipe (28-bit, 150 dB here).
        case soxr
        /// libsamplerate: `best` is SRC_SINC_BEST_QUALITY (10× slower than libsoxr here).
        case libsamplerate

        /// What an engine is called on command lines and in messages.
        public static var names: String { allCases.map(\.rawValue).joined(separator: " or ") }
    }

    /// Apple's `kAudioConverterSampleRateConverterQuality` values, mapped onto each engine:
    ///
    /// | quality | libsoxr | libsamplerate (named) |
    /// |---|---|---|
    /// | Max, High (`best`) | VHQ (28-bit) | SRC_SINC_BEST_QUALITY |
    /// | Medium | HQ (20-bit) | SRC_SINC_MEDIUM_QUALITY |
    /// | Low (`fastest`), Min (`linear`) | 16-bit | SRC_SINC_FASTEST, SRC_LINEAR |
    ///
    /// Every setting of both engines keeps the passband flat within 0.1 dB to 20 kHz (or, when
    /// the lower of the two rates is under 42.6 kHz, as far as libsamplerate's best converter
    /// does): quality buys stopband and noise, never treble.
    /// - libsoxr: its 16-bit recipe with the small rolloff, not its LQ and MQ ones, which lose
    ///   0.2 dB at 20 kHz (measured), so Low and Min are the same there.
    /// - libsamplerate: the named converter when its passband reaches that far, else the next
    ///   better one that does (see ``libsamplerateConverter(lowerRate:)``). At 44.1 kHz every
    ///   quality is SRC_SINC_BEST_QUALITY (named medium lost 3.25 dB at 20 kHz, fastest 22.8 dB);
    ///   from 48 kHz up, Medium keeps SRC_SINC_MEDIUM_QUALITY and Low and Min get it.
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

        /// libsamplerate's converters from the cheapest up, each with how far its passband
        /// stays flat within 0.1 dB, as a fraction of the lower rate's Nyquist frequency:
        /// measured here with sines (48 ↔ 44.1, 48 → 96, 96 → 48, 44.1 → 88.2, 48 → 192 kHz, the
        /// same in all). SRC_LINEAR's droops 0.1 dB below half the Nyquist frequency already.
        static let libsamplerateConverters: [(converter: Int32, name: String, flatFraction: Double)] = [
            (Int32(SRC_LINEAR), "SRC_LINEAR", 0),
            (Int32(SRC_SINC_FASTEST), "SRC_SINC_FASTEST", 0.71),
            (Int32(SRC_SINC_MEDIUM_QUALITY), "SRC_SINC_MEDIUM_QUALITY", 0.86),
            (Int32(SRC_SINC_BEST_QUALITY), "SRC_SINC_BEST_QUALITY", 0.94),
        ]

        /// The libsamplerate converter for this quality when the lower of the input and output
        /// rates is `lowerRate` Hz: the one the quality names, or the first better one whose flat
        /// passband reaches 20 kHz (or as far as the best one's does, for rates under 42.6 kHz).
        public func libsamplerateConverter(lowerRate: Double) -> (converter: Int32, name: String) {
            let converters = Self.libsamplerateConverters
            let named = switch self {
            case .linear: 0
            case .fastest: 1
            case .medium: 2
            case .best: 3
            }
            let nyquist = lowerRate / 2
            let wanted = min(20000, converters[3].flatFraction * nyquist)
            let chosen = converters[named...].first { $0.flatFraction * nyquist >= wanted } ?? converters[3]
            return (chosen.converter, chosen.name)
        }

        var soxrRecipe: UInt {
            switch self {
            case .best: UInt(SOXR_VHQ)
            case .medium: UInt(SOXR_HQ)
            case .fastest, .linear: UInt(SOXR_16_BITQ)
            }
        }
    }

    public let channelCount: Int
    /// Output rate over input rate.
    public let ratio: Double
    public let engine: Engine
    /// The engine's filter in its own words: `SRC_SINC_BEST_QUALITY`, `soxr VHQ` ...
    public let converterName: String
    private let state: OpaquePointer
    private var output: [Float]

    /// Converts from `inputRate` to `outputRate` (Hz).
    /// - Throws: 'fmt?' for a rate that is not positive and finite, a ratio the engine cannot
    ///   convert (1/256 ... 256), or when the library refuses, with its words.
    public init(channelCount: Int, inputRate: Double, outputRate: Double, quality: Quality, engine: Engine = .soxr) throws(AudioConverterError) {
        guard inputRate.isFinite, outputRate.isFinite, inputRate > 0, outputRate > 0 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "sample rates \(inputRate) → \(outputRate) Hz: both must be positive and finite")
        }
        let ratio = outputRate / inputRate
        guard ratio >= 1.0 / 256, ratio <= 256 else {
            throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "sample-rate ratio \(ratio) is outside what the resamplers convert (1/256 ... 256)")
        }
        switch engine {
        case .libsamplerate:
            var error: Int32 = 0
            let converter = quality.libsamplerateConverter(lowerRate: min(inputRate, outputRate))
            guard let state = src_new(converter.converter, Int32(channelCount), &error) else {
                throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "libsamplerate: \(String(cString: src_strerror(error)))")
            }
            self.state = state
            converterName = converter.name
        case .soxr:
            var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
            var qualitySpec = soxr_quality_spec(quality.soxrRecipe, UInt(SOXR_ROLLOFF_SMALL))
            // The passband of every recipe reaches 91.3 % of Nyquist (its HQ/VHQ default).
            qualitySpec.passband_end = max(qualitySpec.passband_end, 0.913)
            // One thread: the queue thread, beside JACK's, on a machine that may have two cores.
            var runtime = soxr_runtime_spec(1)
            var error: soxr_error_t?
            let made = soxr_create(1, ratio, UInt32(channelCount), &error, &io, &qualitySpec, &runtime)
            guard let made, error == nil else {
                throw AudioConverterError(AudioConverterError.unsupportedDataFormatCode, "libsoxr: \(error.map { String(cString: $0) } ?? "cannot convert")")
            }
            state = made
            converterName = "soxr " + (quality == .best ? "VHQ" : quality == .medium ? "HQ" : "16-bit")
        }
        self.channelCount = channelCount
        self.ratio = ratio
        self.engine = engine
        output = [Float](repeating: 0, count: 4096 * channelCount)
    }

    deinit {
        switch engine {
        case .libsamplerate: src_delete(state)
        case .soxr: soxr_delete(state)
        }
    }

    /// Converts `frameCount` interleaved frames, handing the output to `body` in pieces.
    public func process(_ input: UnsafePointer<Float>, frameCount: Int, _ body: (UnsafePointer<Float>, Int) -> Void) {
        switch engine {
        case .libsamplerate: runLibsamplerate(input, frameCount: frameCount, endOfInput: false, body)
        case .soxr: runSoxr(input, frameCount: frameCount, body)
        }
    }

    /// Hands out what the filter still holds (its delay line), then starts afresh.
    public func flush(_ body: (UnsafePointer<Float>, Int) -> Void) {
        switch engine {
        case .libsamplerate:
            var none: Float = 0
            runLibsamplerate(&none, frameCount: 0, endOfInput: true, body)
        case .soxr:
            runSoxr(nil, frameCount: 0, body)
        }
        reset()
    }

    /// Forgets all history (after a discontinuity).
    public func reset() {
        switch engine {
        case .libsamplerate: src_reset(state)
        case .soxr: _ = soxr_clear(state)
        }
    }

    private func runLibsamplerate(_ input: UnsafePointer<Float>, frameCount: Int, endOfInput: Bool, _ body: (UnsafePointer<Float>, Int) -> Void) {
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

    /// libsoxr: takes all of `input` (nil: the end of input, then drains the filter), handing out
    /// what it produces as it goes.
    private func runSoxr(_ input: UnsafePointer<Float>?, frameCount: Int, _ body: (UnsafePointer<Float>, Int) -> Void) {
        var used = 0
        let outputFrames = output.count / channelCount
        while true {
            var inputUsed = 0
            var generated = 0
            output.withUnsafeMutableBufferPointer { out in
                let source = input.map { UnsafeRawPointer($0 + used * channelCount) }
                _ = soxr_process(state, source, input == nil ? 0 : frameCount - used, &inputUsed, out.baseAddress, outputFrames, &generated)
            }
            used += inputUsed
            if generated > 0 { output.withUnsafeBufferPointer { body($0.baseAddress!, generated) } }
            // Input: until it is all taken and the output buffer was not filled. End: until nothing comes.
            if input != nil ? (used >= frameCount && generated < outputFrames) : generated == 0 { break }
        }
    }
}
