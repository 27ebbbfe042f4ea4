import AQCore
import CRubberBand
import Glibc

/// Changes a stream's play rate while keeping its pitch, and shifts its pitch while keeping its
/// rate: Rubber Band (Debian's librubberband) in real-time mode, on the queue thread (not the
/// process thread: it allocates). Interleaved Float frames in and out, at one sample rate.
/// Apple's queue does this with `kAudioQueueProperty_EnableTimePitch`; the Spectral algorithm is
/// Rubber Band's finer engine, TimeDomain its faster one. Output starts where the input starts:
/// the stretcher's start delay is dropped. One thread at a time.
public final class TimePitch {
    public enum Algorithm: Sendable {
        /// Rubber Band's R3 ("finer") engine: best for music.
        case spectral
        /// Rubber Band's R2 ("faster") engine.
        case timeDomain
    }

    public let channelCount: Int
    private let state: RubberBandState
    /// One channel per plane, as Rubber Band takes them; output planes grow to what is available.
    private let inputPlanes: [UnsafeMutablePointer<Float>]
    /// The same planes as the C arrays Rubber Band takes, made once (not per call).
    private let inputPointers: [UnsafePointer<Float>?]
    private var outputPlanes: [UnsafeMutablePointer<Float>?]
    private var outputCapacity = 0
    /// Output frames still to drop (the start delay).
    private var toDrop: Int
    private var interleaved: [Float] = []
    /// Output frames the input so far should make (each piece's frames over the rate it was
    /// fed at), and frames emitted: the end is padded and cut to match.
    private var expectedOutput = 0.0
    private var emitted = 0

    /// Plays at `rate` (0.5 ... 2: twice as fast at 2) shifted by `pitchCents` (-2400 ... 2400).
    public var rate: Double = 1 {
        didSet { rubberband_set_time_ratio(state, 1 / rate) }
    }
    public var pitchCents: Double = 0 {
        didSet { rubberband_set_pitch_scale(state, Self.scale(cents: pitchCents)) }
    }

    /// Frames per call handed to Rubber Band at most.
    private static let block = 1024

    public init(sampleRate: Int, channelCount: Int, algorithm: Algorithm, rate: Double = 1, pitchCents: Double = 0) {
        self.channelCount = channelCount
        let engine = algorithm == .spectral ? RubberBandOptionEngineFiner.rawValue : RubberBandOptionEngineFaster.rawValue
        let options = RubberBandOptionProcessRealTime.rawValue | RubberBandOptionThreadingNever.rawValue
            | RubberBandOptionPitchHighConsistency.rawValue | engine
        state = rubberband_new(UInt32(sampleRate), UInt32(channelCount), RubberBandOptions(options), 1 / rate, Self.scale(cents: pitchCents))
        rubberband_set_max_process_size(state, UInt32(Self.block))
        inputPlanes = (0 ..< channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: Self.block) }
        inputPointers = inputPlanes.map { UnsafePointer($0) }
        outputPlanes = []
        self.rate = rate
        self.pitchCents = pitchCents
        // Real-time mode: pad the start as the library asks, then drop its delay from the output.
        toDrop = Int(rubberband_get_start_delay(state))
        var pad = Int(rubberband_get_preferred_start_pad(state))
        let zeros = [Float](repeating: 0, count: Self.block * channelCount)
        while pad > 0 {
            let count = min(pad, Self.block)
            zeros.withUnsafeBufferPointer { feed($0.baseAddress!, frameCount: count, final: false) }
            pad -= count
        }
    }

    deinit {
        rubberband_delete(state)
        inputPlanes.forEach { $0.deallocate() }
        outputPlanes.forEach { $0?.deallocate() }
    }

    private static func scale(cents: Double) -> Double { pow2(cents / 1200) }

    /// Stretches `frameCount` interleaved frames; `emit` gets what comes out (interleaved, valid
    /// during the call).
    public func process(_ frames: UnsafePointer<Float>, frameCount: Int, emit: (UnsafePointer<Float>, Int) -> Void) {
        var done = 0
        while done < frameCount {
            let count = min(Self.block, frameCount - done)
            feed(frames + done * channelCount, frameCount: count, final: false)
            expectedOutput += Double(count) / rate
            done += count
            drain(emit)
        }
    }

    /// The end of the stream: what Rubber Band still holds comes out, exactly as many frames
    /// in all as the input at its rates makes. In real-time mode the library keeps its latency
    /// until more input pushes it out, so silence is fed until the expected count is reached.
    public func finish(emit: (UnsafePointer<Float>, Int) -> Void) {
        let target = Int(expectedOutput.rounded())
        let zeros = [Float](repeating: 0, count: Self.block * channelCount)
        var rounds = 0
        while emitted < target && rounds < 64 {
            zeros.withUnsafeBufferPointer { feed($0.baseAddress!, frameCount: Self.block, final: false) }
            drain(emit, limit: target)
            rounds += 1
        }
    }

    /// Forgets everything (a stop or a seek).
    public func reset() {
        rubberband_reset(state)
        toDrop = Int(rubberband_get_start_delay(state))
        expectedOutput = 0
        emitted = 0
    }

    private func feed(_ frames: UnsafePointer<Float>, frameCount: Int, final: Bool) {
        for channel in 0 ..< channelCount {
            SampleTranspose.copyChannel(channel, of: frames, frameCount: frameCount, channelCount: channelCount, into: inputPlanes[channel])
        }
        rubberband_process(state, inputPointers, UInt32(frameCount), final ? 1 : 0)
    }

    private func drain(_ emit: (UnsafePointer<Float>, Int) -> Void, limit: Int = .max) {
        while true {
            let available = Int(rubberband_available(state))
            guard available > 0 else { return }
            if outputCapacity < available {
                outputPlanes.forEach { $0?.deallocate() }
                outputPlanes = (0 ..< channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: available) }
                outputCapacity = available
            }
            let got = Int(rubberband_retrieve(state, outputPlanes, UInt32(available)))
            let dropped = min(toDrop, got)
            toDrop -= dropped
            let count = min(got - dropped, max(0, limit - emitted))
            emitted += count
            guard count > 0 else { continue }
            if interleaved.count < count * channelCount { interleaved = [Float](repeating: 0, count: count * channelCount) }
            interleaved.withUnsafeMutableBufferPointer { samples in
                for channel in 0 ..< channelCount {
                    SampleTranspose.setChannel(channel, of: samples.baseAddress!, frameCount: count, channelCount: channelCount,
                                               from: outputPlanes[channel]! + dropped)
                }
            }
            interleaved.withUnsafeBufferPointer { emit($0.baseAddress!, count) }
        }
    }
}

/// 2^x, without Foundation.
private func pow2(_ x: Double) -> Double { exp2(x) }
