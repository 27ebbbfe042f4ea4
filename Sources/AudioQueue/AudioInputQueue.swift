import AQCodecs
import AQCore
import AQJack
import CAudioTypes
import Foundation
import Synchronization

/// A recording queue on JACK: the engine behind `AudioQueueNewInput`.
///
/// The queue is a JACK client with input ports `in_1 ... in_N` (N = the format's channels). The
/// process thread copies every cycle into a ring (``CaptureProcessor``); the queue's own thread
/// (Apple: "one of the audio queue's internal threads") converts the frames into the caller's
/// format, fills the enqueued buffers in order and calls the callback with each full buffer and
/// the timestamp of its first frame. Buffers, callbacks and conversions never touch the process
/// thread.
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
    /// AAC-LC (`kAudioFormatMPEG4AAC`), which the queue encodes on its thread.
    public let format: AudioStreamBasicDescription
    /// The linear-PCM layout of the frames the queue produces: the format's own, or for AAC the
    /// 32-bit float frames that go into the encoder.
    public let layout: LinearPCMLayout
    /// The AAC encoder and packet numbering when the format is AAC; nil for linear PCM.
    private let packetStage: InputPacketStage?
    /// Bytes and packets already in `enqueued[0]` (AAC).
    private var filledBytes = 0
    private var filledPackets = 0
    /// Set by a start that resumes a pause: the gap that follows is the pause, not lost audio.
    private var resumingFromPause = false
    /// Frames of silence put into an AAC stream for device frames lost to an xrun or overrun, so
    /// the encoded timeline stays the device's.
    public let insertedSilenceFrameCount = Atomic<Int>(0)
    /// Frames of a compressed stream's device timeline that JACK delivered twice (a repeated
    /// cycle frame time around an xrun) and that were therefore not encoded again. Any thread.
    public let repeatedFrameCount = Atomic<Int>(0)
    /// Whether the format is 32-bit float in this machine's byte order (the ring's own samples).
    private let isNativeFloat32: Bool
    /// The device: a JACK client, or an ``OfflineDriver`` the caller clocks.
    public let driver: any AudioDriver
    /// The full names of the queue's channels (JACK: its input ports `<client>:in_N`).
    public let channelNames: [String]
    let processor: CaptureProcessor
    let reader: CaptureReader
    private let callback: Callback

    private enum RunState { case stopped, running, paused }

    /// State shared by the caller's threads and the queue thread, under `lock`.
    private let lock = NSLock()
    private var runState = RunState.stopped
    private var buffers = QueueBufferStore()
    private var enqueued: [AudioQueueBufferRef] = []
    /// Frames already in `enqueued[0]`, and the timestamp of its first frame.
    private var filledFrames = 0
    private var fillStart = AudioTimeStamp()
    /// The device timeline of the frames delivered so far (device frames), to notice gaps; for
    /// compressed streams also what fills them (up to 10 s) and what a repeat drops.
    private var timeline: TimelineAligner
    private var device = "system"
    private var explicitSources: [String]?
    private var meteringEnabled = false
    private var sums: [Double]
    private var peaks: [Float]
    private var levels: [AudioQueueLevelMeterState]
    private var isDisposed = false
    /// Resampling, when the format's rate differs from the server's: created at the first cycle
    /// with ``sampleRateConverterQuality``.
    private var resampler: Resampler?
    private var converterQuality = Resampler.Quality.best
    /// The device frame (fractional) that output frame 0 since the last discontinuity maps to,
    /// and the output frames produced since then.
    private var resampleAnchor: Double?
    private var resampledFrames = 0
    private var scratch: [Float] = []

    /// Called on the queue thread when the device really starts delivering frames after a start
    /// (`true`, with the first recorded cycle) and when a stop has completed (`false`): the
    /// moments Apple's `kAudioQueueProperty_IsRunning` listeners are told about.
    public var onRunningChange: (@Sendable (Bool) -> Void)? {
        get { lock.withLock { runningHandler } }
        set { lock.withLock { runningHandler = newValue } }
    }
    private var runningHandler: (@Sendable (Bool) -> Void)?
    /// Whether the device has delivered a frame since the latest start (what listeners were told).
    private var deviceIsRunning = false

    /// Frames lost because no buffer was enqueued (`kAudioQueueErr_RecordUnderrun`). Any thread.
    public let underrunFrameCount = Atomic<Int>(0)
    /// Cycles JACK reported one cycle ahead of their frames and put back where they belong (see
    /// `drainRing`): neither a gap nor a repeat. Any thread.
    public let relabelledCycleCount = Atomic<Int>(0)
    /// Gaps in the delivered frame sequence (ring overruns, JACK xruns, underruns): the
    /// timeline's discontinuities. Any thread.
    public let discontinuityCount = Atomic<Int>(0)

    private var worker: QueueWorker!

    /// Creates a stopped recording queue.
    ///
    /// - Parameters:
    ///   - format: interleaved linear PCM or AAC-LC; `mSampleRate` 0 means the server's rate.
    ///   - clientName: the JACK client name (JACK appends `-01` ... when it is taken).
    ///   - server: the JACK server; `nil` means `$JACK_DEFAULT_SERVER`, else `default`.
    ///   - callback: called on the queue thread with each filled buffer.
    /// - Throws: `kAudioFormatUnsupportedDataFormatError` for a format the queue cannot record
    ///   (the message names the field), `kAudioQueueErr_InvalidDevice` when no JACK server runs.
    public convenience init(format: AudioStreamBasicDescription, clientName: String = "aqjack", server: String? = nil,
                            callback: @escaping Callback) throws(AudioQueueError) {
        let driver = try QueueDevice.openDriver(format: format, clientName: clientName, server: server, purpose: "recording")
        try self.init(format: format, driver: driver, callback: callback)
    }

    /// Creates a stopped recording queue on a JACK client the caller opened (to look at the
    /// graph first). The queue owns the client from now on and closes it on ``dispose()``, also
    /// when this initializer throws.
    public convenience init(format: AudioStreamBasicDescription, client: JackClient, callback: @escaping Callback) throws(AudioQueueError) {
        try self.init(format: format, driver: JackDriver(client: client), callback: callback)
    }

    /// Creates a stopped recording queue on `driver`: a JACK driver, or an ``OfflineDriver``
    /// whose ``OfflineDriver/run(frames:input:output:)`` calls deliver the frames (each call
    /// returns once the queue has put them into buffers and called back). The queue owns the
    /// driver from now on and closes it on ``dispose()``, also when this initializer throws.
    public init(format: AudioStreamBasicDescription, driver: any AudioDriver, callback: @escaping Callback) throws(AudioQueueError) {
        var pcmFormat = format
        var stage: InputPacketStage?
        if format.mFormatID == CompressedFormatValues.mpeg4AAC || format.mFormatID == CompressedFormatValues.appleLossless {
            // AAC or ALAC: the queue captures float frames at the format's rate and encodes them.
            var aac: AudioStreamBasicDescription
            do throws(AudioStatusError) {
                aac = try Self.completedCompressedFormat(format, deviceRate: Double(driver.sampleRate))
                stage = try InputPacketStage(format: aac, deviceRate: Double(driver.sampleRate))
            } catch {
                driver.close()
                throw error
            }
            pcmFormat = CompressedFormatValues.floatPCM(sampleRate: aac.mSampleRate, channelCount: Int(aac.mChannelsPerFrame))
        }
        let (resolved, layout, channels) = try QueueDevice.prepare(format: pcmFormat, driver: driver, channelPrefix: "in_", direction: .input)
        channelNames = channels
        if stage != nil {
            self.format = (try? Self.completedCompressedFormat(format, deviceRate: Double(driver.sampleRate))) ?? format
        } else {
            self.format = resolved
        }
        packetStage = stage
        timeline = TimelineAligner(longestFilledGap: 10 * Int64(driver.sampleRate))
        self.layout = layout
        isNativeFloat32 = layout.kind == .float && layout.bitsPerChannel == 32 && layout.isBigEndian == (1.bigEndian == 1)
        self.driver = driver
        self.callback = callback
        // Two seconds of ring: the queue thread may stall that long (a slow disk) without loss.
        (processor, reader) = CaptureProcessor.make(channelCount: layout.channelCount, capacityFrames: 2 * driver.sampleRate)
        processor.arm(fromFrame: nil)
        sums = Array(repeating: 0, count: layout.channelCount)
        peaks = Array(repeating: 0, count: layout.channelCount)
        levels = Array(repeating: AudioQueueLevelMeterState(), count: layout.channelCount)
        try QueueDevice.start(processor, on: driver)
        worker = QueueWorker(name: "aqjack.input-queue", wait: { [reader] in reader.waitForCycle(milliseconds: 5) },
                             work: { [unowned self] in drainRing() })
        // Offline: each run of the driver returns once its frames are in buffers.
        (driver as? OfflineDriver)?.onRunEnd { [weak self] in self?.performOnQueueThread(wait: true) { $0.drainRing() } }
    }

    deinit {
        dispose()
    }

    /// The full description of a compressed recording format, as Apple's queue reports it
    /// (`kAudioQueueProperty_StreamDescription`): AAC-LC as FormatInfo completes it; Apple
    /// Lossless with 4096 frames per packet and 16-bit source data unless the flags say 24.
    static func completedCompressedFormat(_ format: AudioStreamBasicDescription, deviceRate: Double) throws(AudioStatusError) -> AudioStreamBasicDescription {
        try CompressedFormatValues.checkRate(format.mSampleRate)
        var completed = format
        if completed.mSampleRate == 0 { completed.mSampleRate = deviceRate }
        if format.mFormatID == CompressedFormatValues.appleLossless {
            return try CompressedFormatValues.completedALAC(completed, defaultBitDepth: 16, context: "Apple Lossless recording")
        }
        completed = try CompressedFormatValues.completedAAC(completed)
        guard completed.mChannelsPerFrame > 0 else {
            throw AudioStatusError(AudioStatusError.unsupportedDataFormatCode, "mChannelsPerFrame is 0; an AAC recording needs 1 ... 6 or 8 channels")
        }
        return completed
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
        let descriptions = packetStage == nil ? packetDescriptionCapacity : max(packetDescriptionCapacity, byteCapacity / 16 + 16)
        return try buffers.allocate(byteCapacity: byteCapacity, packetDescriptionCapacity: descriptions)
    }

    /// Frees a buffer of this queue that is not enqueued.
    ///
    /// The corresponding Apple function is `AudioQueueFreeBuffer`.
    public func freeBuffer(_ buffer: AudioQueueBufferRef) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try buffers.free(buffer, isEnqueued: enqueued.contains(buffer))
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
        guard !enqueued.contains(buffer) else {
            throw AudioQueueError(AudioQueueError.bufferEnqueuedTwiceCode, "the buffer is already enqueued")
        }
        guard Int(buffer.pointee.mAudioDataBytesCapacity) >= maximumOutputPacketSize else {
            throw AudioQueueError(AudioQueueError.parameterCode,
                                  "the buffer holds \(buffer.pointee.mAudioDataBytesCapacity) bytes, less than one packet (\(maximumOutputPacketSize) bytes, kAudioQueueProperty_MaximumOutputPacketSize)")
        }
        buffer.pointee.mAudioDataByteSize = 0
        buffer.pointee.mPacketDescriptionCount = 0
        enqueued.append(buffer)
    }

    // MARK: Control

    /// Starts (or resumes) recording: from JACK frame `startFrame` exactly (on the device
    /// timeline; a frame inside a cycle starts mid-cycle), or, without one, from the second
    /// cycle after the device's ports are connected, so that every channel starts on the same
    /// frame. Connects the device's ports first.
    ///
    /// The corresponding Apple function is `AudioQueueStart`.
    public func start(atFrame startFrame: UInt64? = nil) throws(AudioQueueError) {
        let (deviceName, sources) = lock.withLock { (device, explicitSources) }
        let made = try QueueDevice.connect(channelNames, direction: .input, on: driver, deviceName: deviceName, explicit: sources)
        lock.withLock {
            if runState == .stopped { firstRecordedFrame = nil }
            resumingFromPause = runState == .paused
            runState = .running
        }
        if let startFrame {
            processor.arm(fromFrame: startFrame)
        } else if made {
            // New connections take effect in the graph within a cycle: start after that.
            processor.arm(fromFrame: processor.nextCycleFrameTime + UInt64(2 * driver.bufferSize))
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
            queue.drainRing(final: true)
            queue.finishResampling()
            queue.finishEncoding()
            queue.deliverPartialBuffer()
            queue.timeline.reset()
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
            queue.drainRing(final: true)
            queue.lock.withLock { queue.runState = .paused }
        }
    }

    /// Delivers the partly filled buffer now, with the frames captured so far.
    ///
    /// The corresponding Apple function is `AudioQueueFlush`.
    public func flush() {
        performOnQueueThread(wait: true) { queue in
            queue.drainRing()
            queue.finishResampling()
            queue.deliverPartialBuffer()
        }
    }

    /// Returns every enqueued buffer through the callback (the partly filled one with its frames,
    /// the others empty) and forgets the position.
    ///
    /// The corresponding Apple function is `AudioQueueReset`.
    public func reset() {
        performOnQueueThread(wait: true) { queue in
            queue.drainRing(final: true)
            queue.deliverPartialBuffer()
            while let buffer = queue.lock.withLock({ queue.enqueued.isEmpty ? nil : queue.enqueued.removeFirst() }) {
                buffer.pointee.mAudioDataByteSize = 0
                queue.callback(queue, buffer, AudioTimeStamp())
            }
            queue.timeline.reset()
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
            enqueued.removeAll()
            buffers.releaseAll()
        }
    }

    /// The magic cookie of the recorded stream (`kAudioQueueProperty_MagicCookie`): for AAC the
    /// ES_Descriptor Core Audio uses, the same before and after recording; empty for linear PCM.
    public var magicCookie: [UInt8] { lock.withLock { packetStage?.magicCookie ?? [] } }

    /// The largest packet a buffer can receive (`kAudioQueueProperty_MaximumOutputPacketSize`):
    /// one frame for linear PCM; 6144 bits per channel for AAC; the raw frames plus a header for ALAC.
    public var maximumOutputPacketSize: Int { packetStage?.maximumPacketSize ?? layout.bytesPerFrame }

    /// AAC: frames of encoder priming at the start of the stream (FFmpeg's 1024), and, once a
    /// recording has stopped, its padding frames at the end and input frames: what a file's
    /// `kAudioFilePropertyPacketTableInfo` should hold. Nil for linear PCM.
    public var packetTableInfo: (priming: Int, remainder: Int, validFrames: Int64)? {
        lock.withLock { packetStage.map { ($0.primingFrames, $0.lastRemainderFrames, $0.lastFrameCount) } }
    }

    /// AAC bit rate (bits/s) and codec quality (Apple's 0 ... 0x7F), applied from the next start.
    public func configureEncoder(bitRate: Int?, quality: Int?) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        guard let packetStage else {
            throw AudioQueueError(AudioQueueError.invalidPropertyCode, "only a compressed recording queue has an encoder")
        }
        try packetStage.configure(bitRate: bitRate, quality: quality)
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
        get { lock.withLock { converterQuality } }
        set { lock.withLock { converterQuality = newValue } }
    }

    /// Whether frames are resampled from the server's rate to the format's.
    public var isResampling: Bool { format.mSampleRate != Double(driver.sampleRate) }

    /// Interleaved samples captured and not yet taken by the queue thread, against the ring's
    /// capacity: how close the process thread is to dropping cycles.
    public var ringFill: Double { Double(reader.pendingSampleCount) / Double(reader.sampleCapacity) }

    /// Cycles the process thread dropped because the ring was full, in frames.
    public var overrunFrameCount: Int { processor.overrunFrameCount.load(ordering: .relaxed) }

    /// Per-channel level metering of each delivered buffer (`kAudioQueueProperty_EnableLevelMetering`).
    public var isLevelMeteringEnabled: Bool {
        get { lock.withLock { meteringEnabled } }
        set { lock.withLock { meteringEnabled = newValue } }
    }

    /// RMS average and peak of each channel over the latest delivered buffer, linear 0 ... 1
    /// (`kAudioQueueProperty_CurrentLevelMeter`); zeros while metering is off.
    public var currentLevels: [AudioQueueLevelMeterState] { lock.withLock { levels } }

    /// The capture latency range (frames) of the ports feeding the queue, largest over channels.
    public var captureLatency: ClosedRange<Int> {
        // Offline: no latency.
        let ranges = (driver as? JackDriver)?.inputPorts.map(\.latency) ?? []
        return (ranges.map(\.lowerBound).max() ?? 0) ... (ranges.map(\.upperBound).max() ?? 0)
    }

    // MARK: Time

    /// The device frame of the first frame recorded since the latest start, once known.
    public var recordingStartFrame: Double? { lock.withLock { firstRecordedFrame } }

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

    /// Moves every captured cycle into buffers. Queue thread only.
    ///
    /// A cycle whose frame time jumps ahead by exactly its own length is held until the next
    /// cycle is seen (waiting at most 50 ms for it): when that one repeats the frame time, JACK
    /// told this client the wrong time for the first (it did in a CI run around an xrun: 4985216
    /// for the cycle of 4985088, then 4985216 again), and the first goes where its frames
    /// belong, so nothing is filled with silence or dropped. Any other jump stays a gap. With
    /// `final` no more cycles will come (stopped, paused): nothing is held.
    private func drainRing(final: Bool = false) {
        while let record = reader.peekCycle() {
            var placed = record
            let (resuming, expected) = lock.withLock { (resumingFromPause, timeline.next) }
            if let expected, !resuming, record.droppedFramesBefore == 0,
               Int64(record.frameTime) == expected + Int64(record.frameCount) {
                var following = reader.peekCycle(at: 1)
                if following == nil && !final && reader.waitForCycle(milliseconds: 50, count: 2) {
                    following = reader.peekCycle(at: 1)
                }
                if let following, following.frameTime == record.frameTime {
                    placed.frameTime = UInt64(expected)
                    if record.cycleStartMicros != 0 && record.nextCycleStartMicros > record.cycleStartMicros {
                        placed.nextCycleStartMicros = record.cycleStartMicros
                        placed.cycleStartMicros = record.cycleStartMicros - (record.nextCycleStartMicros - record.cycleStartMicros)
                    }
                    relabelledCycleCount.add(1, ordering: .relaxed)
                }
            }
            _ = reader.readCycle { _, samples in consume(placed, samples) }
        }
    }

    /// Tells the running handler about a change, once per change. Queue thread only.
    private func reportRunning(_ running: Bool) {
        let handler = lock.withLock { () -> (@Sendable (Bool) -> Void)? in
            guard deviceIsRunning != running else { return nil }
            deviceIsRunning = running
            return runningHandler
        }
        handler?(running)
    }

    private func consume(_ record: CaptureCycle, _ samples: RingRegions<Float>) {
        if !lock.withLock({ deviceIsRunning }) { reportRunning(true) }
        lock.lock()
        defer { lock.unlock() }
        /// Frames at the start of this record already in a compressed stream (JACK repeated a
        /// cycle's frame time around an xrun): dropped, as a PCM file overwrites them in place.
        var alreadyEncoded = 0
        let previousEnd = timeline.next
        let placement = timeline.place(position: Int64(record.frameTime), count: Int64(record.frameCount), rebasing: resumingFromPause)
        if placement != TimelineAligner.Placement() {
            discontinuityCount.add(1, ordering: .relaxed)
            if let packetStage {
                // AAC/ALAC: lost device frames (xrun, overrun, up to 10 s) become silence in the
                // stream, so packet times stay on the device timeline; after a pause the stream
                // simply continues and its timeline moves on by the pause.
                if placement.silence > 0 {
                    insertedSilenceFrameCount.add(Int(placement.silence), ordering: .relaxed)
                    let silence = [Float](repeating: 0, count: Int(placement.silence) * layout.channelCount)
                    silence.withUnsafeBufferPointer { convertLocked($0.baseAddress!, frameCount: Int(placement.silence), record: record) }
                }
                alreadyEncoded = Int(placement.skip)
                repeatedFrameCount.add(alreadyEncoded, ordering: .relaxed)
                if placement.rebase, let previousEnd {
                    packetStage.anchorDeviceFrame = packetStage.anchorDeviceFrame.map { $0 + Double(Int64(record.frameTime) - previousEnd) }
                }
            } else {
                // Linear PCM: a gap (ring overrun, xrun, pause) or a repeat ends the buffer being
                // filled, so that every buffer's frames are contiguous from its timestamp (the
                // caller sees the gap in the timestamps, as on Apple's queue).
                finishResamplingLocked(record)
                deliverPartialBufferLocked()
            }
        }
        resumingFromPause = false
        let channels = layout.channelCount
        let sampleCount = record.frameCount * channels
        if scratch.count < sampleCount { scratch = [Float](repeating: 0, count: sampleCount) }
        scratch.withUnsafeMutableBufferPointer { samples.copy(into: UnsafeMutableBufferPointer(rebasing: $0[0 ..< sampleCount])) }
        let input = scratch
        if alreadyEncoded < record.frameCount {
            input.withUnsafeBufferPointer {
                convertLocked($0.baseAddress! + alreadyEncoded * channels, frameCount: record.frameCount - alreadyEncoded, record: record)
            }
        }
    }

    /// Device-rate frames: resample when needed, then emit. With the lock.
    private func convertLocked(_ frames: UnsafePointer<Float>, frameCount: Int, record: CaptureCycle) {
        let channels = layout.channelCount
        if isResampling {
            if resampler == nil {
                resampler = try? Resampler(channelCount: channels, ratio: format.mSampleRate / Double(driver.sampleRate), quality: converterQuality)
            }
            if resampleAnchor == nil && packetStage == nil {
                resampleAnchor = Double(record.frameTime)
                resampledFrames = 0
            }
            resampler?.process(frames, frameCount: frameCount) { output, count in
                emitLocked(output, frameCount: count, record: record)
            }
        } else {
            emitLocked(frames, frameCount: frameCount, record: record)
        }
        _ = channels
    }

    /// Flushes the resampler's delay line into the buffers and forgets the anchor. With the lock.
    private func finishResamplingLocked(_ record: CaptureCycle?) {
        guard let resampler, resampleAnchor != nil else { return }
        let timing = record ?? lastRecord
        resampler.flush { output, count in
            if let timing { emitLocked(output, frameCount: count, record: timing) }
        }
        resampleAnchor = nil
    }

    /// Called by stop: drains the resampler so the last frames reach the buffers.
    private func finishResampling() {
        lock.lock()
        finishResamplingLocked(nil)
        lock.unlock()
    }

    private var lastRecord: CaptureCycle?
    private var firstRecordedFrame: Double?
    private var isInUnderrun = false

    /// Puts `frameCount` interleaved frames (in the format's rate) into the enqueued buffers,
    /// delivering each buffer as it fills. With the lock held.
    private func emitLocked(_ frames: UnsafePointer<Float>, frameCount: Int, record: CaptureCycle) {
        lastRecord = record
        if let packetStage {
            encodeLocked(frames, frameCount: frameCount, record: record, stage: packetStage)
            return
        }
        let channels = layout.channelCount
        let bytesPerFrame = layout.bytesPerFrame
        var offset = 0
        while offset < frameCount {
            guard let buffer = enqueued.first else {
                // kAudioQueueErr_RecordUnderrun: nowhere to put the data. Lost and counted; the
                // next buffer's timestamp jumps by exactly the loss (the frame count runs on).
                underrunFrameCount.add(frameCount - offset, ordering: .relaxed)
                if !isInUnderrun { discontinuityCount.add(1, ordering: .relaxed) }
                isInUnderrun = true
                if isResampling { resampledFrames += frameCount - offset }
                return
            }
            isInUnderrun = false
            if filledFrames == 0 {
                fillStart = timestamp(ofOutputFrame: offset, record: record)
                if firstRecordedFrame == nil { firstRecordedFrame = fillStart.mSampleTime }
            }
            let capacityFrames = Int(buffer.pointee.mAudioDataBytesCapacity) / bytesPerFrame
            let count = min(capacityFrames - filledFrames, frameCount - offset)
            let destination = buffer.pointee.mAudioData + filledFrames * bytesPerFrame
            let source = frames + offset * channels
            if isNativeFloat32 {
                // The ring's samples are already the format's bytes: one copy.
                destination.copyMemory(from: source, byteCount: count * bytesPerFrame)
            } else {
                layout.encode(source, count: count * channels, to: destination, byteStride: layout.bytesPerSample)
            }
            if meteringEnabled { meterLocked(source, frameCount: count) }
            filledFrames += count
            offset += count
            if isResampling { resampledFrames += count }
            if filledFrames == capacityFrames { deliverPartialBufferLocked() }
        }
    }

    /// Adds frames to the level meters' running sums. With the lock.
    private func meterLocked(_ source: UnsafePointer<Float>, frameCount: Int) {
        let channels = layout.channelCount
        // Through local buffers: every access to a class's array property is an exclusivity
        // check, which per sample cost more than the rest of the path.
        sums.withUnsafeMutableBufferPointer { sums in
            peaks.withUnsafeMutableBufferPointer { peaks in
                for frame in 0 ..< frameCount {
                    for channel in 0 ..< channels {
                        let sample = source[frame * channels + channel]
                        sums[channel] += Double(sample * sample)
                        peaks[channel] = max(peaks[channel], abs(sample))
                    }
                }
            }
        }
    }

    /// Frames counted into the meters since the last delivered buffer (AAC buffers hold packets).
    private var meteredFrames = 0

    /// AAC: encodes frames and places the packets. With the lock.
    private func encodeLocked(_ frames: UnsafePointer<Float>, frameCount: Int, record: CaptureCycle, stage: InputPacketStage) {
        if stage.anchorDeviceFrame == nil {
            let start = timestamp(ofOutputFrame: 0, record: record).mSampleTime
            stage.anchorDeviceFrame = start
            if firstRecordedFrame == nil { firstRecordedFrame = start }
        }
        if meteringEnabled {
            meterLocked(frames, frameCount: frameCount)
            meteredFrames += frameCount
        }
        do {
            try stage.encode(frames, frameCount: frameCount) { packet, index in placePacketLocked(packet, index: index, record: record) }
        } catch {
            encoderFailureCount.add(1, ordering: .relaxed)
        }
    }

    /// Encoder errors (reported by libavcodec); the frames of a failed call are lost. Any thread.
    public let encoderFailureCount = Atomic<Int>(0)

    /// Puts one AAC packet into `enqueued[0]`, delivering buffers that cannot take it. With the lock.
    private func placePacketLocked(_ packet: EncodedPacket, index: Int64, record: CaptureCycle?) {
        let size = packet.bytes.count
        while let buffer = enqueued.first {
            let fits = filledBytes + size <= Int(buffer.pointee.mAudioDataBytesCapacity)
                && filledPackets < Int(buffer.pointee.mPacketDescriptionCapacity)
            if !fits {
                if filledPackets == 0 { break }   // cannot happen: enqueue checks the capacity
                deliverPartialBufferLocked()
                continue
            }
            isInUnderrun = false
            if filledPackets == 0, let stage = packetStage {
                let frame = stage.deviceFrame(ofPacket: index)
                if let timing = record ?? lastRecord {
                    fillStart = timestamp(ofDeviceFrame: frame, in: timing)
                } else {
                    fillStart = AudioTimeStamp()
                    fillStart.mSampleTime = frame
                    fillStart.mFlags = 1
                }
            }
            packet.bytes.withUnsafeBytes { (buffer.pointee.mAudioData + filledBytes).copyMemory(from: $0.baseAddress!, byteCount: size) }
            buffer.pointee.mPacketDescriptions?[filledPackets] = AudioStreamPacketDescription(mStartOffset: Int64(filledBytes),
                                                                                                mVariableFramesInPacket: 0, mDataByteSize: UInt32(size))
            filledPackets += 1
            filledBytes += size
            // Delivered by time as well as by fill, as Apple's queue does: a buffer holding half
            // a second of audio goes to the callback even when small packets (silence, quiet
            // input) leave it mostly empty, so a recording's file is never more than that behind
            // (issue 9, item 2: silent AAC filled a buffer in 10-24 s).
            if filledBytes + maximumOutputPacketSize > Int(buffer.pointee.mAudioDataBytesCapacity)
                || filledPackets == Int(buffer.pointee.mPacketDescriptionCapacity)
                || filledPackets >= packetsPerDelivery {
                deliverPartialBufferLocked()
            }
            return
        }
        // kAudioQueueErr_RecordUnderrun: no buffer for this packet; lost and counted.
        underrunFrameCount.add(packet.frameCount, ordering: .relaxed)
        if !isInUnderrun { discontinuityCount.add(1, ordering: .relaxed) }
        isInUnderrun = true
    }

    /// The most packets a compressed buffer holds before it is delivered: half a second of
    /// audio (AAC 1024 frames per packet: 23 packets at 48 kHz; ALAC 4096: 5), at least one.
    private var packetsPerDelivery: Int {
        guard let packetStage else { return .max }
        return max(1, packetStage.sampleRate / 2 / packetStage.framesPerPacket)
    }

    /// AAC: flushes the encoder at a stop, placing its last packets. Queue thread only.
    private func finishEncoding() {
        lock.lock()
        defer { lock.unlock() }
        guard let packetStage, packetStage.hasStarted else { return }
        do {
            try packetStage.finish { packet, index in placePacketLocked(packet, index: index, record: lastRecord) }
        } catch {
            encoderFailureCount.add(1, ordering: .relaxed)
        }
    }

    /// The timestamp of the `offset`th frame being emitted from `record`: its JACK frame, or
    /// for resampled output the (fractional) device frame it corresponds to.
    private func timestamp(ofOutputFrame offset: Int, record: CaptureCycle) -> AudioTimeStamp {
        if isResampling, let anchor = resampleAnchor {
            // resampledFrames already counts every frame emitted before this one.
            let deviceFrame = anchor + Double(resampledFrames) * Double(driver.sampleRate) / format.mSampleRate
            return timestamp(ofDeviceFrame: deviceFrame, in: record)
        }
        return timestamp(ofDeviceFrame: Double(record.frameTime + UInt64(offset)), in: record)
    }

    /// Delivers `enqueued[0]` if it holds frames. Queue thread only; takes the lock.
    private func deliverPartialBuffer() {
        lock.lock()
        deliverPartialBufferLocked()
        lock.unlock()
    }

    /// Called with the lock held; releases it around the callback.
    private func deliverPartialBufferLocked() {
        let compressed = packetStage != nil
        guard compressed ? filledPackets > 0 : filledFrames > 0, let buffer = enqueued.first else { return }
        enqueued.removeFirst()
        let meterFrames: Int
        if compressed {
            buffer.pointee.mAudioDataByteSize = UInt32(filledBytes)
            buffer.pointee.mPacketDescriptionCount = UInt32(filledPackets)
            meterFrames = meteredFrames
            meteredFrames = 0
            filledBytes = 0
            filledPackets = 0
        } else {
            buffer.pointee.mAudioDataByteSize = UInt32(filledFrames * layout.bytesPerFrame)
            meterFrames = filledFrames
        }
        if meteringEnabled && meterFrames > 0 {
            for channel in 0 ..< layout.channelCount {
                levels[channel] = AudioQueueLevelMeterState(mAveragePower: Float((sums[channel] / Double(meterFrames)).squareRoot()),
                                                            mPeakPower: peaks[channel])
                sums[channel] = 0
                peaks[channel] = 0
            }
        }
        filledFrames = 0
        let startTime = fillStart
        lock.unlock()
        callback(self, buffer, startTime)
        lock.lock()
    }

    /// The timestamp of device frame `frame` (JACK frame time; fractional when resampling),
    /// host time interpolated from the cycle's times.
    private func timestamp(ofDeviceFrame frame: Double, in record: CaptureCycle) -> AudioTimeStamp {
        var stamp = AudioTimeStamp()
        stamp.mSampleTime = frame
        stamp.mFlags = 1   // kAudioTimeStampSampleTimeValid
        if record.cycleStartMicros != 0 && record.nextCycleStartMicros > record.cycleStartMicros {
            let cycleMicros = Double(record.nextCycleStartMicros - record.cycleStartMicros)
            let framesIntoRecord = frame - Double(record.frameTime)
            let nanoseconds = Double(record.cycleStartMicros) * 1000 + framesIntoRecord * cycleMicros * 1000 / Double(record.frameCount)
            stamp.mHostTime = UInt64(nanoseconds)
            let nominalMicros = Double(record.frameCount) * 1_000_000 / Double(driver.sampleRate)
            stamp.mRateScalar = nominalMicros / cycleMicros
            stamp.mFlags |= 2 | 4   // kAudioTimeStampHostTimeValid | kAudioTimeStampRateScalarValid
        }
        return stamp
    }
}
