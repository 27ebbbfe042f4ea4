import AQTestSupport
import AudioToolbox
import Foundation
import Testing

/// The frequency of the sine in `samples` (channel 0 of `channels`), from its first to its last
/// rising zero crossing in the middle 80 % of the sound, each crossing interpolated between samples.
func sineFrequency(_ samples: [Float], channels: Int, sampleRate: Double) -> Double {
    let frames = samples.count / channels
    let loud = (0 ..< frames).filter { abs(samples[$0 * channels]) > 0.05 }
    guard let first = loud.first, let last = loud.last, last > first else { return 0 }
    let margin = (last - first) / 10
    var crossings: [Double] = []
    for frame in (first + margin) ..< (last - margin) {
        let a = samples[frame * channels], b = samples[(frame + 1) * channels]
        if a < 0 && b >= 0 { crossings.append(Double(frame) + Double(-a / (b - a))) }
    }
    guard crossings.count > 1 else { return 0 }
    return Double(crossings.count - 1) / (crossings.last! - crossings.first!) * sampleRate
}

/// Seconds from the first to the last sample above -26 dBFS.
func soundDuration(_ samples: [Float], channels: Int, sampleRate: Double) -> Double {
    let frames = samples.count / channels
    let loud = (0 ..< frames).filter { abs(samples[$0 * channels]) > 0.05 }
    guard let first = loud.first, let last = loud.last else { return 0 }
    return Double(last - first + 1) / sampleRate
}

@Suite("PlayRate and Pitch with kAudioQueueProperty_EnableTimePitch, rendered offline (no server needed)")
struct TimePitchTests {
    static func render(_ path: String, algorithm: UInt32?, rate: Float, pitch: Float = 0) -> [Float] {
        let result = offlineRenderWithListing(path: path, drainAfterFlush: true) { queue in
            if let algorithm {
                var enable: UInt32 = 1
                #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableTimePitch, &enable, 4) == noErr)
                var chosen = algorithm
                #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_TimePitchAlgorithm, &chosen, 4) == noErr)
            }
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_PlayRate, rate) == noErr)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pitch, pitch) == noErr)
        }
        #expect(result.statuses.allSatisfy { $0 == noErr }, "\(result.statuses)")
        return result.samples
    }

    @Test("Varispeed at 0.5 and 2 plays a 1 kHz sine at 500 and 2000 Hz (± 0.1 %), for twice and half its 2 s (± 0.5 %)")
    func varispeed() throws {
        let path = ExternalTool.temporaryPath("sine1k", extension: "wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try #require(ExternalTool.run("sox", ["-V1", "-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", "2", "sine", "1000", "vol", "0.5"]).status == 0)
        for rate: Float in [0.5, 2] {
            let samples = Self.render(path, algorithm: kAudioQueueTimePitchAlgorithm_Varispeed, rate: rate)
            let frequency = sineFrequency(samples, channels: 2, sampleRate: 48000)
            let duration = soundDuration(samples, channels: 2, sampleRate: 48000)
            print("varispeed \(rate): \(frequency) Hz, \(duration) s")
            #expect(abs(frequency - 1000 * Double(rate)) <= 1000 * Double(rate) * 0.001, "rate \(rate): \(frequency) Hz")
            #expect(abs(duration - 2 / Double(rate)) <= 2 / Double(rate) * 0.005, "rate \(rate): \(duration) s")
        }
    }

    @Test("Spectral and TimeDomain at 0.5 and 2 keep 1000 Hz (± 0.5 %) and take twice and half the time (± 0.5 %); Pitch +1200 cents at rate 1 gives 2000 Hz")
    func pitchPreserving() throws {
        let path = ExternalTool.temporaryPath("sine1k", extension: "wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try #require(ExternalTool.run("sox", ["-V1", "-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", "2", "sine", "1000", "vol", "0.5"]).status == 0)
        for algorithm in [kAudioQueueTimePitchAlgorithm_Spectral, kAudioQueueTimePitchAlgorithm_TimeDomain] {
            for rate: Float in [0.5, 2] {
                let samples = Self.render(path, algorithm: algorithm, rate: rate)
                let frequency = sineFrequency(samples, channels: 2, sampleRate: 48000)
                let duration = soundDuration(samples, channels: 2, sampleRate: 48000)
                let loud = (0 ..< samples.count / 2).filter { abs(samples[$0 * 2]) > 0.05 }
                print("algorithm \(algorithm) rate \(rate): \(frequency) Hz, \(duration) s, frames \(samples.count / 2) loud \(loud.first ?? -1) ... \(loud.last ?? -1)")
                #expect(abs(frequency - 1000) <= 5, "rate \(rate): \(frequency) Hz")
                #expect(abs(duration - 2 / Double(rate)) <= 2 / Double(rate) * 0.005, "rate \(rate): \(duration) s")
            }
        }
        let shifted = Self.render(path, algorithm: kAudioQueueTimePitchAlgorithm_Spectral, rate: 1, pitch: 1200)
        let frequency = sineFrequency(shifted, channels: 2, sampleRate: 48000)
        #expect(abs(frequency - 2000) <= 10, "\(frequency) Hz")
        #expect(abs(soundDuration(shifted, channels: 2, sampleRate: 48000) - 2) <= 0.01)
        // Without EnableTimePitch the rate is kept but not heard: 1000 Hz for 2 s.
        let plain = Self.render(path, algorithm: nil, rate: 2)
        #expect(abs(sineFrequency(plain, channels: 2, sampleRate: 48000) - 1000) <= 1)
        #expect(abs(soundDuration(plain, channels: 2, sampleRate: 48000) - 2) <= 0.01)
    }
}
