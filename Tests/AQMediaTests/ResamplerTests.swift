import AQMedia
import Foundation
import Testing

/// Both resampling engines against analytic signals, no server: alignment (output frame k is
/// input time k / ratio), noise, passband flatness and length.
@Suite("Resampler: libsoxr and libsamplerate")
struct ResamplerTests {
    /// `seconds` of a `frequency` Hz sine of amplitude 0.5 at `rate`, mono.
    static func sine(_ frequency: Double, rate: Double, seconds: Double) -> [Float] {
        (0 ..< Int(rate * seconds)).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / rate)) }
    }

    /// `input` through a mono resampler in pieces of 4096 frames, then flushed.
    static func resample(_ input: [Float], from inputRate: Double, to outputRate: Double, quality: Resampler.Quality, engine: Resampler.Engine) throws -> [Float] {
        let resampler = try Resampler(channelCount: 1, inputRate: inputRate, outputRate: outputRate, quality: quality, engine: engine)
        var output: [Float] = []
        input.withUnsafeBufferPointer { samples in
            var start = 0
            while start < samples.count {
                let count = min(4096, samples.count - start)
                resampler.process(samples.baseAddress! + start, frameCount: count) { output += UnsafeBufferPointer(start: $0, count: $1) }
                start += count
            }
        }
        resampler.flush { output += UnsafeBufferPointer(start: $0, count: $1) }
        return output
    }

    /// SNR (dB) of `samples[skip ..< count - skip]` against the sine it should be at `rate`.
    static func snr(_ samples: [Float], frequency: Double, rate: Double, skip: Int) -> Double {
        var signal = 0.0, noise = 0.0
        for index in skip ..< samples.count - skip {
            let ideal = 0.5 * sin(2 * Double.pi * frequency * Double(index) / rate)
            signal += ideal * ideal
            noise += (Double(samples[index]) - ideal) * (Double(samples[index]) - ideal)
        }
        return 10 * log10(signal / max(noise, 1e-300))
    }

    /// Gain (dB) of `samples[skip ..< count - skip]` against amplitude 0.5, from its RMS.
    static func gain(_ samples: [Float], skip: Int) -> Double {
        let middle = samples[skip ..< samples.count - skip]
        let rms = (middle.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(middle.count)).squareRoot()
        return 20 * log10(rms * 2.0.squareRoot() / 0.5)
    }

    @Test("48 → 44.1 kHz, best quality: a 1 kHz sine at SNR ≥ 140 dB against the analytic sine at each output frame's time, 88,200 frames from 96,000 (libsamplerate 88,199)", arguments: Resampler.Engine.allCases)
    func bestQualityIsClean(engine: Resampler.Engine) throws {
        let output = try Self.resample(Self.sine(1000, rate: 48000, seconds: 2), from: 48000, to: 44100, quality: .best, engine: engine)
        // libsoxr gives every frame; libsamplerate's flush stops one short (its known behaviour).
        #expect(output.count == (engine == .soxr ? 88200 : 88199))
        let snr = Self.snr(output, frequency: 1000, rate: 44100, skip: 1000)
        print("\(engine) best 48 → 44.1 kHz: SNR \(snr) dB")
        #expect(snr >= 140)
    }

    @Test("every quality of both engines is flat to 20 kHz within 0.1 dB and aligned (1 kHz SNR ≥ 90 dB), down to 44.1 kHz, up from it and at 48 ↔ 96 kHz",
          arguments: Resampler.Engine.allCases, [Resampler.Quality.best, .medium, .fastest, .linear])
    func flatAtEveryQuality(engine: Resampler.Engine, quality: Resampler.Quality) throws {
        for (inputRate, outputRate) in [(48000.0, 44100.0), (44100.0, 48000.0), (48000.0, 96000.0), (96000.0, 48000.0)] {
            let high = try Self.resample(Self.sine(20000, rate: inputRate, seconds: 1), from: inputRate, to: outputRate, quality: quality, engine: engine)
            let gain = Self.gain(high, skip: 4000)
            let low = try Self.resample(Self.sine(1000, rate: inputRate, seconds: 1), from: inputRate, to: outputRate, quality: quality, engine: engine)
            let snr = Self.snr(low, frequency: 1000, rate: outputRate, skip: 4000)
            print("\(engine) \(quality) \(Int(inputRate)) → \(Int(outputRate)): 20 kHz gain \(gain) dB, 1 kHz SNR \(snr) dB")
            #expect(abs(gain) <= 0.1, "\(engine) \(quality) \(inputRate) → \(outputRate): \(gain) dB at 20 kHz")
            #expect(snr >= 90, "\(engine) \(quality) \(inputRate) → \(outputRate): SNR \(snr) dB at 1 kHz")
        }
    }

    @Test("libsamplerate: a quality keeps its own converter where that one is flat to 20 kHz (48 kHz and up), else the next better one (at 44.1 kHz every quality is the best)")
    func libsamplerateConverterChoice() throws {
        func name(_ quality: Resampler.Quality, _ inputRate: Double, _ outputRate: Double) throws -> String {
            try Resampler(channelCount: 2, inputRate: inputRate, outputRate: outputRate, quality: quality, engine: .libsamplerate).converterName
        }
        #expect(try name(.medium, 48000, 44100) == "SRC_SINC_BEST_QUALITY")
        #expect(try name(.linear, 44100, 48000) == "SRC_SINC_BEST_QUALITY")
        #expect(try name(.best, 48000, 96000) == "SRC_SINC_BEST_QUALITY")
        #expect(try name(.medium, 48000, 96000) == "SRC_SINC_MEDIUM_QUALITY")
        #expect(try name(.fastest, 96000, 48000) == "SRC_SINC_MEDIUM_QUALITY")
        #expect(try name(.linear, 96000, 192000) == "SRC_SINC_FASTEST")
        // Under 42.6 kHz nothing reaches 20 kHz: as far as the best converter does.
        #expect(try name(.fastest, 48000, 32000) == "SRC_SINC_BEST_QUALITY")
    }

    @Test("a ratio no engine converts is refused with 'fmt?' naming it, for both engines", arguments: Resampler.Engine.allCases)
    func impossibleRatio(engine: Resampler.Engine) {
        for (outputRate, words) in [(0.0, "positive"), (48, "ratio"), (48_000_000, "ratio"), (.nan, "finite"), (.infinity, "finite")] {
            #expect {
                _ = try Resampler(channelCount: 2, inputRate: 48000, outputRate: outputRate, quality: .best, engine: engine)
            } throws: { error in
                guard let error = error as? AudioConverterError else { return false }
                return error.status == AudioConverterError.unsupportedDataFormatCode && error.message.contains(words)
            }
        }
    }
}

extension ResamplerTests {
    /// The bench's music-like signal (an A-major triad, 8 harmonics each) at `rate`, mono.
    static func triad(rate: Double, seconds: Double) -> [Double] {
        let partials = [220, 277.18, 329.63].flatMap { root in (1 ... 8).map { (root * Double($0), 1 / Double($0)) } }
        let amplitude = 0.8 / partials.reduce(0) { $0 + $1.1 }
        return (0 ..< Int(rate * seconds)).map { frame in
            partials.enumerated().reduce(0.0) { sum, item in
                sum + amplitude * item.element.1 * sin(2 * Double.pi * item.element.0 * Double(frame) / rate + Double(item.offset) * 0.7)
            }
        }
    }

    @Test("48 → 44.1 kHz of a music-like signal (24 partials up to 2.6 kHz), best quality: SNR against the signal computed at 44.1 kHz", arguments: Resampler.Engine.allCases)
    func musicLikeSignal(engine: Resampler.Engine) throws {
        let input = Self.triad(rate: 48000, seconds: 2).map(Float.init)
        let ideal = Self.triad(rate: 44100, seconds: 2)
        let output = try Self.resample(input, from: 48000, to: 44100, quality: .best, engine: engine)
        var signal = 0.0, noise = 0.0
        for index in 1000 ..< min(output.count, ideal.count) - 1000 {
            signal += ideal[index] * ideal[index]
            noise += (Double(output[index]) - ideal[index]) * (Double(output[index]) - ideal[index])
        }
        let snr = 10 * log10(signal / noise)
        print("\(engine) best, triad: SNR \(snr) dB")
        #expect(snr >= 140)
    }
}
