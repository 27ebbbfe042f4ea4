import AQCore
import AQTestSupport
import Foundation

/// What a recording of ``TestSignal`` says about the recorder that made it.
struct RecordingAnalysis {
    /// Frames before the first frame in which every channel carries the signal.
    var leadingPartialFrames = 0
    /// The JACK frame (mod 2^22) of that first complete frame.
    var firstCompleteFrame: UInt32?
    /// Frames missing in the sequence after it (forward jumps in the encoded frame numbers).
    var lostFrames = 0
    /// Frames that came again (backward jumps: JACK repeats a cycle's frame time around xruns).
    var repeatedFrames = 0
    var frames = 0

    /// Reads the file in chunks (`streamFloatFrames`): held whole, a 60 s recording of 1024
    /// channels was 11.8 GB of samples, and the bench's analysis of it outlived its generator.
    init(path: String, channels: Int) throws {
        var previous: UInt32?
        var leadingPartial = 0, lost = 0, repeated = 0
        var firstComplete: UInt32?
        frames = try streamFloatFrames(path: path, channels: channels) { samples, _, frameCount in
            for frame in 0 ..< frameCount {
                let row = frame * channels
                if firstComplete == nil {
                    let decoded = (0 ..< channels).compactMap { TestSignal.decode(samples[row + $0]) }
                    guard decoded.count == channels, Set(decoded.map(\.frame)).count == 1 else {
                        leadingPartial += 1
                        continue
                    }
                    firstComplete = decoded[0].frame
                    previous = decoded[0].frame
                    continue
                }
                // The first channel that carries the signal (only it is needed from here on).
                guard let current = (0 ..< channels).lazy.compactMap({ TestSignal.decode(samples[row + $0]) }).first?.frame,
                      let last = previous else { continue }
                let step = (current &- last) & (TestSignal.framePeriod - 1)
                if step > TestSignal.framePeriod / 2 {
                    repeated += Int(TestSignal.framePeriod - step) + 1
                } else if step > 1 {
                    lost += Int(step) - 1
                }
                previous = current
            }
        }
        leadingPartialFrames = leadingPartial
        firstCompleteFrame = firstComplete
        lostFrames = lost
        repeatedFrames = repeated
    }
}
