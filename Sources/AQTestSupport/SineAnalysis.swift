import Foundation

/// Signal-to-noise measurements of recorded sines.
public enum SineAnalysis {
    /// SNR in dB of `samples` against `ideal`: signal power over the power of the difference.
    public static func snr(_ samples: ArraySlice<Float>, ideal: ArraySlice<Double>) -> Double {
        var signal = 0.0
        var noise = 0.0
        for (sample, reference) in zip(samples, ideal) {
            signal += reference * reference
            let error = Double(sample) - reference
            noise += error * error
        }
        return 10 * log10(signal / max(noise, 1e-300))
    }

    /// SNR in dB of `samples` against the best-fitting sine of `frequency` Hz at `sampleRate`
    /// (least squares over amplitude, phase and offset): for recordings whose start time is not
    /// known to the test.
    public static func fittedSNR(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double) -> Double {
        let omega = 2 * Double.pi * frequency / sampleRate
        // Normal equations for x ≈ a·sin + b·cos + c.
        var m = [[Double]](repeating: [0, 0, 0], count: 3)
        var v = [0.0, 0.0, 0.0]
        for (index, sample) in samples.enumerated() {
            let basis = [sin(omega * Double(index)), cos(omega * Double(index)), 1.0]
            for row in 0 ..< 3 {
                v[row] += basis[row] * Double(sample)
                for column in 0 ..< 3 { m[row][column] += basis[row] * basis[column] }
            }
        }
        let solution = solve3(m, v)
        let fit = samples.indices.map { index -> Double in
            let k = Double(index - samples.startIndex)
            return solution[0] * sin(omega * k) + solution[1] * cos(omega * k) + solution[2]
        }
        return snr(samples, ideal: fit[...])
    }

    /// The median and worst of ``fittedSNR`` over consecutive windows of `window` frames: robust
    /// to a phase jump at one point (an xrun makes jackd skip or repeat a cycle's frame time,
    /// shifting a generator's phase), which would ruin a fit over the whole signal.
    public static func windowedSNR(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double,
                                   window: Int) -> (median: Double, worst: Double) {
        let snrs = stride(from: samples.startIndex, to: samples.endIndex - window + 1, by: window).map {
            fittedSNR(samples[$0 ..< $0 + window], frequency: frequency, sampleRate: sampleRate)
        }.sorted()
        guard !snrs.isEmpty else { return (-.infinity, -.infinity) }
        return (snrs[snrs.count / 2], snrs[0])
    }

    /// The SNR in dB a test holds a sine that crossed the JACK graph to: the fit over all of
    /// `samples` when the server reported no xrun in that time; with xruns, the median of the fits
    /// over windows of 12,000 frames, since an xrun makes jackd skip or repeat a cycle's frame
    /// time and so jumps the generator's phase, which one fit over the whole signal cannot follow
    /// (measured: 20-30 dB for a 3 s recording with 6-23 xruns, whose windows measure as without).
    public static func recordedSNR(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double, xruns: Int) -> Double {
        xruns == 0 ? fittedSNR(samples, frequency: frequency, sampleRate: sampleRate)
                   : windowedSNR(samples, frequency: frequency, sampleRate: sampleRate, window: 12000).median
    }

    private static func solve3(_ m: [[Double]], _ v: [Double]) -> [Double] {
        func det(_ a: [[Double]]) -> Double {
            a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
                + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
        }
        let d = det(m)
        return (0 ..< 3).map { column in
            var replaced = m
            for row in 0 ..< 3 { replaced[row][column] = v[row] }
            return det(replaced) / d
        }
    }
}
