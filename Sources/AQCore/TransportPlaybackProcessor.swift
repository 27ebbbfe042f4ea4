import Synchronization

/// Plays a file that sits on JACK's transport timeline: in a cycle in which the transport rolls
/// at transport frame `p`, the outputs get the file's frames `p ..< p + period` (file frame 0 at
/// transport frame 0); silence while it is stopped or starting. On the process thread, from a
/// planar ring a ``TransportPlaybackFeeder`` fills on another thread.
///
/// The ring holds the file from a known frame on. When the transport is somewhere else (a locate,
/// the first roll), the process thread asks the feeder for that frame (a *seek*, numbered by a
/// generation), empties the ring once the feeder has stopped writing, and plays again when the
/// frames are there. As a slow-sync client (``TransportSyncing``) it holds the transport in
/// `Starting` until the ring holds the new position, so a locate plays sample-accurately from
/// its first rolling frame (JACK waits at most its sync timeout, 2 s by default).
public final class TransportPlaybackProcessor: RealtimeProcessor, TransportSyncing, @unchecked Sendable {
    public let channelCount: Int
    @usableFromInline let samples: PlanarRingConsumer
    @usableFromInline let wakeup: RealtimeWakeup
    /// Frames the ring must hold at the new position before a slow-sync start is let go.
    public let readyFrames: Int
    /// How far ahead of a rolling transport a seek asks for the file (the feeder needs a few
    /// cycles): 8192 frames, 171 ms at 48 kHz.
    public let lookaheadFrames: UInt64 = 8192

    // The seek handshake. Process thread: requests (position, then generation); the feeder
    // parks (stops writing) for it; the process thread empties the ring and marks it ready.
    let requestedPosition = Atomic<UInt64>(0)
    let requestedGeneration = Atomic<Int>(0)
    let parkedGeneration = Atomic<Int>(0)
    let readyGeneration = Atomic<Int>(0)

    // Process thread only.
    @usableFromInline var generation = 0
    /// The transport frame of the ring's next frame, once the latest seek is ready.
    @usableFromInline var ringPosition: UInt64 = 0
    @usableFromInline var ringIsReady = false
    @usableFromInline var pendingPosition: UInt64 = 0

    // Reports, any thread.
    /// Frames played from the file while rolling.
    public let playedFrameCount = Atomic<Int>(0)
    /// Frames that rolled while the ring did not hold them (silence): a locate by a master that
    /// does not wait for slow-sync clients, or a feeder that fell behind.
    public let missedFrameCount = Atomic<Int>(0)
    /// Seeks asked of the feeder.
    public let seekCount = Atomic<Int>(0)
    /// Whether the transport rolled in the latest cycle.
    public let isRolling = Atomic<Bool>(false)
    /// The levels of the outputs as played (silence while stopped), every cycle.
    public var meter: CycleLevelMeter { meterBox.takeUnretainedValue() }
    /// Retained here (released in deinit), unmanaged so the process thread meters without
    /// reference counting.
    private let meterBox: Unmanaged<CycleLevelMeter>

    init(channelCount: Int, samples: consuming PlanarRingConsumer, wakeup: RealtimeWakeup, readyFrames: Int, meter: CycleLevelMeter) {
        self.channelCount = channelCount
        self.samples = samples
        self.wakeup = wakeup
        self.readyFrames = readyFrames
        meterBox = .passRetained(meter)
    }

    deinit { meterBox.release() }

    /// A processor and its feeder sharing a ring of at least `capacityFrames` frames; a start
    /// waits for `readyFrames` of them (at most half the ring). The outputs are metered over
    /// windows of at least `meterWindowFrames`.
    public static func make(channelCount: Int, capacityFrames: Int, readyFrames: Int, meterWindowFrames: Int) -> (TransportPlaybackProcessor, TransportPlaybackFeeder) {
        precondition(channelCount > 0, "playback needs at least one channel")
        let ring = PlanarFrameRing(channelCount: channelCount, minimumFrames: capacityFrames)
        let wakeup = RealtimeWakeup()
        let capacity = ring.consumer.capacityFrames
        let processor = TransportPlaybackProcessor(channelCount: channelCount, samples: ring.consumer, wakeup: wakeup,
                                                   readyFrames: min(readyFrames, capacity / 2),
                                                   meter: CycleLevelMeter(channelCount: channelCount, windowFrames: meterWindowFrames))
        let feeder = TransportPlaybackFeeder(processor: processor, samples: ring.producer, wakeup: wakeup)
        return (processor, feeder)
    }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<TransportPlaybackProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    public static let syncEntry: TransportSyncEntry = { processor, starting, position in
        Unmanaged<TransportPlaybackProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.sync(starting: starting, position: position) }
    }

    /// Whether the file is ready to roll from transport frame `position`; asks the feeder for it
    /// when not. JACK calls it on the process thread, before the cycle, while the transport is
    /// starting or after a locate.
    ///
    /// - Important: Real-time safe.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func sync(starting: Bool, position: UInt32) -> Bool {
        completeSeek()
        let wanted = UInt64(position)
        if ringIsReady, ringPosition == wanted {
            return samples.readableFrames >= readyFrames
        }
        // (Values first, no `||`: its autoclosure would retain self.)
        let nothingAsked = generation == 0, elsewhere = pendingPosition != wanted, ready = ringIsReady
        if nothingAsked ? true : (ready ? true : elsewhere) { requestSeek(wanted) }
        return false
    }

    /// Plays this cycle's frames of the file when the transport rolls, silence otherwise.
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func process(_ cycle: ProcessCycle) {
        let frameCount = cycle.frameCount
        let outputs = cycle.outputs
        for channel in 0 ..< outputs.count { outputs[channel].update(repeating: 0, count: frameCount) }
        completeSeek()
        defer {
            meterBox._withUnsafeGuaranteedRef { $0.add(outputs, frames: frameCount) }
            wakeup.signal()
        }
        isRolling.store(cycle.transportRolling, ordering: .relaxed)
        guard cycle.transportRolling else { return }
        let position = UInt64(cycle.transportFrame)
        guard ringIsReady else {
            // A seek is on its way; if it is for a frame already passed, ask for one ahead.
            let nothingAsked = generation == 0, passed = pendingPosition < position
            if nothingAsked ? true : passed { requestSeek(position + lookaheadFrames) }
            missedFrameCount.add(frameCount, ordering: .relaxed)
            return
        }
        var available = samples.readableFrames
        if position > ringPosition {
            // Behind the transport: drop the frames it passed, when the ring has them.
            let behind = position - ringPosition
            guard behind <= UInt64(available) else {
                requestSeek(position + lookaheadFrames)
                missedFrameCount.add(frameCount, ordering: .relaxed)
                return
            }
            samples.commitRead(Int(behind))
            ringPosition = position
            available -= Int(behind)
        }
        // Ahead of the transport (a seek landed ahead): silence until it gets there.
        let offset = ringPosition > position ? Int(min(ringPosition - position, UInt64(frameCount))) : 0
        if ringPosition > position + 2 * lookaheadFrames {
            requestSeek(position + lookaheadFrames)   // far ahead: the transport went back
            missedFrameCount.add(frameCount, ordering: .relaxed)
            return
        }
        let take = min(frameCount - offset, available)
        let channels = min(channelCount, outputs.count)
        for channel in 0 ..< channels {
            let run = samples.channelRun(channel, count: take)
            let output = outputs[channel] + offset
            let head = run.first.count
            for frame in 0 ..< head { output[frame] = run.first[frame] }
            for frame in 0 ..< take - head { output[head + frame] = run.second[frame] }
        }
        samples.commitRead(take)
        ringPosition += UInt64(take)
        playedFrameCount.add(take, ordering: .relaxed)
        // Silence before a seek that landed ahead, and past what the ring holds: both missed.
        if take < frameCount { missedFrameCount.add(frameCount - take, ordering: .relaxed) }
    }

    /// Asks the feeder for the file from transport frame `position` on. Process thread.
    @inline(__always)
    func requestSeek(_ position: UInt64) {
        generation += 1
        pendingPosition = position
        ringIsReady = false
        requestedPosition.store(position, ordering: .relaxed)
        requestedGeneration.store(generation, ordering: .releasing)
        seekCount.add(1, ordering: .relaxed)
    }

    /// Once the feeder has parked for the latest seek: empties the ring, which from then on
    /// holds the file from the requested frame. Process thread.
    @inline(__always)
    func completeSeek() {
        guard !ringIsReady, generation > 0, parkedGeneration.load(ordering: .acquiring) == generation else { return }
        if readyGeneration.load(ordering: .relaxed) != generation {
            samples.commitRead(samples.readableFrames)
            readyGeneration.store(generation, ordering: .releasing)
        }
        ringPosition = pendingPosition
        ringIsReady = true
    }
}

/// The feeding side of a ``TransportPlaybackProcessor``: one thread (not real-time) calls
/// ``serviceSeek()`` and writes frames from the position it returns. Not real-time.
public final class TransportPlaybackFeeder: @unchecked Sendable {
    let processor: TransportPlaybackProcessor
    let samples: PlanarRingProducer
    let wakeup: RealtimeWakeup
    private var handledGeneration = 0

    init(processor: TransportPlaybackProcessor, samples: consuming PlanarRingProducer, wakeup: RealtimeWakeup) {
        self.processor = processor
        self.samples = samples
        self.wakeup = wakeup
    }

    deinit { wakeup.destroy() }

    /// When the process thread has asked for another position: parks (writes nothing more),
    /// waits until the ring has been emptied (up to `milliseconds`) and returns the transport
    /// frame to write from next. `nil` when there is nothing new (or the wait timed out: call
    /// again).
    public func serviceSeek(milliseconds: Int = 100) -> UInt64? {
        let generation = processor.requestedGeneration.load(ordering: .acquiring)
        guard generation != handledGeneration else { return nil }
        let position = processor.requestedPosition.load(ordering: .relaxed)
        processor.parkedGeneration.store(generation, ordering: .releasing)
        var waited = 0
        while processor.readyGeneration.load(ordering: .acquiring) != generation {
            // A newer request supersedes this one: park for that instead.
            if processor.requestedGeneration.load(ordering: .acquiring) != generation { return serviceSeek(milliseconds: milliseconds - waited) }
            guard waited < milliseconds else { return nil }
            wakeup.wait(milliseconds: 5)
            waited += 5
        }
        handledGeneration = generation
        return position
    }

    /// Whether a seek is waiting to be serviced (stop writing and call ``serviceSeek(milliseconds:)``).
    public var hasPendingSeek: Bool { processor.requestedGeneration.load(ordering: .acquiring) != handledGeneration }

    /// Frames of free space in the ring.
    public var writableFrameCount: Int { samples.writableFrames }

    /// Writes `frameCount` interleaved frames (at most ``writableFrameCount``).
    public func write(_ frames: UnsafePointer<Float>, frameCount: Int) {
        samples.writeInterleaved(frames, frameCount: frameCount)
    }

    /// Waits up to `milliseconds` for a cycle.
    public func waitForCycle(milliseconds: Int) { wakeup.wait(milliseconds: milliseconds) }
}
