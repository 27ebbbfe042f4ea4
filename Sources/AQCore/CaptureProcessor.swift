import Glibc
import Synchronization

/// Copies every input port's frames into a sample ring, one planar block (channel after channel)
/// and one ``CaptureCycle`` record per cycle, on the process thread; a ``CaptureReader`` takes
/// them off on another thread and hands them on interleaved.
///
/// When the ring cannot take a whole cycle, the cycle is dropped whole and counted
/// (``overrunFrameCount`` and the next record's `droppedFramesBefore`); nothing waits, except
/// while the server freewheels (``setWaitsWhenFull(_:)``).
public final class CaptureProcessor: RealtimeProcessor, @unchecked Sendable {
    /// Channels interleaved per frame: one per input port.
    public let channelCount: Int
    @usableFromInline let samples: RingProducer<Float>
    @usableFromInline let cycles: RingProducer<CaptureCycle>
    @usableFromInline let wakeup: RealtimeWakeup
    /// Posted by the reader after each cycle it takes while it waits for space in freewheel.
    @usableFromInline let spaceWakeup: RealtimeWakeup
    @usableFromInline var frameTimes = FrameTimeExtender()
    @usableFromInline var droppedSinceLastRecord = 0
    /// Frames dropped so far because the ring was full (all channels count once). Any thread.
    public let overrunFrameCount = Atomic<Int>(0)
    /// Frames by which JACK's frame time jumped ahead between two cycles while recording: the
    /// server ran no cycle for them (it does so after a late cycle), so no client had them. A
    /// jump that JACK takes back on the next cycle (a relabelled cycle) counts too. Any thread.
    public let serverSkippedFrameCount = Atomic<Int>(0)
    /// Cycles recorded so far. Any thread.
    public let recordedCycleCount = Atomic<Int>(0)
    /// The first JACK frame to record; `UInt64.max` records nothing. Starts at 0 (record all).
    /// While a start waits for its connection (``connectionWait``), the latest frame it may
    /// start at.
    let armedFromFrame = Atomic<UInt64>(0)
    /// The connection a start waits for, if any.
    let connectionWait = ConnectionWait()
    /// Frame time at which the next cycle starts, published every cycle.
    let latestFrameTime = Atomic<UInt64>(0)
    /// Whether a full ring makes the process thread wait for the reader instead of dropping the
    /// cycle (``setWaitsWhenFull(_:)``). Shared with the reader, which frees it with the
    /// semaphores.
    @usableFromInline let waitsWhenFull: UnsafeMutablePointer<Atomic<Bool>>
    /// The longest a freewheeling cycle waits for ring space before it is dropped as in real
    /// time (a reader that stopped reading must not hang the server), milliseconds.
    public static let freewheelWaitLimitMilliseconds = 2000

    init(channelCount: Int, samples: consuming RingProducer<Float>,
         cycles: consuming RingProducer<CaptureCycle>, wakeup: RealtimeWakeup, spaceWakeup: RealtimeWakeup,
         waitsWhenFull: UnsafeMutablePointer<Atomic<Bool>>) {
        self.channelCount = channelCount
        self.samples = samples
        self.cycles = cycles
        self.wakeup = wakeup
        self.spaceWakeup = spaceWakeup
        self.waitsWhenFull = waitsWhenFull
    }

    /// Makes a full ring wait for the reader instead of dropping the cycle, or not: on while the
    /// server freewheels, when cycles have no deadline (the next starts once every client has
    /// returned, as fast as the disk takes the frames), so a recording in freewheel loses
    /// nothing; off (the default) in real time, where nothing may wait. Any thread.
    public func setWaitsWhenFull(_ waits: Bool) {
        waitsWhenFull.pointee.store(waits, ordering: .relaxed)
        if !waits { spaceWakeup.signal() }
    }

    /// The bytes ``make(channelCount:capacityFrames:)`` maps for its rings.
    public static func ringBytes(channelCount: Int, capacityFrames: Int) -> Int {
        RingMemory.bytes(minimumElements: channelCount * capacityFrames, stride: MemoryLayout<Float>.stride)
            + RingMemory.bytes(minimumElements: max(64, capacityFrames / 16), stride: MemoryLayout<CaptureCycle>.stride)
    }

    /// Creates a processor and its reader sharing rings of at least `capacityFrames` frames.
    /// Allocates and touches all memory now; call before activation.
    public static func make(channelCount: Int, capacityFrames: Int) -> (CaptureProcessor, CaptureReader) {
        precondition(channelCount > 0, "a capture needs at least one channel")
        let sampleRing = SPSCRing<Float>(minimumCapacity: channelCount * capacityFrames)
        // A record per cycle; periods shorter than 16 frames are not expected from JACK.
        let cycleRing = SPSCRing<CaptureCycle>(minimumCapacity: max(64, capacityFrames / 16))
        let wakeup = RealtimeWakeup(), spaceWakeup = RealtimeWakeup()
        let waitsWhenFull = UnsafeMutablePointer<Atomic<Bool>>.allocate(capacity: 1)
        waitsWhenFull.initialize(to: Atomic(false))
        let processor = CaptureProcessor(channelCount: channelCount, samples: sampleRing.producer,
                                         cycles: cycleRing.producer, wakeup: wakeup, spaceWakeup: spaceWakeup,
                                         waitsWhenFull: waitsWhenFull)
        let reader = CaptureReader(channelCount: channelCount, samples: sampleRing.consumer,
                                   cycles: cycleRing.consumer, wakeup: wakeup, spaceWakeup: spaceWakeup,
                                   waitsWhenFull: waitsWhenFull)
        return (processor, reader)
    }

    public static let realtimeEntry: RealtimeEntry = { processor, cycle in
        Unmanaged<CaptureProcessor>.fromOpaque(processor)._withUnsafeGuaranteedRef { $0.process(cycle.load(as: ProcessCycle.self)) }
    }

    /// Copies this cycle's input buffers into the ring and records the cycle, or drops the
    /// cycle whole and counts it when the ring is full.
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    public func process(_ cycle: ProcessCycle) {
        let cycleFrameTime = frameTimes.extend(cycle.frameTime)
        let previousEnd = latestFrameTime.load(ordering: .relaxed)
        latestFrameTime.store(cycleFrameTime &+ UInt64(cycle.frameCount), ordering: .relaxed)
        var armedFrom = armedFromFrame.load(ordering: .acquiring)
        if armedFrom != .max {
            guard let resolved = connectionWait.resolve(armedFrom, startFrame: armedFromFrame, cycle: cycle, cycleFrame: cycleFrameTime, input: true) else { return }
            armedFrom = resolved
        }
        // JACK's frame time jumped past the previous cycle's end while recording: frames the
        // server never ran a cycle for (after a late cycle, an xrun), not frames this client lost.
        if previousEnd > 0, cycleFrameTime > previousEnd, armedFrom < previousEnd {
            serverSkippedFrameCount.add(Int(cycleFrameTime &- previousEnd), ordering: .relaxed)
        }
        guard cycleFrameTime &+ UInt64(cycle.frameCount) > armedFrom else { return }
        // A start in the middle of this cycle records from that frame on.
        let skip = armedFrom > cycleFrameTime ? Int(armedFrom &- cycleFrameTime) : 0
        let frameTime = cycleFrameTime &+ UInt64(skip)
        let frameCount = cycle.frameCount - skip
        let sampleCount = frameCount * channelCount
        var sampleSpace = samples.writableRegions()
        var recordSpace = cycles.writableRegions()
        if sampleSpace.count < sampleCount ? true : recordSpace.count < 1, waitsWhenFull.pointee.load(ordering: .relaxed) {
            // Freewheeling: no deadline, so wait for the reader to take cycles (it posts
            // spaceWakeup after each), at most freewheelWaitLimitMilliseconds. Not real-time
            // safe, and never reached in real time (waitsWhenFull is off then).
            // (The blocking calls are wrapped one by one, capturing only plain values.)
            let space = spaceWakeup
            let limit = _unsafePerformance { monotonicMilliseconds() } + Self.freewheelWaitLimitMilliseconds
            // (No `||` here: its right side is a closure over self, which costs reference counts.)
            while true {
                sampleSpace = samples.writableRegions()
                recordSpace = cycles.writableRegions()
                let full = sampleSpace.count < sampleCount ? true : recordSpace.count < 1
                guard full, waitsWhenFull.pointee.load(ordering: .relaxed), _unsafePerformance({ monotonicMilliseconds() }) < limit else { break }
                wakeup.signal()
                _unsafePerformance { _ = space.wait(milliseconds: 20) }
            }
        }
        guard sampleSpace.count >= sampleCount, recordSpace.count >= 1 else {
            droppedSinceLastRecord += frameCount
            overrunFrameCount.add(frameCount, ordering: .relaxed)
            return
        }
        // One planar block per cycle: channel c's frames at c × frameCount, each port buffer
        // copied straight (the reader interleaves). Interleaving here made every sample a
        // strided store: measured off-line with a 2 s ring and fresh inputs (aqbench
        // cold-capture), 326 us a cycle at 1024 channels (16 rows 4 KiB apart share cache sets)
        // and 228 us at 2040, against 25 and 50 us for the planar copy; on the dummy server at
        // 2040 channels, 6,901 of 8,491 callbacks used more than 500 us of CPU, 966 of 8,920
        // planar.
        let connected = min(channelCount, cycle.inputs.count)
        for channel in 0 ..< channelCount {
            let offset = channel * frameCount
            if channel < connected {
                copyPlanarRun(cycle.inputs[channel] + skip, count: frameCount, into: sampleSpace, at: offset)
            } else {
                clearPlanarRun(count: frameCount, in: sampleSpace, at: offset)
            }
        }
        samples.commitWrite(sampleCount)
        recordSpace[0] = CaptureCycle(frameTime: frameTime, frameCount: frameCount,
                                      droppedFramesBefore: droppedSinceLastRecord,
                                      cycleStartMicros: cycle.cycleStartMicros,
                                      nextCycleStartMicros: cycle.nextCycleStartMicros,
                                      transportRolling: cycle.transportRolling,
                                      transportFrame: UInt64(cycle.transportFrame) &+ UInt64(skip))
        cycles.commitWrite(1)
        droppedSinceLastRecord = 0
        recordedCycleCount.add(1, ordering: .relaxed)
        wakeup.signal()
    }

    /// Records from JACK frame `frame` on (0: from the next cycle; `nil`: stop recording).
    /// Any thread. A frame inside a cycle starts the recording mid-cycle, sample-accurately.
    public func arm(fromFrame frame: UInt64?) {
        connectionWait.cancel()
        armedFromFrame.store(frame ?? .max, ordering: .releasing)
    }

    /// Records from the first cycle whose graph has input `input` connected to the port named
    /// `peer` (the last connection a start made; every connection made before it is in that
    /// graph too), or from frame `latest` when no such cycle comes before it. Any thread.
    public func arm(onceInput input: Int, isConnectedTo peer: String, noLaterThan latest: UInt64) {
        connectionWait.wait(port: input, peer: peer)
        armedFromFrame.store(latest, ordering: .releasing)
    }

    /// The JACK frame time (64-bit) at which the next cycle starts, as of the latest cycle;
    /// 0 before the first. Any thread.
    public var nextCycleFrameTime: UInt64 { latestFrameTime.load(ordering: .relaxed) }
}

/// The consumer side of a ``CaptureProcessor``: hands out each recorded cycle with its
/// interleaved samples. Use from one thread at a time (the queue or disk thread); not real-time.
public final class CaptureReader: @unchecked Sendable {
    /// Channels interleaved per frame.
    public let channelCount: Int
    let samples: RingConsumer<Float>
    let cycles: RingConsumer<CaptureCycle>
    let wakeup: RealtimeWakeup
    let spaceWakeup: RealtimeWakeup
    /// The processor's flag (``CaptureProcessor/setWaitsWhenFull(_:)``); freed here, with the
    /// semaphores, once both sides are done.
    private let waitsWhenFull: UnsafeMutablePointer<Atomic<Bool>>

    init(channelCount: Int, samples: consuming RingConsumer<Float>, cycles: consuming RingConsumer<CaptureCycle>,
         wakeup: RealtimeWakeup, spaceWakeup: RealtimeWakeup, waitsWhenFull: UnsafeMutablePointer<Atomic<Bool>>) {
        self.channelCount = channelCount
        self.samples = samples
        self.cycles = cycles
        self.wakeup = wakeup
        self.spaceWakeup = spaceWakeup
        self.waitsWhenFull = waitsWhenFull
    }

    /// Where ``readCycle(_:)`` interleaves a cycle's planar block; grown to the largest cycle.
    private var scratch = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)
    /// Where a planar block that wraps around the ring's end is joined first (once a lap).
    private var joined = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)

    /// Interleaves the planar block of `frameCount` frames at the start of `block` into
    /// ``scratch`` (``SampleTranspose``, in cache-sized tiles).
    private func interleave(_ block: RingRegions<Float>, frameCount: Int) -> UnsafeMutableBufferPointer<Float> {
        let sampleCount = frameCount * channelCount
        if scratch.count < sampleCount {
            scratch.deallocate()
            scratch = .allocate(capacity: sampleCount)
        }
        let planar: UnsafePointer<Float>
        if sampleCount <= block.first.count {
            planar = UnsafePointer(block.first.baseAddress!)
        } else {
            if joined.count < sampleCount {
                joined.deallocate()
                joined = .allocate(capacity: sampleCount)
            }
            block.copy(into: UnsafeMutableBufferPointer(rebasing: joined[0 ..< sampleCount]))
            planar = UnsafePointer(joined.baseAddress!)
        }
        SampleTranspose.interleave(planar, channelStride: frameCount, frameCount: frameCount, channelCount: channelCount,
                                   into: scratch.baseAddress!)
        return UnsafeMutableBufferPointer(rebasing: scratch[0 ..< sampleCount])
    }

    deinit {
        scratch.deallocate()
        joined.deallocate()
        wakeup.destroy()
        spaceWakeup.destroy()
        waitsWhenFull.deinitialize(count: 1)
        waitsWhenFull.deallocate()
    }

    /// Cycles recorded and not yet read.
    public var pendingCycleCount: Int { cycles.readableCount }

    /// Interleaved samples recorded and not yet read.
    public var pendingSampleCount: Int { samples.readableCount }

    /// Samples the ring holds when full.
    public var sampleCapacity: Int { samples.capacity }
    /// Whether the sample ring is locked in memory (see ``SPSCRing``).
    public var isMemoryLocked: Bool { samples.isMemoryLocked }

    /// Waits up to `milliseconds` for the process thread to record a cycle.
    /// - Returns: `true` when a cycle is pending.
    /// - Parameter count: the cycles to wait for (pending ones included).
    @discardableResult
    public func waitForCycle(milliseconds: Int, count: Int = 1) -> Bool {
        // The semaphore counts every post, including those for cycles already read: a wake-up
        // does not mean a cycle is pending, so check again until the time is up.
        let deadline = monotonicMilliseconds() + milliseconds
        while cycles.readableCount < count {
            let remaining = deadline - monotonicMilliseconds()
            guard remaining > 0 else { return false }
            wakeup.wait(milliseconds: remaining)
        }
        return true
    }

    /// The record of the pending cycle `index` places after the oldest (0: the oldest), without
    /// reading it; `nil` when fewer are pending.
    public func peekCycle(at index: Int = 0) -> CaptureCycle? {
        let records = cycles.readableRegions()
        return index < records.count ? records[index] : nil
    }

    /// Hands the oldest pending cycle and its `frameCount × channelCount` interleaved samples to
    /// `body`, then releases them to the process thread. The samples are valid during `body` only.
    /// - Returns: `body`'s result, or `nil` when no cycle is pending.
    public func readCycle<Result>(_ body: (CaptureCycle, RingRegions<Float>) throws -> Result) rethrows -> Result? {
        let records = cycles.readableRegions()
        guard records.count > 0 else { return nil }
        let record = records[0]
        let sampleCount = record.frameCount * channelCount
        let all = samples.readableRegions()
        precondition(all.count >= sampleCount, "capture ring holds fewer samples than its cycle record says")
        let interleaved = interleave(all, frameCount: record.frameCount)
        let result = try body(record, RingRegions(first: interleaved, second: UnsafeMutableBufferPointer(start: nil, count: 0)))
        samples.commitRead(sampleCount)
        cycles.commitRead(1)
        if waitsWhenFull.pointee.load(ordering: .relaxed) { spaceWakeup.signal() }
        return result
    }
}

// Kept in this file: a @_noLocks function can only see the bodies of callees in its own file in
// debug builds, which compile each file alone.
/// Copies `count` samples from `source` to elements `offset ..< offset + count` of `run`.
/// Real-time safe.
@usableFromInline @inline(__always)
func copyPlanarRun(_ source: UnsafePointer<Float>, count: Int, into run: RingRegions<Float>, at offset: Int) {
    let firstCount = run.first.count
    let head = max(0, min(count, firstCount - offset))
    if head > 0 {
        let target = run.first.baseAddress.unsafelyUnwrapped + offset
        for index in 0 ..< head { target[index] = source[index] }
    }
    if head < count {
        let target = run.second.baseAddress.unsafelyUnwrapped + (offset + head - firstCount)
        for index in 0 ..< count - head { target[index] = source[head + index] }
    }
}

/// Sets elements `offset ..< offset + count` of `run` to 0. Real-time safe.
@usableFromInline @inline(__always)
func clearPlanarRun(count: Int, in run: RingRegions<Float>, at offset: Int) {
    for index in offset ..< offset + count { run[index] = 0 }
}

/// Extends JACK's 32-bit wrapping frame time to 64 bits. Real-time safe.
@frozen
public struct FrameTimeExtender: Sendable {
    @usableFromInline var last32: UInt32 = 0
    @usableFromInline var last64: UInt64 = 0
    @usableFromInline var hasStarted = false

    public init() {}

    /// The 64-bit frame time of `frameTime`, which must come no more than 2^31 frames after
    /// the previous one given.
    @_transparent
    public mutating func extend(_ frameTime: UInt32) -> UInt64 {
        if hasStarted {
            last64 &+= UInt64(truncatingIfNeeded: frameTime &- last32)
        } else {
            last64 = UInt64(truncatingIfNeeded: frameTime)
            hasStarted = true
        }
        last32 = frameTime
        return last64
    }

    /// The 64-bit frame nearest `reference` (within 2^31 frames either way) whose low 32 bits
    /// are `frame`; never below 0. For a frame read off a clock between cycles.
    public static func extend(_ frame: UInt32, near reference: UInt64) -> UInt64 {
        let delta = Int64(Int32(bitPattern: frame &- UInt32(truncatingIfNeeded: reference)))
        return UInt64(max(0, Int64(reference) + delta))
    }
}

/// Milliseconds on the monotonic clock. Not real-time relevant; for timeouts.
func monotonicMilliseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}
