import AQCore
import Foundation
import Testing

/// The process-thread meter of the plugin host's outputs: windows of whole cycles, exact peak and
/// RMS of each, published together.
@Suite("cycle level meter")
struct CycleLevelMeterTests {
    /// Feeds `cycles` cycles of `period` frames from `channels` (each a function of the absolute
    /// frame) into `meter`.
    static func feed(_ meter: CycleLevelMeter, cycles: Int, period: Int, startFrame: Int = 0, _ channels: [(Int) -> Float]) {
        let buffers = channels.map { _ in UnsafeMutablePointer<Float>.allocate(capacity: period) }
        defer { for buffer in buffers { buffer.deallocate() } }
        for cycle in 0 ..< cycles {
            for (channel, signal) in channels.enumerated() {
                for frame in 0 ..< period { buffers[channel][frame] = signal(startFrame + cycle * period + frame) }
            }
            buffers.withUnsafeBufferPointer { meter.add($0, frames: period) }
        }
    }

    @Test("a window of 3 cycles of 128 frames (384 >= 300): peak and RMS exact per channel; nothing before the window ends; the next window replaces it whole")
    func windows() {
        let meter = CycleLevelMeter(channelCount: 2, windowFrames: 300)
        // Channel 1 a square of ±0.25 with one sample at -0.75; channel 2 silent.
        let square: (Int) -> Float = { $0 == 200 ? -0.75 : ($0 % 2 == 0 ? 0.25 : -0.25) }
        Self.feed(meter, cycles: 2, period: 128, [square, { _ in 0 }])
        #expect(meter.levels.map(\.peak) == [0, 0])
        Self.feed(meter, cycles: 1, period: 128, startFrame: 256, [square, { _ in 0 }])
        // Frames 0 ..< 256 fed first, then 256 ..< 384: the -0.75 at frame 200 is in the window.
        let expectedRMS = Float(((383 * 0.0625 + 0.5625) / 384.0).squareRoot())
        #expect(meter.levels[0].peak == 0.75)
        #expect(abs(meter.levels[0].rms - expectedRMS) <= 1e-6)
        #expect(meter.levels[1].peak == 0 && meter.levels[1].rms == 0)
        // The next window: a constant 0.5 on channel 2, channel 1 silent.
        Self.feed(meter, cycles: 3, period: 128, [{ _ in 0 }, { _ in 0.5 }])
        #expect(meter.levels[0].peak == 0 && meter.levels[0].rms == 0)
        #expect(meter.levels[1].peak == 0.5 && meter.levels[1].rms == 0.5)
    }
}
