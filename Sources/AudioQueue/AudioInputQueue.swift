import AQCodecs
import AQCore
import AQMedia
import CAudioTypes
import Foundation
import Synchronization

/// A recording queue on an ``AudioDriver`` (a JACK client, or an offline driver the caller clocks):
/// the engine behind `AudioQueueNewInput`. It uses the driver's contract only.
///
/// The queue's driver has input channels `in_1 ... in_N` (N = the format's channels). The
/// process thread copies every cycle into a ring (``CaptureProcessor``); the queue's own thread
/// (Apple: "one of the audio queue's internal threads") converts the frames into the caller's
/// format, fills the enqueued buffers in order and calls the callback with each full buffer and
/// the timestamp of its first frame. Buffers, callbacks and conversions never touch the process
/// thread.
///
/// The signal path, from the ring to the buffers, is ``RecordingPipeline`` (its own file); this
/// class is the API and state shell around it.
///
/// ### Device model
/// The device is the JACK graph. `currentDevice` names the JACK client whose output ports feed
/// the queue, channel N from that client's Nth output port in the server's (natural) order;
/// `system` (the physical capture ports) by default. Connections are made when the queue
/// starts, all before the first recorded cycle, so every channel starts on the same frame.
///
/// ### Timestamps
/// `mSampleTime` is the JACK frame time (64-bit, the device timeline) of the buffer's first frame,
/// exact; `mHostTime` is that frame's time on JACK's microsecond clock (`jack_get_time`,
/// CLOCK_MONOTONIC) in nanoseconds, interpolated within the cycle from `jack_get_cycle_times`;
/// `mRateScalar` is the cycle's measured duration against its nominal duration. Capture latency
/// is not subtracted: the sample time is when the frame reached our ports;
/// ``captureLatency`` reports the connected source's latency range for callers who want the
/// frame's time at the terminal port.
public final class AudioInputQueue: @unchecked Sendable {
    /// What the queue hands the caller for each filled buffer, on the queue thread.
    public typealias Callback = (_ queue: AudioInputQueue, _ buffer: AudioQueueBufferRef, _ startTime: AudioTimeStamp) -> Void

    /// The recording format, with a sample rate of 0 replaced by the device's: linear PCM, or
    /// AAC-LC (`kAudioFormatMPEG4AAC`) or Apple Lossless, which the queue encodes on its thread.
    public var format: AudioStreamBasicDescription { streamFormat.description }
    /// The format, checked and completed once.
    public let streamFormat: StreamFormat
    /// The linear-PCM layout of the frames the queue produces: the format's own, or for AAC
    /// and ALAC the 32-bit float frames that go into the encoder.
    public var layout: LinearPCMLayout { streamFormat.frameLayout }
    /// The device: a JACK client, or an ``OfflineDriver`` the caller clocks.
    public let driver: any AudioDriver
    /// The device's sample rate when the queue was made, Hz (the pipeline's; a closed driver
    /// reports 0).
    public var deviceSampleRate: Double { Double(pipeline.deviceRate) }
    /// The full names of the queue's channels (JACK: its input ports `<client>:in_N`).
    public let channelNames: [String]
    let processor: CaptureProcessor
    let reader: CaptureReader
    private let callback: Callback
    /// Ring → timeline → resample → processing → encode → buffers.
    private var pipeline: RecordingPipeline!

    private enum RunState { case stopped, running, paused }

    /// State shared by the caller's threads and the queue thread, under `lock` (the pipeline's
    /// state too).
    private let lock = NSLock()
    private var runState = RunState.stopped
    private var buffers = QueueBufferStore()
    private var device = "system"
    private var explicitSources: [String]?
    private var isDisposed = false

    /// Called on the queue thread when the device really starts delivering frames after a start
    /// (`true`, with the first recorded cycle) and when a stop has completed (`false`): the
    /// moments Apple's `kAudioQueueProperty_IsRunning` listeners are told about.
    public var onRunningChange: (@Sendable (Bool) -> Void)? {
        get { lock.withLock { runningHandler } }
        set { lock.withLock { runningHandler = newValue } }
    }
    private var runningHandler: (@Sendable (Bool) -> Void)?

    /// Frames lost because no buffer was enqueued (`kAudioQueueErr_RecordUnderrun`). Any thread.
    public var underrunFrameCount: Int { pipeline.underrunFrames.load(ordering: .relaxed) }
    /// Cycles JACK reported one cycle ahead of their frames and put back where they belong (see
    /// ``RecordingPipeline/drainRing(final:)``): neither a gap nor a repeat. Any thread.
    public var relabelledCycleCount: Int { pipeline.relabelledCycles.load(ordering: .relaxed) }
    /// Gaps in the delivered frame sequence (ring overruns, JACK xruns, underruns): the
    /// timeline's discontinuities. Any thread.
    public var discontinuityCount: Int { pipeline.discontinuities.load(ordering: .relaxed) }
    /// Frames of silence put into the buffers for device frames lost to an xrun or a ring
    /// overrun (a compressed stream, or ``gapPolicy`` `.silence`), so the delivered timeline
    /// stays the device's. Device frames. Any thread.
    public var insertedSilenceFrameCount: Int { pipeline.insertedSilenceFrames.load(ordering: .relaxed) }
    /// Frames of silence put into the buffers, where they belong, for frames an underrun lost
    /// (linear PCM with ``gapPolicy`` `.silence`; those frames are also in
    /// ``underrunFrameCount``). The format's frames. Any thread.
    public var underrunSilenceFrameCount: Int { pipeline.underrunSilenceFrames.load(ordering: .relaxed) }
    /// In the callback: the frames of the buffer being handed over that are silence the queue
    /// put in for lost frames (linear PCM with ``gapPolicy`` `.silence`; when resampling or
    /// through stages, the frames that came out while that silence went in), as ranges of frames
    /// from the buffer's first, in order; empty when none are. Valid only during the callback.
    public var gapSilenceInDeliveredBuffer: [Range<Int>] { lock.withLock { pipeline.deliveredGapSilence } }
    /// Frames of a compressed stream's device timeline that JACK delivered twice (a repeated
    /// cycle frame time around an xrun) and that were therefore not encoded again. Any thread.
    public var repeatedFrameCount: Int { pipeline.repeatedFrames.load(ordering: .relaxed) }
    /// Encoder errors (reported by libavcodec); the frames of a failed call are lost. Any thread.
    public var encoderFailureCount: Int { pipeline.encoderFailures.load(ordering: .relaxed) }

    private var worker: QueueWorker!

    /// Creates a stopped recording queue on `driver`: a JACK driver, or an ``OfflineDriver``
    /// whose ``OfflineDriver/run(frames:input:output:)`` calls deliver the frames (each call
    /// returns once the queue has put them into buffers and called back). The queue owns the
    /// driver from now on and closes it on ``dispose()``, also when this initializer throws.
    public init(format: AudioStreamBasicDescription, driver: any AudioDriver, callback: @escaping Callback) throws(AudioQueueError) {
        let checked: StreamFormat
        var stage: InputPacketStage?
        do throws(AudioQueueError) {
            checked = try inDomain(AudioQueueError.self) { () throws(AudioFileError) in try StreamFormat(format, deviceRate: Double(driver.sampleRate), purpose: .recording) }
            // AAC or ALAC: the queue captures float frames at the format's rate and encodes them.
            if checked.isCompressed {
                stage = try inDomain(AudioQueueError.self) { () throws(AudioConverterError) in try InputPacketStage(format: checked.description, deviceRate: Double(driver.sampleRate)) }
            }
        } catch {
            driver.close()
            throw AudioQueueError(error)
        }
        streamFormat = checked
        let ringFrames = Self.ringFrames(channelCount: checked.channelCount, sampleRate: driver.sampleRate)
        if let problem = RingMemory.problem(mapping: CaptureProcessor.ringBytes(channelCount: checked.channelCount, capacityFrames: ringFrames)) {
            driver.close()
            throw AudioQueueError(AudioQueueError.memoryFullCode, "the capture ring for \(checked.channelCount) channels \(problem): record fewer channels, or raise the address-space limit (ulimit -v)")
        }
        // The ring is made while JACK registers the ports: both take long for wide recordings.
        let ring = BackgroundValue { [channelCount = checked.channelCount, ringFrames] in
            CaptureProcessor.make(channelCount: channelCount, capacityFrames: ringFrames)
        }
        do {
            channelNames = try driver.makeChannels(prefix: "in_", count: checked.channelCount, direction: .input)
        } catch {
            _ = ring.take()
            driver.close()
            throw AudioQueueError(AudioQueueError.invalidDeviceCode, "\(error)")
        }
        self.driver = driver
        self.callback = callback
        (processor, reader) = ring.take()
        // In freewheel a full ring waits for the queue thread instead of dropping cycles: an
        // offline bounce through JACK records every frame, as fast as the disk takes them.
        processor.setWaitsWhenFull(driver.isFreewheeling)
        driver.onFreewheelChange { [processor] freewheeling in processor.setWaitsWhenFull(freewheeling) }
        processor.arm(fromFrame: nil)
        pipeline = RecordingPipeline(format: checked, deviceRate: driver.sampleRate, packetStage: stage, reader: reader, lock: lock,
                                     onFirstCycle: { [unowned self] in reportRunning(true) },
                                     deliver: { [unowned self] buffer, startTime in self.callback(self, buffer, startTime) })
        try QueueDevice.start(processor, on: driver)
        worker = QueueWorker(name: "aqjack.input-queue", wait: { [reader] in reader.waitForCycle(milliseconds: 5) },
                             work: { [unowned self] in pipeline.drainRing() })
        // Offline: each run of the driver returns once its frames are in buffers.
        driver.onRunEnd { [weak self] in self?.performOnQueueThread(wait: true) { $0.pipeline.drainRing() } }
    }

    deinit {
        dispose()
    }

    /// Frames of capture ring: two seconds (the queue thread may stall that long, a slow disk,
    /// without loss), but at most 1 GiB of samples: 2040 channels at 48 kHz take 783 MB, and get
    /// two seconds too (at 96 kHz, 1.37 s). It was at most 256 MiB, and the 0.68 s that gave 2040
    /// channels overran by 384 frames in a 60 s bench recording (one stall of the queue thread).
    static func ringFrames(channelCount: Int, sampleRate: Int) -> Int {
        min(2 * sampleRate, (1 << 30) / (4 * max(channelCount, 1)))
    }

    // MARK: Buffers

    /// Allocates a buffer of `byteCapacity` bytes owned by this queue.
    ///
    /// The corresponding Apple function is `AudioQueueAllocateBuffer`.
    public func allocateBuffer(byteCapacity: Int, packetDescriptionCapacity: Int = 0) throws(AudioQueueError) -> AudioQueueBufferRef {
        lock.lock()
        defer { lock.unlock() }
        // AAC buffers carry one description per packet; room for packets of 16 bytes on average
        // (FFmpeg's packets for silence are about that small) unless the caller asks for more.
        let descriptions = !streamFormat.isCompressed ? packetDescriptionCapacity : max(packetDescriptionCapacity, byteCapacity / 16 + 16)
        return try buffers.allocate(byteCapacity: byteCapacity, packetDescriptionCapacity: descriptions)
    }

    /// Frees a buffer of this queue that is not enqueued.
    ///
    /// The corresponding Apple function is `AudioQueueFreeBuffer`.
    public func freeBuffer(_ buffer: AudioQueueBufferRef) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try buffers.free(buffer, isEnqueued: pipeline.enqueued.contains(buffer))
    }

    /// Adds an empty buffer at the end of the queue, to be filled after those before it.
    ///
    /// The corresponding Apple function is `AudioQueueEnqueueBuffer`.
    public func enqueue(_ buffer: AudioQueueBufferRef) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        guard !isDisposed else { throw AudioQueueError(AudioQueueError.disposalPendingCode, "the queue is disposed") }
        guard buffers.contains(buffer) else {
            throw AudioQueueError(AudioQueueError.invalidBufferCode, "the buffer does not belong to this queue")
        }
        guard !pipeline.enqueued.contains(buffer) else {
            throw AudioQueueError(AudioQueueError.bufferEnqueuedTwiceCode, "the buffer is already enqueued")
        }
        guard Int(buffer.pointee.mAudioDataBytesCapacity) >= maximumOutputPacketSize else {
            throw AudioQueueError(AudioQueueError.parameterCode,
                                  "the buffer holds \(buffer.pointee.mAudioDataBytesCapacity) bytes, less than one packet (\(maximumOutputPacketSize) bytes, kAudioQueueProperty_MaximumOutputPacketSize)")
        }
        buffer.pointee.mAudioDataByteSize = 0
        buffer.pointee.mPacketDescriptionCount = 0
        pipeline.enqueued.append(buffer)
    }

    // MARK: Control

    /// Starts (or resumes) recording: from JACK frame `startFrame` exactly (on the device
    /// timeline; a frame inside a cycle starts mid-cycle), or, without one, from the first cycle
    /// whose graph has the connections it made (the next one, unless late cycles hold back
    /// JACK's graph change), so that every channel starts on the same frame. Connects the
    /// device's ports first.
    ///
    /// The corresponding Apple function is `AudioQueueStart`.
    public func start(atFrame startFrame: UInt64? = nil) throws(AudioQueueError) {
        // A scheduled start replaces a pending one at once, before the connecting (a server
        // round trip a channel): a start() then start(atFrame:) must not record from the first's
        // frame meanwhile (a CI run: the first buffer 9,453 frames early).
        // Compensating latency L, source frame S reaches the queue at device frame S + L.
        let compensation = UInt64(lock.withLock { pipeline.latencyCompensationFrames })
        if let startFrame { processor.arm(fromFrame: startFrame + compensation) }
        let (deviceName, sources) = lock.withLock { (device, explicitSources) }
        let made = try QueueDevice.connect(channelNames, direction: .input, on: driver, deviceName: deviceName, explicit: sources)
        lock.withLock {
            if runState == .stopped { pipeline.firstRecordedFrame = nil }
            pipeline.resumingFromPause = runState == .paused
            runState = .running
        }
        if let startFrame {
            processor.arm(fromFrame: startFrame + compensation)
        } else if let made {
            // From the first cycle whose graph has the last connection made (the process thread
            // checks; usually the next cycle).
            processor.arm(onceInput: made.channel, isConnectedTo: made.peer,
                          noLaterThan: QueueDevice.latestFrameForNewConnections(nextCycleFrame: processor.nextCycleFrameTime, on: driver))
        } else {
            processor.arm(fromFrame: 0)
        }
    }

    /// Stops recording after the cycles already captured: delivers the partly filled buffer (if
    /// it holds frames) through the callback before returning (or, with `immediate` false,
    /// soon after). Buffers still enqueued stay enqueued.
    ///
    /// The corresponding Apple function is `AudioQueueStop`.
    public func stop(immediate: Bool = true) {
        processor.arm(fromFrame: nil)
        lock.withLock { runState = .stopped }
        performOnQueueThread(wait: immediate) { queue in
            queue.waitForInFlightCycle()
            queue.pipeline.drainRing(final: true)
            queue.pipeline.finishResampling()
            queue.pipeline.finishEncoding()
            queue.pipeline.deliverPartialBuffer()
            queue.lock.withLock { queue.pipeline.resetTimeline() }
            queue.reportRunning(false)
        }
    }

    /// Stops capturing but keeps the partly filled buffer; ``start(atFrame:)`` resumes.
    ///
    /// The corresponding Apple function is `AudioQueuePause`.
    public func pause() {
        processor.arm(fromFrame: nil)
        performOnQueueThread(wait: true) { queue in
            queue.waitForInFlightCycle()
            queue.pipeline.drainRing(final: true)
            queue.lock.withLock { queue.runState = .paused }
        }
    }

    /// Delivers the partly filled buffer now, with the frames captured so far.
    ///
    /// The corresponding Apple function is `AudioQueueFlush`.
    public func flush() {
        performOnQueueThread(wait: true) { queue in
            queue.pipeline.drainRing()
            queue.pipeline.finishResampling()
            queue.pipeline.deliverPartialBuffer()
        }
    }

    /// Returns every enqueued buffer through the callback (the partly filled one with its frames,
    /// the others empty) and forgets the position.
    ///
    /// The corresponding Apple function is `AudioQueueReset`.
    public func reset() {
        performOnQueueThread(wait: true) { queue in
            queue.pipeline.drainRing(final: true)
            queue.pipeline.deliverPartialBuffer()
            while let buffer = queue.lock.withLock({ queue.pipeline.enqueued.isEmpty ? nil : queue.pipeline.enqueued.removeFirst() }) {
                buffer.pointee.mAudioDataByteSize = 0
                queue.callback(queue, buffer, AudioTimeStamp())
            }
            queue.lock.withLock { queue.pipeline.resetTimeline() }
        }
    }

    /// Stops, closes the driver (the JACK client) and frees every buffer. No callback runs after this returns.
    ///
    /// The corresponding Apple function is `AudioQueueDispose`.
    public func dispose() {
        let alreadyDisposed = lock.withLock { () -> Bool in
            defer { isDisposed = true }
            return isDisposed
        }
        guard !alreadyDisposed else { return }
        processor.arm(fromFrame: nil)
        worker.stop()
        driver.close()
        lock.withLock {
            pipeline.enqueued.removeAll()
            buffers.releaseAll()
        }
    }

    /// The magic cookie of the recorded stream (`kAudioQueueProperty_MagicCookie`): for AAC the
    /// ES_Descriptor Core Audio uses, the same before and after recording; empty for linear PCM.
    public var magicCookie: [UInt8] { lock.withLock { pipeline.packetStage?.magicCookie ?? [] } }

    /// The largest packet a buffer can receive (`kAudioQueueProperty_MaximumOutputPacketSize`):
    /// one frame for linear PCM; 6144 bits per channel for AAC; the raw frames plus a header for ALAC.
    public var maximumOutputPacketSize: Int { pipeline.maximumPacketSize }

    /// AAC: frames of encoder priming at the start of the stream (FFmpeg's 1024), and, once a
    /// recording has stopped, its padding frames at the end and input frames: what a file's
    /// `kAudioFilePropertyPacketTableInfo` should hold. Nil for linear PCM.
    public var packetTableInfo: (priming: Int, remainder: Int, validFrames: Int64)? {
        lock.withLock { pipeline.packetStage.map { ($0.primingFrames, $0.lastRemainderFrames, $0.lastFrameCount) } }
    }

    /// AAC bit rate (bits/s) and codec quality (Apple's 0 ... 0x7F), applied from the next start.
    public func configureEncoder(bitRate: Int?, quality: Int?) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        guard let packetStage = pipeline.packetStage else {
            throw AudioQueueError(AudioQueueError.invalidPropertyCode, "only a compressed recording queue has an encoder")
        }
        try inDomain(AudioQueueError.self) { () throws(AudioConverterError) in try packetStage.configure(bitRate: bitRate, quality: quality) }
    }

    /// Whether the queue is recording (started and not paused or stopped).
    public var isRunning: Bool { lock.withLock { runState == .running } }

    // MARK: Properties

    /// The JACK client whose output ports feed the queue (`kAudioQueueProperty_CurrentDevice`).
    /// Takes effect at the next start.
    public var currentDevice: String {
        get { lock.withLock { device } }
        set { lock.withLock { device = newValue } }
    }

    /// The full names of the JACK output ports feeding each channel, in channel order, overriding
    /// ``currentDevice`` (`kAudioQueueProperty_ChannelAssignments`); an empty list connects
    /// nothing, leaving the patching to the user. Takes effect at the next start.
    public var channelSources: [String]? {
        get { lock.withLock { explicitSources } }
        set { lock.withLock { explicitSources = newValue } }
    }

    /// The converter used when the format's rate differs from the server's
    /// (`kAudioConverterSampleRateConverterQuality`, mapped onto libsamplerate). Set before
    /// starting; best quality by default.
    public var sampleRateConverterQuality: Resampler.Quality {
        get { lock.withLock { pipeline.converterQuality } }
        set { lock.withLock { pipeline.converterQuality = newValue } }
    }

    /// What a gap in the device's frames becomes: the buffers' timestamps show it (Apple's
    /// behaviour, the default) or silence fills it (``RecordingGapPolicy``). Set while stopped.
    public var gapPolicy: RecordingGapPolicy {
        get { lock.withLock { pipeline.gapPolicy } }
        set { lock.withLock { pipeline.gapPolicy = newValue } }
    }

    /// The library that converts the rate (libsoxr by default, or libsamplerate). Set before
    /// the first frames are converted.
    public var resamplerEngine: Resampler.Engine {
        get { lock.withLock { pipeline.resamplerEngine } }
        set { lock.withLock { pipeline.resamplerEngine = newValue } }
    }

    /// Frames subtracted from every timestamp's sample time and added to a scheduled start
    /// frame, so that frame times say when the audio entered the graph upstream rather than when
    /// it reached the queue: `aqjack record` sets it to its sources' capture latency (a hosted
    /// plugin's look-ahead, 240 frames for swh's limiter), so a recording through the plugin
    /// starts at the source's frame. 0 by default, as Apple's queue stamps frames when they
    /// arrive. Set while stopped.
    public var latencyCompensationFrames: Int {
        get { lock.withLock { pipeline.latencyCompensationFrames } }
        set { lock.withLock { pipeline.latencyCompensationFrames = max(0, newValue) } }
    }

    /// Whether frames are resampled from the server's rate to the format's.
    public var isResampling: Bool { pipeline.isResampling }

    /// Interleaved samples captured and not yet taken by the queue thread, against the ring's
    /// capacity: how close the process thread is to dropping cycles.
    public var ringFill: Double { Double(reader.pendingSampleCount) / Double(reader.sampleCapacity) }

    /// Whether the capture ring is locked in memory (`mlock`): false when the memory-lock limit
    /// (`ulimit -l`) refused it, and then the process thread may wait on a page fault.
    public var isRingLocked: Bool { reader.isMemoryLocked }
    /// Bytes of capture ring.
    public var ringBytes: Int { reader.sampleCapacity * 4 }

    /// Cycles the process thread dropped because the ring was full, in frames.
    public var overrunFrameCount: Int { processor.overrunFrameCount.load(ordering: .relaxed) }
    /// Frames JACK's frame time skipped while recording (``CaptureProcessor/serverSkippedFrameCount``):
    /// the server's, not this queue's. Any thread.
    public var serverSkippedFrameCount: Int { processor.serverSkippedFrameCount.load(ordering: .relaxed) }

    /// JACK's transport as the queue saw it, cycle by cycle: removes and returns the changes
    /// (rolling, stopped, relocated) that took effect before device frame `sampleTime`, oldest
    /// first. The first after a start is the state the recording began in. Every change is on
    /// the timeline of the buffers' `mSampleTime`, and comes before the buffer holding its frame
    /// is delivered: a callback asks with its buffer's end (`mSampleTime` + frames) and learns
    /// which of its frames the transport rolled over. Any thread; typically the callback.
    public func takeTransportChanges(before sampleTime: Double) -> [TransportChange] {
        lock.withLock { pipeline.transportLog.take(before: sampleTime) }
    }

    /// Per-channel level metering of each delivered buffer (`kAudioQueueProperty_EnableLevelMetering`).
    public var isLevelMeteringEnabled: Bool {
        get { lock.withLock { pipeline.meteringEnabled } }
        set { lock.withLock { pipeline.meteringEnabled = newValue } }
    }

    /// RMS average and peak of each channel over the latest delivered buffer, linear 0 ... 1
    /// (`kAudioQueueProperty_CurrentLevelMeter`); zeros while metering is off.
    public var currentLevels: [AudioQueueLevelMeterState] { lock.withLock { pipeline.levels } }

    /// The capture latency range (frames) of the ports feeding the queue, largest over channels.
    public var captureLatency: ClosedRange<Int> {
        let ranges = driver.channelLatencies(direction: .input)
        return (ranges.map(\.lowerBound).max() ?? 0) ... (ranges.map(\.upperBound).max() ?? 0)
    }

    // MARK: Time

    /// The device frame of the first frame recorded since the latest start, once known.
    public var recordingStartFrame: Double? { lock.withLock { pipeline.firstRecordedFrame } }

    // MARK: The queue thread

    /// Runs `work` on the queue thread (inline when already on it), waiting when `wait` is set.
    private func performOnQueueThread(wait: Bool, _ work: @escaping @Sendable (AudioInputQueue) -> Void) {
        worker.perform(wait: wait) { [unowned self] in work(self) }
    }

    /// Waits until a cycle that may have started before the queue was disarmed has finished.
    private func waitForInFlightCycle() {
        guard !driver.isClockedByCaller else { return }
        let frame = processor.nextCycleFrameTime
        let deadline = Date().addingTimeInterval(0.5)
        while processor.nextCycleFrameTime == frame && Date() < deadline && !driver.hasShutDown {
            usleep(500)
        }
    }

    /// Tells the running handler about a change, once per change. Queue thread only.
    private func reportRunning(_ running: Bool) {
        let handler = lock.withLock { () -> (@Sendable (Bool) -> Void)? in
            guard pipeline.deviceIsRunning != running else { return nil }
            pipeline.deviceIsRunning = running
            return runningHandler
        }
        handler?(running)
    }

    // MARK: Processing

    /// Sets the queue's processing stages, applied in order (after resampling, before encoding and buffer filling:
    /// ``QueueProcessingStage``); an empty list removes them. Only while the queue is stopped.
    ///
    /// - Throws: `kAudioQueueErr_InvalidRunState` while it runs or is paused.
    public func setProcessingStages(_ stages: [any QueueProcessingStage]) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        pipeline.processing = try .forQueue(stages, channelCount: pipeline.format.channelCount, queueIsStopped: runState == .stopped)
    }
}
