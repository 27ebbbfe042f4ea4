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

    init(path: String, channels: Int) throws {
        let file = try SoundFileContents(path: path)
        frames = file.frames
        var previous: UInt32?
        for frame in 0 ..< file.frames {
            let decoded = (0 ..< channels).compactMap { TestSignal.decode(file.samples[frame * channels + $0]) }
            if firstCompleteFrame == nil {
                guard decoded.count == channels, Set(decoded.map(\.frame)).count == 1 else {
                    leadingPartialFrames += 1
                    continue
                }
                firstCompleteFrame = decoded[0].frame
                previous = decoded[0].frame
                continue
            }
            guard let current = decoded.first?.frame, let last = previous else { continue }
            let step = (current &- last) & (TestSignal.framePeriod - 1)
            if step > TestSignal.framePeriod / 2 {
                repeatedFrames += Int(TestSignal.framePeriod - step) + 1
            } else if step > 1 {
                lostFrames += Int(step) - 1
            }
            previous = current
        }
    }
}
