import AQCore

/// Checks captured cycles of ``TestSignal``: every sample must be the generator's sample for its
/// channel and frame, and the frame times must run on without a gap, repeat or drop.
///
/// The recording starts at the first cycle in which every channel carries the signal. Before it
/// (while the connections are being made) a sample may also be silence, but nothing else. Not thread-safe: feed it from one thread (a ``CaptureSink``).
public struct TestSignalVerifier: Sendable {
    public let channelCount: Int
    /// Frames checked sample for sample, after the leading silence.
    public private(set) var verifiedFrameCount = 0
    /// Cycles before the start, while not every channel was connected yet.
    public private(set) var leadingCycleCount = 0
    /// Samples that were not what the generator wrote.
    public private(set) var wrongSampleCount = 0
    /// Breaks in the frame-time sequence (gap, repeat or overlap) and cycles the process thread dropped.
    public private(set) var discontinuityCount = 0
    public private(set) var droppedFrameCount = 0
    /// Cycles whose samples continue the previous cycle's although JACK reported a jump in their
    /// frame time (see ``check(_:_:)``); the frame-time break itself is in ``discontinuityCount``.
    public private(set) var relabelledCycleCount = 0
    /// The frame (modulo ``TestSignal/framePeriod``) the next cycle's samples continue from.
    private var nextSampleFrame: UInt32?
    /// The JACK frame time of the first verified frame, and the one after the last.
    public private(set) var firstFrameTime: UInt64?
    public private(set) var nextFrameTime: UInt64?
    /// The first few problems, described.
    public private(set) var problems: [String] = []

    /// Frames to check; cycles after that many are counted in ``uncheckedCycleCount`` only.
    public let frameLimit: Int
    /// Cycles that arrived after ``frameLimit`` frames were checked.
    public private(set) var uncheckedCycleCount = 0

    public init(channelCount: Int, frameLimit: Int = .max) {
        self.channelCount = channelCount
        self.frameLimit = frameLimit
    }

    public var isClean: Bool {
        wrongSampleCount == 0 && discontinuityCount == 0 && droppedFrameCount == 0 && relabelledCycleCount == 0
    }

    public mutating func check(_ cycle: CaptureCycle, _ samples: RingRegions<Float>) {
        guard verifiedFrameCount < frameLimit else {
            uncheckedCycleCount += 1
            return
        }
        if firstFrameTime == nil {
            // Before the start, each sample may be silence (not connected yet) or exact signal.
            var complete = true
            for frame in 0 ..< cycle.frameCount {
                let absolute = UInt32(truncatingIfNeeded: cycle.frameTime + UInt64(frame))
                for channel in 0 ..< channelCount {
                    let sample = samples[frame * channelCount + channel]
                    if sample.bitPattern == TestSignal.sample(channel: channel, frame: absolute).bitPattern { continue }
                    complete = false
                    if sample != 0 && !Self.isOneCycleOff(sample, channel: channel, frame: absolute, cycleFrames: cycle.frameCount) {
                        wrongSampleCount += 1
                        note("before the start, frame \(absolute) channel \(channel) holds \(sample)")
                    }
                }
            }
            guard complete else {
                leadingCycleCount += 1
                return
            }
            firstFrameTime = cycle.frameTime
        }
        if cycle.droppedFramesBefore != 0 {
            droppedFrameCount += cycle.droppedFramesBefore
            note("process thread dropped \(cycle.droppedFramesBefore) frames before frame \(cycle.frameTime)")
        }
        if let expected = nextFrameTime, expected != cycle.frameTime {
            discontinuityCount += 1
            note("frame time \(cycle.frameTime), expected \(expected)")
        }
        // The samples are expected at the cycle's frame time. At a break in the frame times they
        // may instead carry on from the previous cycle's samples: the generator and this client
        // were told different frame times for the same cycle (seen on this VM in a real-time run
        // with 3 server xruns: "frame time 4985216, expected 4985088", the samples those of
        // 4985088). That is a relabelled cycle, counted apart: the stream lost nothing, JACK's
        // label for it moved.
        let labelled = UInt32(truncatingIfNeeded: cycle.frameTime)
        var start = labelled
        if let continued = nextSampleFrame, continued != labelled & (TestSignal.framePeriod - 1),
           cycle.frameCount > 0, channelCount > 0,
           samples[0].bitPattern == TestSignal.sample(channel: 0, frame: continued).bitPattern {
            start = continued
            relabelledCycleCount += 1
            note("frame time \(cycle.frameTime) holds the samples that continue the previous cycle")
        }
        nextFrameTime = cycle.frameTime + UInt64(cycle.frameCount)
        nextSampleFrame = (start &+ UInt32(truncatingIfNeeded: cycle.frameCount)) & (TestSignal.framePeriod - 1)
        let framePeriod = UInt64(TestSignal.framePeriod)
        for frame in 0 ..< cycle.frameCount {
            let absolute = cycle.frameTime + UInt64(frame)
            for channel in 0 ..< channelCount {
                let sample = samples[frame * channelCount + channel]
                let expected = TestSignal.sample(channel: channel, frame: start &+ UInt32(truncatingIfNeeded: frame))
                if sample.bitPattern != expected.bitPattern {
                    wrongSampleCount += 1
                    if let decoded = TestSignal.decode(sample) {
                        note("frame \(absolute) channel \(channel): holds channel \(decoded.channel) frame \(decoded.frame) (mod \(framePeriod))")
                    } else {
                        note("frame \(absolute) channel \(channel): \(sample) is not test signal")
                    }
                }
            }
        }
        verifiedFrameCount += cycle.frameCount
    }

    /// Whether `sample` is the signal of `channel` one cycle before or after `frame`: what a
    /// cycle carries when JACK tells the generator and the capture client different frame times
    /// for it (seen before the start of an AddressSanitizer run, in freewheel: "frame 1723520
    /// channel 2 holds" the sample of frame 1723392). Accepted before the start only: the checked
    /// run counts such cycles in ``relabelledCycleCount``.
    static func isOneCycleOff(_ sample: Float, channel: Int, frame: UInt32, cycleFrames: Int) -> Bool {
        let cycle = UInt32(truncatingIfNeeded: cycleFrames)
        return sample.bitPattern == TestSignal.sample(channel: channel, frame: frame &- cycle).bitPattern
            || sample.bitPattern == TestSignal.sample(channel: channel, frame: frame &+ cycle).bitPattern
    }

    private mutating func note(_ problem: String) {
        if problems.count < 10 { problems.append(problem) }
    }

    public var summary: String {
        "verified \(verifiedFrameCount) frames × \(channelCount) channels from frame \(firstFrameTime.map(String.init) ?? "-"); "
            + "leading cycles \(leadingCycleCount), wrong samples \(wrongSampleCount), "
            + "discontinuities \(discontinuityCount), relabelled cycles \(relabelledCycleCount), dropped frames \(droppedFrameCount)"
            + (problems.isEmpty ? "" : "; first problems: " + problems.joined(separator: " | "))
    }
}
