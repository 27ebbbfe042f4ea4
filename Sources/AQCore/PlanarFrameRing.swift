import Synchronization

/// A lock-free single-producer/single-consumer ring of multichannel frames stored planar: channel
/// `c`'s samples in their own run of ``PlanarRingConsumer/capacityFrames`` samples, so the process
/// thread copies each channel contiguously instead of gathering it from interleaved frames.
///
/// Used for playback: the feeder (queue thread) writes interleaved frames and this ring spreads
/// them over the channels; the process thread reads one contiguous run (two at the wrap) per
/// output port. Gathering a channel out of interleaved frames at 1024 channels cost 263-297 us a
/// cycle with a cold ring (aqbench cold-playback), against 12 us for contiguous copies.
///
/// Memory and indices are an ``SPSCRing``'s (`_RingStorage`): allocated, touched and locked in
/// memory before use; the indices count frames, free-running.
@frozen
public struct PlanarFrameRing: ~Copyable {
    public var producer: PlanarRingProducer
    public var consumer: PlanarRingConsumer

    /// A ring of at least `minimumFrames` frames of `channelCount` channels, all zero.
    /// Allocates: call it off the process thread.
    public init(channelCount: Int, minimumFrames: Int) {
        precondition(channelCount > 0 && minimumFrames > 0, "a planar ring needs channels and frames")
        // The storage is a power of two of samples; each channel gets an equal share of it.
        // (An odd number of 64-byte lines per channel, so that 1024 channels' runs do not all
        // start in one cache set, made no difference to the tiled writeInterleaved or to the
        // process thread's read: aqbench feeder 1024 1 128 104-135 us against 122-127 us,
        // cold-playback 1024 2 26 us against 26-28 us.)
        var samples = 1
        while samples < channelCount * minimumFrames { samples <<= 1 }
        let storage = _RingStorage<Float>(capacity: samples, startIndex: 0)
        let capacityFrames = samples / channelCount
        producer = PlanarRingProducer(storage: storage, channelCount: channelCount, capacityFrames: capacityFrames)
        consumer = PlanarRingConsumer(storage: storage, channelCount: channelCount, capacityFrames: capacityFrames)
    }
}

/// The samples of one channel for a run of frames, as at most two contiguous segments (the
/// second after the wrap). Real-time safe.
@inlinable @inline(__always)
func planarRun(_ storage: _RingStorage<Float>, capacityFrames: Int, channel: Int, fromFrame index: Int, count: Int) -> RingRegions<Float> {
    let start = index % capacityFrames
    let base = storage.elements + channel * capacityFrames
    let firstCount = Swift.min(count, capacityFrames - start)
    return RingRegions(first: UnsafeMutableBufferPointer(start: base + start, count: firstCount),
                       second: UnsafeMutableBufferPointer(start: base, count: count - firstCount))
}

/// The writing end of a ``PlanarFrameRing``: one thread at a time (the queue thread).
/// Real-time safe except `deinit`.
public struct PlanarRingProducer: ~Copyable, @unchecked Sendable {
    @usableFromInline let storage: _RingStorage<Float>
    public let channelCount: Int
    /// Frames the ring holds when full.
    public let capacityFrames: Int

    init(storage: _RingStorage<Float>, channelCount: Int, capacityFrames: Int) {
        self.storage = storage
        self.channelCount = channelCount
        self.capacityFrames = capacityFrames
    }

    deinit { storage.releaseEnd() }

    public var isMemoryLocked: Bool { storage.isLocked }

    /// Frames that can be written now.
    @inlinable
    public var writableFrames: Int {
        let written = storage.writeIndex.pointee.load(ordering: .relaxed)
        let read = storage.readIndex.pointee.load(ordering: .acquiring)
        return capacityFrames - (written &- read)
    }

    /// Where channel `channel`'s next `count` frames go (at most ``writableFrames``); publish
    /// them, for every channel, with ``commitWrite(_:)``.
    @inlinable
    public func channelRun(_ channel: Int, count: Int) -> RingRegions<Float> {
        planarRun(storage, capacityFrames: capacityFrames, channel: channel,
                  fromFrame: storage.writeIndex.pointee.load(ordering: .relaxed), count: count)
    }

    /// Makes the next `frames` frames of every channel visible to the consumer.
    @inlinable
    public func commitWrite(_ frames: Int) {
        let written = storage.writeIndex.pointee.load(ordering: .relaxed)
        storage.writeIndex.pointee.store(written &+ frames, ordering: .releasing)
    }

    /// Writes `frameCount` interleaved frames (at most ``writableFrames``), in tiles
    /// (``SampleTranspose``; channel by channel cost 4 KiB strides at 1024 channels).
    public func writeInterleaved(_ frames: UnsafePointer<Float>, frameCount: Int) {
        precondition(frameCount <= writableFrames, "writing more frames than the planar ring has room for")
        guard frameCount > 0 else { return }
        // Every channel's run wraps at the same frame: channel c's is c × capacityFrames on.
        let run = channelRun(0, count: frameCount)
        SampleTranspose.deinterleave(frames, frameCount: run.first.count, channelCount: channelCount,
                                     into: run.first.baseAddress!, channelStride: capacityFrames)
        if run.second.count > 0 {
            SampleTranspose.deinterleave(frames + run.first.count * channelCount, frameCount: run.second.count, channelCount: channelCount,
                                         into: run.second.baseAddress!, channelStride: capacityFrames)
        }
        commitWrite(frameCount)
    }
}

/// The reading end of a ``PlanarFrameRing``: one thread at a time (the process thread).
/// Real-time safe except `deinit`.
public struct PlanarRingConsumer: ~Copyable, @unchecked Sendable {
    @usableFromInline let storage: _RingStorage<Float>
    public let channelCount: Int
    /// Frames the ring holds when full.
    public let capacityFrames: Int

    init(storage: _RingStorage<Float>, channelCount: Int, capacityFrames: Int) {
        self.storage = storage
        self.channelCount = channelCount
        self.capacityFrames = capacityFrames
    }

    deinit { storage.releaseEnd() }

    public var isMemoryLocked: Bool { storage.isLocked }

    /// Frames written and not yet read.
    @inlinable
    public var readableFrames: Int {
        let read = storage.readIndex.pointee.load(ordering: .relaxed)
        let written = storage.writeIndex.pointee.load(ordering: .acquiring)
        return written &- read
    }

    /// Channel `channel`'s next `count` unread frames (at most ``readableFrames``).
    @inlinable
    public func channelRun(_ channel: Int, count: Int) -> RingRegions<Float> {
        planarRun(storage, capacityFrames: capacityFrames, channel: channel,
                  fromFrame: storage.readIndex.pointee.load(ordering: .relaxed), count: count)
    }

    /// Returns the next `frames` frames of every channel to the producer.
    @inlinable
    public func commitRead(_ frames: Int) {
        let read = storage.readIndex.pointee.load(ordering: .relaxed)
        storage.readIndex.pointee.store(read &+ frames, ordering: .releasing)
    }
}
