import AQTestSupport

/// How a recording of the 2-channel 16-bit integer test signal (as `writeIntegerSignalWave`
/// writes it) carried it, as ``followSignal(_:frames:from:)`` finds it.
struct SignalFollowing {
    /// Frames that are not the signal where it should be (silence before and after it included).
    var wrong = 0
    /// Places where the signal goes on at another of its frames (a cycle dropped or repeated on
    /// the way), each the difference in signal frames.
    var jumps: [Int] = []
    /// The runs of silence inside the signal (where it should be, and is not), as file frame and
    /// length: what a lost network packet leaves when the bridge fills it with silence.
    var silentRuns: [(frame: Int, length: Int)] = []

    /// (wrong frames, jumps).
    var counts: (wrong: Int, jumps: Int) { (wrong, jumps.count) }
    /// Wrong frames that are not silence inside the signal.
    var wrongNotSilent: Int { wrong - silentRuns.reduce(0) { $0 + $1.length } }
}

/// Follows the 2-channel 16-bit integer test signal, `frames` long, through `samples` from frame
/// `offset`. A jump is found by the frame number the right channel encodes, `(frame << 5 | 1)`
/// mod 2^16, nearest the expected one. A recording that is every frame once, bit-exact, gives no
/// wrong frame and no jump.
func followSignal(_ samples: [Float], frames: Int, from offset: Int) -> SignalFollowing {
    func isSignal(_ index: Int, _ frame: Int) -> Bool {
        frame >= 0 && frame < frames && (0 ..< 2).allSatisfy { samples[2 * index + $0] == TestSignal.integerSample(channel: $0, frame: UInt32(frame), bits: 16) }
    }
    var result = SignalFollowing()
    var position = 0
    for index in 0 ..< samples.count / 2 {
        let silent = samples[2 * index] == 0 && samples[2 * index + 1] == 0
        if index < offset || position >= frames {
            if !silent { result.wrong += 1 }
            continue
        }
        if isSignal(index, position) {
            position += 1
        } else if !silent {
            let key = Int(UInt16(bitPattern: Int16(samples[2 * index + 1] * 32768))) >> 5
            let candidate = position + ((key - position) % 2048 + 2048 + 1024) % 2048 - 1024
            if isSignal(index, candidate) {
                result.jumps.append(candidate - position)
                position = candidate + 1
            } else {
                result.wrong += 1
                position += 1
            }
        } else {
            result.wrong += 1
            position += 1
            if let last = result.silentRuns.last, last.frame + last.length == index {
                result.silentRuns[result.silentRuns.count - 1].length += 1
            } else {
                result.silentRuns.append((index, 1))
            }
        }
    }
    return result
}

/// Where the signal starts in `samples`, from its first non-silent frame and the frame number
/// that frame's right-channel sample encodes (`(frame << 5 | 1)` mod 2^16), so a first cycle lost
/// on the way does not move it; nil for silence. Frame 0 of the signal is (0, 1/32768).
func signalStart(_ samples: [Float]) -> Int? {
    guard let first = (0 ..< samples.count / 2).first(where: { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 }) else { return nil }
    let key = UInt16(bitPattern: Int16(samples[2 * first + 1] * 32768))
    return first - Int(key >> 5)
}
