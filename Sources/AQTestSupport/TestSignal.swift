import AQCore
import Synchronization

/// A deterministic signal in which every sample says which channel and which JACK frame it
/// belongs to, so a recording can be checked bit for bit.
///
/// The sample for channel `c` (`0 ..< 2048`, JACK's per-client port limit and more) at JACK
/// frame `t` is the Float32 whose bit pattern encodes `key = (t mod 2^19) << 11 | c` (30 bits):
/// bits 0-22 of the key are the mantissa, bits 23-28 select one of 64 exponents (2^-63 ... 2^0)
/// and bit 29 is the sign. Every sample is therefore a finite, normal number with magnitude
/// below 2, and the pattern repeats every 2^19 frames (10.9 s at 48 kHz): verifiers compare
/// frames modulo that, so a loss of exactly a multiple of 2^19 frames would pass unseen. Any arithmetic on the samples (gain, mixing, dither) breaks the
/// pattern, which is the point.
public enum TestSignal {
    /// Channels the encoding can tell apart.
    public static var maximumChannelCount: Int { 1 << channelBits }
    /// Frames after which the pattern repeats.
    public static var framePeriod: UInt32 { 1 << (30 - UInt32(channelBits)) }
    /// Bits of the key that name the channel.
    @usableFromInline static var channelBits: Int { 11 }

    /// The sample for `channel` at JACK frame `frame`. Real-time safe.
    @_transparent
    public static func sample(channel: Int, frame: UInt32) -> Float {
        let key = (frame & (framePeriod - 1)) << UInt32(channelBits) | UInt32(truncatingIfNeeded: channel) & UInt32(maximumChannelCount - 1)
        let mantissa = key & 0x7F_FFFF
        let exponent = 64 + (key >> 23) & 0x3F
        let sign = (key >> 29) & 1
        return Float(bitPattern: sign << 31 | exponent << 23 | mantissa)
    }

    /// A sample that survives conversion to `bits`-bit signed integer PCM (8 ... 24) unchanged:
    /// `(frame << 5 | channel) mod 2^bits`, as a signed integer over `2^(bits-1)`. Tells apart 32
    /// channels and repeats every `2^(bits-5)` frames (2048 at 16 bits). Real-time safe.
    @_transparent
    public static func integerSample(channel: Int, frame: UInt32, bits: Int) -> Float {
        let key = (frame << 5 | UInt32(truncatingIfNeeded: channel) & 31) & ((1 << UInt32(bits)) - 1)
        let signed = Int32(bitPattern: key << (32 - UInt32(bits))) >> (32 - Int32(bits))
        return Float(signed) / Float(1 << (bits - 1))
    }

    /// The channel and frame (modulo ``framePeriod``) a sample encodes, or `nil` when the sample
    /// is not one ``sample(channel:frame:)`` makes (silence, or altered data).
    @inlinable
    public static func decode(_ sample: Float) -> (channel: Int, frame: UInt32)? {
        let bits = sample.bitPattern
        let exponent = (bits >> 23) & 0xFF
        guard exponent >= 64, exponent < 128, (bits >> 30) & 1 == 0 else { return nil }
        let key = (bits >> 31) << 29 | (exponent - 64) << 23 | bits & 0x7F_FFFF
        return (Int(key & UInt32(maximumChannelCount - 1)), key >> UInt32(channelBits))
    }
}

// Kept in this file: a @_noLocks function can only see the bodies of callees in its own file in
// debug builds, which compile each file alone.
/// Writes ``TestSignal`` to every output port: channel `c` at JACK frame `t` gets
/// `TestSignal.sample(channel: c, frame: t)`, or with `integerBits` set,
/// `TestSignal.integerSample(channel: c, frame: t, bits: integerBits)`.
///
/// The deterministic source of the bit-exact tests, and of `aqjack demo`'s test signal.
public final class SignalGeneratorProcessor: RealtimeProcessor, @unchecked Sendable {
    /// 0 for the full Float32 pattern, else the integer depth (8 ... 24) the samples survive.
    public let integerBits: Int
    /// Every cycle whose frame time did not follow on from the previous cycle's end (JACK ran no
    /// cycle of this client for the frames between): what the bench compares a recorder's gaps
    /// with, to tell the server's skips from the recorder's own.
    public let jumps = FrameJumpLog(capacity: 1 << 14)
    /// The frame time the next cycle should start at, if it follows on (process thread only).
    @usableFromInline var expectedFrameTime: UInt32?
    /// One period of a periodic wave, played on every channel from JACK frame 0 on (sample
    /// `table[t mod count]` at frame `t`), instead of the test signal; empty when unused.
    @usableFromInline let waveTable: UnsafeMutableBufferPointer<Float>

    public init(integerBits: Int = 0) {
        precondition(integerBits == 0 || (8 ... 24).contains(integerBits), "integer test signal depth must be 8 ... 24 bits")
        self.integerBits = integerBits
        waveTable = UnsafeMutableBufferPointer(start: nil, count: 0)
    }

    /// Plays `period` (one cycle of a wave, e.g. 48 samples of a 1 kHz sine at 48 kHz) on every
    /// channel, aligned to the JACK timeline.
    public init(period: [Float]) {
        precondition(!period.isEmpty, "a wave table needs at least one sample")
        integerBits = 0
        waveTable = .allocate(capacity: period.count)
        _ = waveTable.initialize(from: period)
    }

    deinit { waveTable.deallocate() }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<SignalGeneratorProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef {
            $0.process(cycle.load(as: ProcessCycle.self))
        }
    }

    /// Fills every output with the test signal for this cycle's frames.
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func process(_ cycle: ProcessCycle) {
        if let expected = expectedFrameTime, expected != cycle.frameTime {
            jumps.append(frameTime: cycle.frameTime, expected: expected)
        }
        expectedFrameTime = cycle.frameTime &+ UInt32(truncatingIfNeeded: cycle.frameCount)
        if let table = waveTable.baseAddress {
            let count = UInt32(truncatingIfNeeded: waveTable.count)
            for channel in 0 ..< cycle.outputs.count {
                let output = cycle.outputs[channel]
                for index in 0 ..< cycle.frameCount {
                    output[index] = table[Int((cycle.frameTime &+ UInt32(truncatingIfNeeded: index)) % count)]
                }
            }
            return
        }
        let bits = integerBits
        // One loop per kind, so the float pattern's loop has no branch and vectorizes (at 2040
        // channels the generator is the first client of the bench's chain: its cost is
        // everyone's).
        for channel in 0 ..< cycle.outputs.count {
            let output = cycle.outputs[channel]
            if bits == 0 {
                for index in 0 ..< cycle.frameCount {
                    output[index] = TestSignal.sample(channel: channel, frame: cycle.frameTime &+ UInt32(truncatingIfNeeded: index))
                }
            } else {
                for index in 0 ..< cycle.frameCount {
                    output[index] = TestSignal.integerSample(channel: channel, frame: cycle.frameTime &+ UInt32(truncatingIfNeeded: index), bits: bits)
                }
            }
        }
    }
}

/// Frame-time jumps a process callback saw, written by the process thread and read by any other.
/// Fixed capacity, allocated at creation; jumps beyond it are counted, not stored. Noncopyable,
/// held inside its processor, so the process thread reaches it without reference counting.
public struct FrameJumpLog: ~Copyable, @unchecked Sendable {
    /// One jump: the cycle's frame time, and the frame time it would have had had it followed on.
    public struct Jump: Sendable, Equatable {
        public var frameTime: UInt32
        public var expected: UInt32
        public init(frameTime: UInt32, expected: UInt32) {
            self.frameTime = frameTime
            self.expected = expected
        }
        /// Frames JACK ran no cycle for (negative: the frame time went back).
        public var skippedFrames: Int { Int(Int32(bitPattern: frameTime &- expected)) }
    }
    let entries: UnsafeMutablePointer<Jump>
    let capacity: Int
    /// Jumps seen so far (may exceed ``capacity``). Published after each entry is written.
    let count = Atomic<Int>(0)

    public init(capacity: Int) {
        self.capacity = capacity
        entries = .allocate(capacity: capacity)
        entries.initialize(repeating: Jump(frameTime: 0, expected: 0), count: capacity)
    }

    deinit { entries.deallocate() }

    /// Adds a jump. Real-time safe; the process thread is the only writer.
    @inline(__always)
    func append(frameTime: UInt32, expected: UInt32) {
        let index = count.load(ordering: .relaxed)
        if index < capacity { entries[index] = Jump(frameTime: frameTime, expected: expected) }
        count.store(index + 1, ordering: .releasing)
    }

    /// The jumps from `start` on (the stored ones), and the total seen. Any thread.
    public func jumps(from start: Int) -> (jumps: [Jump], total: Int) {
        let total = count.load(ordering: .acquiring)
        let end = min(total, capacity)
        return (start < end ? (start ..< end).map { entries[$0] } : [], total)
    }
}
