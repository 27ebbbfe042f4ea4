/// The runs of wrong frames in a float recording of ``TestSignal`` whose file frame `i` should
/// hold JACK frame `start + i`, each with what the file says of its cause, and which of them
/// the generator's own frame-time jumps explain.
///
/// - A *silence* run: the recorder had no cycle for those frames (it writes silence for frame
///   times it was not given). Where the generator's cycles jumped over the same frames, the
///   server ran no cycle for anyone (the server's skip); elsewhere the recorder alone missed
///   them (its own loss).
/// - An *offset* run: every channel holds the test signal of another frame, `offset` frames
///   from the expected one. Negative: the port still held an older cycle (the generator had not
///   written this one: the generator's lateness). Positive: the port already held a newer
///   cycle (the recorder read it after the generator's next cycle).
/// - A *garbled* run: anything else (channels of different frames, other data).
public struct RecordingEvents {
    public enum Kind: Hashable, Sendable {
        case silence
        case offset(Int)
        case garbled
    }

    public struct Run: Equatable, Sendable {
        /// The JACK frame the run's first file frame should have held (32 bits, wrapping).
        public var frameTime: UInt32
        public var length: Int
        public var kind: Kind

        public init(frameTime: UInt32, length: Int, kind: Kind) {
            self.frameTime = frameTime
            self.length = length
            self.kind = kind
        }
    }

    public private(set) var runs: [Run] = []
    public private(set) var frames = 0

    /// Streams the file through libsndfile (``streamFloatFrames(path:channels:chunk:_:)``).
    public init(path: String, channels: Int, start: UInt32) throws {
        let period = Int(TestSignal.framePeriod)
        var runs: [Run] = []
        frames = try streamFloatFrames(path: path, channels: channels) { samples, firstFrame, count in
            for index in 0 ..< count {
                let expected = start &+ UInt32(truncatingIfNeeded: firstFrame + index)
                let row = samples.baseAddress! + index * channels
                Self.add(kind: Self.kind(row, channels: channels, expected: expected, period: period), frameTime: expected, to: &runs)
            }
        }
        self.runs = runs
    }

    /// Correct frames end the current run; wrong ones extend it or start another.
    private static func add(kind: Kind?, frameTime: UInt32, to runs: inout [Run]) {
        guard let kind else { return }
        if let last = runs.last, last.kind == kind, last.frameTime &+ UInt32(last.length) == frameTime {
            runs[runs.count - 1].length += 1
        } else {
            runs.append(Run(frameTime: frameTime, length: 1, kind: kind))
        }
    }

    /// What one frame holds: nil when it is the expected frame on every channel.
    private static func kind(_ row: UnsafePointer<Float>, channels: Int, expected: UInt32, period: Int) -> Kind? {
        if row[0] == 0, (0 ..< channels).allSatisfy({ row[$0] == 0 }) { return .silence }
        guard let decoded = TestSignal.decode(row[0]), decoded.channel == 0 else { return .garbled }
        for channel in 0 ..< channels where row[channel].bitPattern != TestSignal.sample(channel: channel, frame: decoded.frame).bitPattern {
            return .garbled
        }
        // The signed distance modulo the pattern's period.
        var offset = (Int(decoded.frame) - Int(expected & (TestSignal.framePeriod - 1))) % period
        if offset > period / 2 { offset -= period } else if offset < -period / 2 { offset += period }
        return offset == 0 ? nil : .offset(offset)
    }

    /// Whether `run` lies within `margin` frames of one of the generator's jumps (an xrun,
    /// around which JACK2 labels cycles inconsistently between clients: measured, a cycle's
    /// data under the frame time of the cycle before or after).
    public static func isNear(_ run: Run, jumps: [FrameJumpLog.Jump], margin: UInt32 = 512) -> Bool {
        jumps.contains { jump in
            // Distances on wrapping 32-bit frame times, either way.
            let low = min(jump.expected, jump.frameTime) &- margin
            let span = UInt32(abs(jump.skippedFrames)) &+ 2 &* margin
            return run.frameTime &- low <= span || (run.frameTime &+ UInt32(run.length)) &- low <= span
        }
    }

    /// Splits the silent frames into those inside one of the generator's jumps (frames the
    /// server ran no cycle for) and the rest (the recorder's alone).
    public func silence(against jumps: [FrameJumpLog.Jump]) -> (server: Int, recorderOnly: [Run]) {
        let skipped = jumps.filter { $0.skippedFrames > 0 }
        var server = 0
        var recorderOnly: [Run] = []
        for run in runs where run.kind == .silence {
            for frame in 0 ..< run.length {
                let time = run.frameTime &+ UInt32(frame)
                // Inside [expected, frameTime), on wrapping 32-bit frame times.
                if skipped.contains(where: { time &- $0.expected < UInt32($0.skippedFrames) }) {
                    server += 1
                } else if let last = recorderOnly.last, last.frameTime &+ UInt32(last.length) == time {
                    recorderOnly[recorderOnly.count - 1].length += 1
                } else {
                    recorderOnly.append(Run(frameTime: time, length: 1, kind: .silence))
                }
            }
        }
        return (server, recorderOnly)
    }
}
