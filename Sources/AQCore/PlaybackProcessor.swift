import Glibc
import Synchronization

/// Plays frames from a planar ring (``PlanarFrameRing``) to the output ports on the process thread, from
/// a start frame on, with volume (linear ramps) and stereo pan; a ``PlaybackFeeder`` fills the
/// ring on another thread.
///
/// When the ring runs dry while playing, the missing frames are silence (never stale data) and
/// are counted (``underrunFrameCount``, ``underrunEventCount``). When a drain target is set, the
/// processor stops taking frames after that many and reports ``isDrained`` once the cycle
/// holding the last one has been written.
public final class PlaybackProcessor: RealtimeProcessor, @unchecked Sendable {
    public let channelCount: Int
    @usableFromInline let samples: PlanarRingConsumer
    @usableFromInline let wakeup: RealtimeWakeup
    @usableFromInline var frameTimes = FrameTimeExtender()
    @usableFromInline var gain: Float = 1
    /// The ramp in progress: gain at its start, the change to make, frames done and in all.
    /// The gain is computed from the position (not accumulated), so no rounding builds up.
    @usableFromInline var rampStartGain: Float = 1
    @usableFromInline var rampDelta: Float = 0
    @usableFromInline var rampDone = 0
    @usableFromInline var rampTotal = 0
    @usableFromInline var appliedTargetBits: UInt32 = Float(1).bitPattern
    @usableFromInline var wasStarved = false

    // Control, written by the queue thread.
    /// The first device frame to play; `UInt64.max` plays nothing. While a start waits for its
    /// connection (``connectionWait``), the latest frame it may start at.
    let startFrame = Atomic<UInt64>(.max)
    /// The connection a start waits for, if any.
    let connectionWait = ConnectionWait()
    let paused = Atomic<Bool>(false)
    /// Frames after which to stop taking data (a graceful stop); `Int.max` plays on.
    let drainTarget = Atomic<Int>(.max)
    /// Set to discard everything in the ring at the next cycle (an immediate stop or reset).
    let discardRequested = Atomic<Bool>(false)
    let targetGainBits = Atomic<UInt32>(Float(1).bitPattern)
    let rampFrameCount = Atomic<Int>(0)
    let panBits = Atomic<UInt32>(Float(0).bitPattern)

    // Reports, read by any thread.
    /// Frames taken from the ring and played since the processor was made.
    public let playedFrameCount = Atomic<Int>(0)
    /// Frames of silence played because the ring was empty while playing.
    public let underrunFrameCount = Atomic<Int>(0)
    /// Times the ring ran dry while playing (each a timeline discontinuity).
    public let underrunEventCount = Atomic<Int>(0)
    /// The frame time at which the next cycle starts.
    public let nextCycleFrame = Atomic<UInt64>(0)
    /// The device frame of the first frame played since the latest start; `UInt64.max` before.
    public let firstPlayedFrame = Atomic<UInt64>(.max)
    /// Whether the drain target has been reached and its last frame written.
    public let isDrained = Atomic<Bool>(false)

    init(channelCount: Int, samples: consuming PlanarRingConsumer, wakeup: RealtimeWakeup) {
        self.channelCount = channelCount
        self.samples = samples
        self.wakeup = wakeup
    }

    /// The bytes ``make(channelCount:capacityFrames:)`` maps for its ring.
    public static func ringBytes(channelCount: Int, capacityFrames: Int) -> Int {
        RingMemory.bytes(minimumElements: channelCount * capacityFrames, stride: MemoryLayout<Float>.stride)
    }

    /// Creates a processor and the feeder of its ring (`capacityFrames` frames).
    public static func make(channelCount: Int, capacityFrames: Int) -> (PlaybackProcessor, PlaybackFeeder) {
        precondition(channelCount > 0, "playback needs at least one channel")
        let ring = PlanarFrameRing(channelCount: channelCount, minimumFrames: capacityFrames)
        let wakeup = RealtimeWakeup()
        let processor = PlaybackProcessor(channelCount: channelCount, samples: ring.consumer, wakeup: wakeup)
        let feeder = PlaybackFeeder(channelCount: channelCount, samples: ring.producer, wakeup: wakeup)
        return (processor, feeder)
    }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<PlaybackProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    /// Writes one cycle of the ring to the outputs, silence where there is nothing to play.
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func process(_ cycle: ProcessCycle) {
        let frameCount = cycle.frameCount
        let cycleFrame = frameTimes.extend(cycle.frameTime)
        nextCycleFrame.store(cycleFrame &+ UInt64(frameCount), ordering: .relaxed)
        let outputs = cycle.outputs
        if discardRequested.load(ordering: .acquiring) {
            samples.commitRead(samples.readableFrames)
            discardRequested.store(false, ordering: .releasing)
        }
        var start = startFrame.load(ordering: .acquiring)
        if paused.load(ordering: .relaxed) {
            silenceOutputs(outputs, except: 0, from: 0, count: 0, frameCount: frameCount)
            return
        }
        if start != .max {
            guard let resolved = connectionWait.resolve(start, startFrame: startFrame, cycle: cycle, cycleFrame: cycleFrame, input: false) else {
                silenceOutputs(outputs, except: 0, from: 0, count: 0, frameCount: frameCount)
                return
            }
            start = resolved
        }
        guard start != .max, cycleFrame &+ UInt64(frameCount) > start else {
            silenceOutputs(outputs, except: 0, from: 0, count: 0, frameCount: frameCount)
            return
        }
        let skip = start > cycleFrame ? Int(start &- cycleFrame) : 0
        let wanted = frameCount - skip
        let played = playedFrameCount.load(ordering: .relaxed)
        let target = drainTarget.load(ordering: .acquiring)
        let available = samples.readableFrames
        let take = min(min(wanted, available), max(0, target - played))
        // Silence where nothing plays: every frame of the channels the ring has none for, and
        // the frames before the start and after what the ring holds (the rest is written once,
        // below, instead of cleared first and written again).
        silenceOutputs(outputs, except: min(channelCount, outputs.count), from: skip, count: take, frameCount: frameCount)
        // (Nested, not `&&`: the autoclosure of `&&` would retain self.)
        if take > 0 {
            if firstPlayedFrame.load(ordering: .relaxed) == .max {
                firstPlayedFrame.store(cycleFrame &+ UInt64(skip), ordering: .releasing)
            }
        }

        // Volume: a new target starts a linear ramp over the ramp time (a step when it is 0).
        let targetBits = targetGainBits.load(ordering: .relaxed)
        if targetBits != appliedTargetBits {
            appliedTargetBits = targetBits
            let ramp = rampFrameCount.load(ordering: .relaxed)
            let target = Float(bitPattern: targetBits)
            if ramp > 0 {
                rampStartGain = gain
                rampDelta = target - gain
                rampDone = 0
                rampTotal = ramp
            } else {
                gain = target
                rampTotal = 0
            }
        }
        let pan = Float(bitPattern: panBits.load(ordering: .relaxed))
        let isStereo = channelCount == 2
        var leftBalance: Float = 1
        var rightBalance: Float = 1
        if isStereo {
            if pan > 0 { leftBalance = 1 - pan }
            if pan < 0 { rightBalance = 1 + pan }
        }

        let channels = min(channelCount, outputs.count)
        if rampDone >= rampTotal {
            // No ramp running: the gain is the same for every frame (the same arithmetic as
            // below, sample × gain × balance); each channel is one contiguous run of the ring.
            // The gain in a local: read from `self` in the loop, it had to be reloaded after every
            // store (the output could alias it), which kept the loop from vectorizing.
            let gain = gain
            for channel in 0 ..< channels {
                let balance = channel == 0 ? leftBalance : channel == 1 ? rightBalance : 1
                let output = outputs[channel] + skip
                let run = samples.channelRun(channel, count: take)
                let head = run.first.count
                if gain == 1 && balance == 1 {
                    // Unity, the usual case: x × 1 × 1 is x, so the samples are moved as they are
                    // by libc's memmove (the vector width of this CPU), not multiplied in the
                    // baseline x86-64 SSE this module is compiled for: 2.2-3.0x a planar copy
                    // before, `aqbench cold-playback`.
                    // (A C call the performance annotations cannot see into: memmove neither
                    // allocates, locks nor makes a system call.)
                    _unsafePerformance {
                        if head > 0 { _ = memmove(output, run.first.baseAddress!, head * MemoryLayout<Float>.size) }
                        if take > head { _ = memmove(output + head, run.second.baseAddress!, (take - head) * MemoryLayout<Float>.size) }
                    }
                    continue
                }
                for frame in 0 ..< head { output[frame] = run.first[frame] * gain * balance }
                for frame in 0 ..< take - head { output[head + frame] = run.second[frame] * gain * balance }
            }
        } else {
            // A ramp: the gain changes frame by frame. Each channel repeats the same steps from
            // the same starting state, so every channel gets the same gain at the same frame.
            let startGain = gain, startDone = rampDone
            for channel in 0 ..< channels {
                let balance = channel == 0 ? leftBalance : channel == 1 ? rightBalance : 1
                let run = samples.channelRun(channel, count: take)
                gain = startGain
                rampDone = startDone
                for frame in 0 ..< take {
                    if rampDone < rampTotal {
                        rampDone += 1
                        gain = rampDone == rampTotal ? Float(bitPattern: appliedTargetBits)
                            : rampStartGain + rampDelta * (Float(rampDone) / Float(rampTotal))
                    }
                    outputs[channel][skip + frame] = run[frame] * gain * balance
                }
            }
            if channels == 0 {
                for _ in 0 ..< take where rampDone < rampTotal {
                    rampDone += 1
                    gain = rampDone == rampTotal ? Float(bitPattern: appliedTargetBits)
                        : rampStartGain + rampDelta * (Float(rampDone) / Float(rampTotal))
                }
            }
        }
        samples.commitRead(take)
        playedFrameCount.store(played + take, ordering: .relaxed)

        if played + take >= target {
            isDrained.store(true, ordering: .releasing)
        } else if take < wanted {
            // The ring ran dry while playing: silence, counted; one event per dry spell.
            underrunFrameCount.add(wanted - take, ordering: .relaxed)
            if !wasStarved { underrunEventCount.add(1, ordering: .relaxed) }
            wasStarved = true
        } else {
            wasStarved = false
        }
        wakeup.signal()
    }

    // Control, from the queue thread.

    /// Plays from device frame `frame` on (`nil`: stop playing at the next cycle).
    public func play(fromFrame frame: UInt64?) {
        connectionWait.cancel()
        if frame != nil { firstPlayedFrame.store(.max, ordering: .relaxed) }
        startFrame.store(frame ?? .max, ordering: .releasing)
    }

    /// Plays from the first cycle whose graph has output `output` connected to the port named
    /// `peer` (the last connection a start made; every connection made before it is in that
    /// graph too), or from frame `latest` when no such cycle comes before it.
    public func play(onceOutput output: Int, isConnectedTo peer: String, noLaterThan latest: UInt64) {
        connectionWait.wait(port: output, peer: peer)
        firstPlayedFrame.store(.max, ordering: .relaxed)
        startFrame.store(latest, ordering: .releasing)
    }

    public func setPaused(_ value: Bool) { paused.store(value, ordering: .releasing) }

    /// Stops taking frames once `frames` (counted from the processor's creation) have played.
    /// Setting the same target again changes nothing (it does not clear ``isDrained``).
    public func drain(afterTotalFrames frames: Int) {
        guard drainTarget.load(ordering: .acquiring) != frames else { return }
        isDrained.store(false, ordering: .relaxed)
        drainTarget.store(frames, ordering: .releasing)
    }

    /// Forgets a drain target.
    public func cancelDrain() {
        drainTarget.store(.max, ordering: .releasing)
        isDrained.store(false, ordering: .relaxed)
    }

    /// Drops whatever the ring holds, at the next cycle.
    public func discardQueuedFrames() { discardRequested.store(true, ordering: .releasing) }

    /// Whether a discard has been requested and not yet carried out.
    public var isDiscardPending: Bool { discardRequested.load(ordering: .acquiring) }

    /// Sets the volume (linear 0 ... 1), reached over `rampFrames` frames.
    public func setGain(_ gain: Float, rampFrames: Int) {
        rampFrameCount.store(max(0, rampFrames), ordering: .relaxed)
        targetGainBits.store(gain.bitPattern, ordering: .releasing)
    }

    /// Stereo balance, -1 (left) ... 1 (right); no effect on other channel counts.
    public func setPan(_ pan: Float) { panBits.store(pan.bitPattern, ordering: .releasing) }
}

/// The producer side of a ``PlaybackProcessor``: writes interleaved frames into its planar ring.
/// Use from one thread at a time (the queue thread); not real-time.
public final class PlaybackFeeder: @unchecked Sendable {
    public let channelCount: Int
    let samples: PlanarRingProducer
    let wakeup: RealtimeWakeup
    /// Where ``write(frameCount:_:)`` has its frames made, interleaved, before they are spread
    /// over the channels; grown on demand, up to ``scratchFrames``.
    private var scratch = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)
    /// Frames made at a time by ``write(frameCount:_:)``.
    static let scratchFrames = 4096

    init(channelCount: Int, samples: consuming PlanarRingProducer, wakeup: RealtimeWakeup) {
        self.channelCount = channelCount
        self.samples = samples
        self.wakeup = wakeup
    }

    deinit {
        scratch.deallocate()
        wakeup.destroy()
    }

    /// Frames of free space in the ring.
    public var writableFrameCount: Int { samples.writableFrames }

    /// Frames in the ring not yet played.
    public var queuedFrameCount: Int { samples.capacityFrames - samples.writableFrames }

    /// Frames the ring holds when full.
    public var capacityFrames: Int { samples.capacityFrames }

    /// Writes up to `frameCount` interleaved frames; returns how many fit.
    public func write(_ frames: UnsafePointer<Float>, frameCount: Int) -> Int {
        let count = min(frameCount, writableFrameCount)
        if count > 0 { samples.writeInterleaved(frames, frameCount: count) }
        return count
    }

    /// Writes up to `frameCount` interleaved frames that `produce` makes: it fills runs of
    /// interleaved samples, each told how many samples of the frames come before it. Returns the
    /// frames written.
    public func write(frameCount: Int, _ produce: (_ samples: UnsafeMutableBufferPointer<Float>, _ samplesBefore: Int) -> Void) -> Int {
        let count = min(frameCount, writableFrameCount)
        guard count > 0 else { return 0 }
        let chunk = min(count, Self.scratchFrames)
        if scratch.count < chunk * channelCount {
            scratch.deallocate()
            scratch = .allocate(capacity: chunk * channelCount)
        }
        var done = 0
        while done < count {
            let frames = min(chunk, count - done)
            produce(UnsafeMutableBufferPointer(rebasing: scratch[0 ..< frames * channelCount]), done * channelCount)
            samples.writeInterleaved(scratch.baseAddress!, frameCount: frames)
            done += frames
        }
        return count
    }

    /// Waits up to `milliseconds` for the process thread to finish a cycle.
    public func waitForCycle(milliseconds: Int) { wakeup.wait(milliseconds: milliseconds) }
}

/// Writes silence to every output, except frames `from ..< from + count` of the first `except`
/// outputs (which the caller writes). Real-time safe.
@inline(__always)
func silenceOutputs(_ outputs: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, except written: Int, from start: Int, count: Int, frameCount: Int) {
    for channel in 0 ..< outputs.count {
        let output = outputs[channel]
        if channel < written {
            for frame in 0 ..< start { output[frame] = 0 }
            for frame in start + count ..< frameCount { output[frame] = 0 }
        } else {
            for frame in 0 ..< frameCount { output[frame] = 0 }
        }
    }
}
