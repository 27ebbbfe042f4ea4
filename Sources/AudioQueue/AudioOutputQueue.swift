import AQCodecs
import AQCore
import AQMedia
import CAudioTypes
import Foundation
import Synchronization

/// A playback queue on an ``AudioDriver`` (a JACK client, or an offline driver the caller clocks):
/// the engine behind `AudioQueueNewOutput`. It uses the driver's contract only.
///
/// The queue's driver has output channels `out_1 ... out_N`. Its own thread takes the
/// buffers the caller enqueued in order, converts them to Float (and to the server's rate),
/// writes them into a ring and hands each buffer back through the callback once its last frame
/// has been played (as Apple's queue does), so the caller can refill it. The process thread plays the ring from the start frame
/// on with volume and pan (``PlaybackProcessor``); when the ring runs dry it plays silence and
/// counts it.
///
/// The signal path, from the buffers to the ring, is ``PlaybackPipeline`` (its own file); this
/// class is the API and state shell around it.
///
/// ### Device model
/// `currentDevice` names the JACK client whose input ports the queue feeds, channel N to its
/// Nth audio input port (`system`, the physical playback ports, by default);
/// ``channelDestinations`` picks a port per channel. Connections are made by ``start(atFrame:)``.
public final class AudioOutputQueue: @unchecked Sendable {
    /// What the queue hands back for each used-up buffer, on the queue thread.
    public typealias Callback = (_ queue: AudioOutputQueue, _ buffer: AudioQueueBufferRef) -> Void

    /// The buffers' format, with a sample rate of 0 replaced by the device's: linear PCM, or
    /// AAC-LC or Apple Lossless packets (with descriptions), which the queue decodes on its thread.
    public var format: AudioStreamBasicDescription { streamFormat.description }
    /// The format, checked and completed once.
    public let streamFormat: StreamFormat
    /// The linear-PCM layout the queue plays: the format's, or for AAC and ALAC 32-bit float frames.
    public var layout: LinearPCMLayout { streamFormat.frameLayout }
    private var isCompressed: Bool { streamFormat.isCompressed }
    /// Buffers → decode → processing → resample → ring → buffers back.
    var pipeline: PlaybackPipeline!
    /// The device: a JACK client, or an ``OfflineDriver`` the caller clocks.
    public let driver: any AudioDriver
    /// The full names of the queue's channels (JACK: its output ports `<client>:out_N`).
    public let channelNames: [String]
    /// Why the queue has no device to play on (it was made with no JACK server running): only
    /// offline rendering works then, and a start in device mode answers this.
    public let unavailableDeviceReason: String?
    /// The rate frames are played at: the device's, or the offline render format's (under `lock`).
    var deviceRate: Int { pipeline.deviceRate }
    /// Offline rendering (`AudioQueueSetOfflineRenderFormat`): the format rendered into and the
    /// driver that runs the processor meanwhile, clocked by ``renderOffline(frameCount:into:)``.
    var offlineFormat: (format: AudioStreamBasicDescription, layout: LinearPCMLayout, driver: OfflineDriver)? {
        didSet { isRenderingOffline.store(offlineFormat != nil, ordering: .relaxed) }
    }
    /// Whether ``offlineFormat`` is set, for the queue thread's wait (no lock).
    private let isRenderingOffline = Atomic<Bool>(false)
    let processor: PlaybackProcessor
    let feeder: PlaybackFeeder
    private let callback: Callback

    enum RunState { case stopped, running, paused, draining }

    let lock = NSLock()
    var runState = RunState.stopped
    private var buffers = QueueBufferStore()
    var device = "system"
    var explicitDestinations: [String]?
    /// The device and destinations ``connectDevice()`` connected, for the next start to skip, and
    /// the last connection it made.
    private var preconnected: (device: String, destinations: [String]?, made: QueueDevice.MadeConnection?)?
    var volume: Float = 1
    var volumeRampSeconds: Double = 0
    var pan: Float = 0
    var runningHandler: (@Sendable (Bool) -> Void)?
    private var deviceIsRunning = false
    private var isDisposed = false
    private var isResetting = false
    private var drainAfterStart = false
    var worker: QueueWorker!
    /// The cycle-end frame when the drain target was reached (queue thread only).
    private var drainedCycleEnd: UInt64?

    /// Creates a stopped playback queue on `driver`: a JACK driver, or an ``OfflineDriver``
    /// whose ``OfflineDriver/run(frames:input:output:)`` calls play the frames (each call returns
    /// once the buffers it used up have been handed back). The queue owns the driver from now on
    /// (also when this throws). `unavailableDeviceReason`, for a driver nobody clocks (made when
    /// no server runs, for offline rendering only), is what a device start answers.
    public init(format: AudioStreamBasicDescription, driver: any AudioDriver, unavailableDeviceReason: String? = nil,
                callback: @escaping Callback) throws(AudioQueueError) {
        do throws(AudioFileError) {
            streamFormat = try StreamFormat(format, deviceRate: Double(driver.sampleRate), purpose: .playback)
        } catch {
            driver.close()
            throw AudioQueueError(error)
        }
        // A quarter second of ring, at least 8 periods: the latency between enqueue and sound.
        // Made while JACK registers the ports.
        let ringFrames = max(8 * driver.bufferSize, driver.sampleRate / 4)
        if let problem = RingMemory.problem(mapping: PlaybackProcessor.ringBytes(channelCount: streamFormat.channelCount, capacityFrames: ringFrames)) {
            driver.close()
            throw AudioQueueError(AudioQueueError.memoryFullCode, "the playback ring for \(streamFormat.channelCount) channels \(problem): play fewer channels, or raise the address-space limit (ulimit -v)")
        }
        let ring = BackgroundValue { [channelCount = streamFormat.channelCount, frames = ringFrames] in
            PlaybackProcessor.make(channelCount: channelCount, capacityFrames: frames)
        }
        do {
            channelNames = try driver.makeChannels(prefix: "out_", count: streamFormat.channelCount, direction: .output)
        } catch {
            _ = ring.take()
            driver.close()
            throw AudioQueueError(AudioQueueError.invalidDeviceCode, "\(error)")
        }
        self.unavailableDeviceReason = unavailableDeviceReason
        self.driver = driver
        self.callback = callback
        (processor, feeder) = ring.take()
        pipeline = PlaybackPipeline(format: streamFormat, deviceRate: driver.sampleRate, feeder: feeder, processor: processor, lock: lock,
                                    bufferVolume: { [unowned self] gain in
                                        // A buffer enqueued with a volume starts: the lock is held.
                                        volume = gain
                                        processor.setGain(gain, rampFrames: Int(volumeRampSeconds * Double(pipeline.deviceRate)))
                                    },
                                    deliver: { [unowned self] buffer in self.callback(self, buffer) })
        try QueueDevice.start(processor, on: driver)
        worker = QueueWorker(name: "aqjack.output-queue", wait: { [unowned self] in
            // Offline, the renders do the work on the caller's thread: waking for each of their
            // cycles would only contend for the turn.
            if self.isRenderingOffline.load(ordering: .relaxed) { usleep(5000) } else { self.feeder.waitForCycle(milliseconds: 5) }
        }, work: { [unowned self] in catchUp() })
        // Offline: each run of the driver returns once the buffers it used up are handed back.
        driver.onRunEnd { [weak self] in
            guard let self else { return }
            worker.perform(wait: true) { [unowned self] in catchUp() }
        }
    }

    deinit { dispose() }

    // MARK: Buffers

    /// The corresponding Apple function is `AudioQueueAllocateBuffer`.
    public func allocateBuffer(byteCapacity: Int, packetDescriptionCapacity: Int = 0) throws(AudioQueueError) -> AudioQueueBufferRef {
        lock.lock()
        defer { lock.unlock() }
        return try buffers.allocate(byteCapacity: byteCapacity, packetDescriptionCapacity: packetDescriptionCapacity)
    }

    /// The corresponding Apple function is `AudioQueueFreeBuffer`.
    public func freeBuffer(_ buffer: AudioQueueBufferRef) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        try buffers.free(buffer, isEnqueued: pipeline.holds(buffer))
    }

    /// Adds a filled buffer (`mAudioDataByteSize` bytes of frames) at the end of the queue,
    /// optionally skipping frames at its start and end (Apple: trim frames, e.g. encoder priming)
    /// and changing the volume when it starts.
    ///
    /// The corresponding Apple functions are `AudioQueueEnqueueBuffer` and
    /// `AudioQueueEnqueueBufferWithParameters`.
    public func enqueue(_ buffer: AudioQueueBufferRef, trimStartFrames: Int = 0, trimEndFrames: Int = 0,
                        volume: Float? = nil, packetDescriptions: [AudioStreamPacketDescription] = []) throws(AudioQueueError) {
        _ = try enqueue(buffer, trimStartFrames: trimStartFrames, trimEndFrames: trimEndFrames, volume: volume,
                        packetDescriptions: packetDescriptions, startingAt: nil)
    }

    /// ``enqueue(_:trimStartFrames:trimEndFrames:volume:packetDescriptions:)`` with a scheduled
    /// start: the buffer's first frame plays at frame `startFrame` of the queue's timeline
    /// (device frames since the queue was made: ``playedFrameCount``'s count), silence filling
    /// the gap (nil: right after the buffers before it). Returns the frame it will start at:
    /// `startFrame`, or later when what is already enqueued runs past it.
    public func enqueue(_ buffer: AudioQueueBufferRef, trimStartFrames: Int = 0, trimEndFrames: Int = 0,
                        volume: Float? = nil, packetDescriptions: [AudioStreamPacketDescription] = [],
                        startingAt startFrame: Int?) throws(AudioQueueError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard !isDisposed else { throw AudioQueueError(AudioQueueError.disposalPendingCode, "the queue is disposed") }
        guard !isResetting else {
            throw AudioQueueError(AudioQueueError.enqueueDuringResetCode, "the queue is stopping or resetting; enqueue after it has")
        }
        guard buffers.contains(buffer) else {
            throw AudioQueueError(AudioQueueError.invalidBufferCode, "the buffer does not belong to this queue")
        }
        guard !pipeline.holds(buffer) else {
            throw AudioQueueError(AudioQueueError.bufferEnqueuedTwiceCode, "the buffer is already enqueued")
        }
        guard buffer.pointee.mAudioDataByteSize > 0 else {
            throw AudioQueueError(AudioQueueError.bufferEmptyCode, "the buffer holds no data (mAudioDataByteSize is 0)")
        }
        // More bytes than the buffer has would be read past its end on the queue thread.
        guard buffer.pointee.mAudioDataByteSize <= buffer.pointee.mAudioDataBytesCapacity else {
            throw AudioQueueError(AudioQueueError.parameterCode,
                                  "mAudioDataByteSize \(buffer.pointee.mAudioDataByteSize) exceeds the buffer's capacity (mAudioDataBytesCapacity \(buffer.pointee.mAudioDataBytesCapacity))")
        }
        if isCompressed {
            // Apple: VBR buffers need their packet descriptions.
            guard !packetDescriptions.isEmpty else {
                throw AudioQueueError(AudioQueueError.parameterCode, "compressed buffers (AAC, Apple Lossless, MPEG audio) need packet descriptions (inNumPacketDescs and inPacketDescs)")
            }
            for (index, description) in packetDescriptions.enumerated() {
                guard description.mStartOffset >= 0, description.mStartOffset + Int64(description.mDataByteSize) <= Int64(buffer.pointee.mAudioDataByteSize) else {
                    throw AudioQueueError(AudioQueueError.parameterCode,
                                          "packet description \(index) (offset \(description.mStartOffset), \(description.mDataByteSize) bytes) lies outside the buffer's \(buffer.pointee.mAudioDataByteSize) bytes")
                }
            }
        } else {
            guard Int(buffer.pointee.mAudioDataByteSize) % layout.bytesPerFrame == 0 else {
                throw AudioQueueError(AudioQueueError.parameterCode, "mAudioDataByteSize \(buffer.pointee.mAudioDataByteSize) is not a whole number of \(layout.bytesPerFrame)-byte frames")
            }
        }
        let start = pipeline.projectedStart(for: startFrame)
        pipeline.enqueued.append(PlaybackPipeline.Entry(buffer: buffer, trimStartFrames: max(0, trimStartFrames), trimEndFrames: max(0, trimEndFrames), gain: volume,
                              packetDescriptions: packetDescriptions, startFrame: startFrame.map { _ in start }))
        return start
    }

    /// The magic cookie of the stream to play (`kAudioQueueProperty_MagicCookie`; seed 001
    /// copies the file's before enqueuing): AAC's ES_Descriptor, `esds` payload or bare
    /// AudioSpecificConfig, ALAC's ALACSpecificConfig, FLAC's STREAMINFO, Opus's OpusHead
    /// (``PacketDecoders``). Linear PCM, MPEG audio and AC-3 ignore it.
    public var magicCookie: [UInt8] { lock.withLock { pipeline.cookie } }

    public func setMagicCookie(_ bytes: [UInt8]) throws(AudioQueueError) {
        guard isCompressed, !PacketDecoders.ignoresCookie(format.mFormatID) else { return }
        do throws(AudioConverterError) {
            try PacketDecoders.checkCookie(bytes, for: format)
        } catch {
            throw AudioQueueError(AudioQueueError.invalidPropertyValueCode, "the magic cookie does not fit the queue's format: \(error.message)")
        }
        lock.withLock { pipeline.cookie = bytes }
    }

    /// Compressed packets that did not decode (their frames are skipped). Any thread.
    public var decodeFailureCount: Int { pipeline.decodeFailures.load(ordering: .relaxed) }

    // MARK: Control

    /// Converts enqueued buffers into the ring until `frames` frames (0: everything enqueued, as
    /// far as the ring holds) are ready to play, so that the start is glitch-free. Like
    /// `AudioQueuePrime`, which decodes the enqueued buffers and returns once they are ready, it
    /// converts them itself, on the calling thread holding the queue thread's turn (as offline
    /// rendering does), rather than waiting for the queue thread, whose next wake-up before a
    /// start is up to 5 ms away (docs/MEASUREMENTS.md, "Starts").
    /// Not real-time safe.
    ///
    /// - Returns: the frames ready.
    /// The corresponding Apple function is `AudioQueuePrime`.
    @discardableResult
    public func prime(frames: Int = 0) -> Int {
        let target = frames > 0 ? min(frames, feeder.capacityFrames) : feeder.capacityFrames
        let deadline = Date().addingTimeInterval(2)
        while true {
            worker.exclusively { pipeline.fill() }
            let (ready, more) = lock.withLock { (feeder.queuedFrameCount, !pipeline.enqueued.isEmpty || pipeline.hasPendingFrames) }
            // Buffers come back only as they are played: until the start, the ring is what primes.
            // While playing, the process thread makes room as it goes.
            if ready >= target || !more || Date() >= deadline { return ready }
            usleep(1000)
        }
    }

    /// Connects the device's ports now, as ``start(atFrame:)`` would, so that the start right
    /// after connects nothing itself: a player connects (a server round trip a port, 0.1-0.2 s
    /// at 256 channels here) while another thread fills and enqueues its first buffers. Only
    /// that next start skips connecting; a later one connects afresh. Offline: nothing.
    public func connectDevice() throws(AudioQueueError) {
        let (deviceName, destinations, renderer) = lock.withLock { (device, explicitDestinations, offlineFormat?.driver) }
        guard renderer == nil, unavailableDeviceReason == nil else { return }
        let made = try QueueDevice.connect(channelNames, direction: .output, on: driver, deviceName: deviceName, explicit: destinations)
        lock.withLock { preconnected = (deviceName, destinations, made) }
    }

    /// Starts (or resumes) playing: at JACK frame `startFrame` exactly, or at the first cycle
    /// that carries the device's connections (the next one or the one after, unless late cycles
    /// hold back JACK's graph change). Connects the device's ports first.
    ///
    /// The corresponding Apple function is `AudioQueueStart`.
    public func start(atFrame startFrame: UInt64? = nil) throws(AudioQueueError) {
        let (wasPaused, deviceName, destinations, renderer, preconnection) = lock.withLock {
            defer { preconnected = nil }
            return (runState == .paused, device, explicitDestinations, offlineFormat?.driver,
                    preconnected.flatMap { $0.device == device && $0.destinations == explicitDestinations ? $0 : nil })
        }
        var made = preconnection?.made
        if renderer == nil {
            if let unavailableDeviceReason {
                throw AudioQueueError(AudioQueueError.invalidDeviceCode,
                                      "\(unavailableDeviceReason); this queue was made without a server, so it can only render offline (AudioQueueSetOfflineRenderFormat)")
            }
            if preconnection == nil {
                made = try QueueDevice.connect(channelNames, direction: .output, on: driver, deviceName: deviceName, explicit: destinations)
            }
        }
        if wasPaused {
            processor.setPaused(false)
        } else {
            processor.cancelDrain()
            applyVolume(rampFrames: 0)
            // Offline rendering starts with the first frame rendered. On a device, a start that
            // made connections starts at the first cycle whose graph has the last of them (the
            // process thread checks; usually the next cycle), else at the first cycle sure to
            // carry connections made just before (the next but one).
            if let frame = startFrame ?? renderer.map(\.currentFrame) {
                processor.play(fromFrame: frame)
            } else {
                let next = processor.nextCycleFrame.load(ordering: .relaxed)
                if let made {
                    processor.play(onceOutput: made.channel, isConnectedTo: made.peer,
                                   noLaterThan: QueueDevice.latestFrameForNewConnections(nextCycleFrame: next, on: driver))
                } else {
                    processor.play(fromFrame: QueueDevice.firstFrameWithNewConnections(nextCycleFrame: next, on: driver))
                }
            }
        }
        lock.withLock {
            runState = drainAfterStart ? .draining : .running
            drainAfterStart = false
        }
    }

    /// Stops playing. With `immediate`, now: what the ring holds is dropped and the enqueued
    /// buffers come back through the callback. Without, after everything enqueued has played;
    /// `onRunningChange(false)` tells when the last frame has left.
    ///
    /// The corresponding Apple function is `AudioQueueStop`.
    public func stop(immediate: Bool = true) {
        if immediate {
            worker.perform(wait: true) { [unowned self] in
                stopNow()
                returnAllBuffers()
            }
        } else {
            // Before a start (a priming callback that reached the end of its file): play what is
            // enqueued once started, then stop.
            lock.withLock {
                if runState == .running || runState == .paused { runState = .draining } else { drainAfterStart = true }
            }
            processor.setPaused(false)
        }
    }

    /// Stops output but keeps the ring and the buffers; ``start(atFrame:)`` resumes.
    ///
    /// The corresponding Apple function is `AudioQueuePause`.
    public func pause() {
        processor.setPaused(true)
        lock.withLock { if runState == .running { runState = .paused } }
    }

    /// Makes sure everything enqueued so far (and the resampler's tail) has reached the ring.
    ///
    /// The corresponding Apple function is `AudioQueueFlush`.
    public func flush() {
        worker.perform(wait: true) { [unowned self] in
            while lock.withLock({ !pipeline.enqueued.isEmpty }) && feeder.writableFrameCount > 0 { pipeline.fill() }
            pipeline.flushResampler()
        }
    }

    /// Stops now, drops what the ring holds and returns every enqueued buffer through the callback.
    ///
    /// The corresponding Apple function is `AudioQueueReset`.
    public func reset() {
        worker.perform(wait: true) { [unowned self] in
            stopNow()
            returnAllBuffers()
        }
    }

    /// Stops, closes the driver (the JACK client) and frees the buffers; no callback runs after this returns.
    ///
    /// The corresponding Apple function is `AudioQueueDispose`.
    public func dispose() {
        let already = lock.withLock { () -> Bool in
            defer { isDisposed = true }
            return isDisposed
        }
        guard !already else { return }
        processor.play(fromFrame: nil)
        worker.stop()
        driver.close()
        lock.withLock { offlineFormat?.driver.close() }
        lock.withLock {
            pipeline.removeAll()
            buffers.releaseAll()
        }
    }

    /// Whether the queue is playing (started, not paused, not stopped; draining counts).
    public var isRunning: Bool { lock.withLock { runState == .running || runState == .draining } }

    // MARK: The queue thread

    /// Hands back played buffers, refills the ring, finishes a drain and reports state changes.
    /// Queue thread only.
    private func catchUp() {
        pipeline.returnPlayedBuffers()
        pipeline.fill()
        let (state, queueEmpty, nothingPending) = lock.withLock { (runState, pipeline.enqueued.isEmpty, !pipeline.hasPendingFrames) }
        if state == .draining && queueEmpty && nothingPending {
            pipeline.flushResampler()
            if lock.withLock({ !pipeline.hasPendingFrames }) {
                processor.drain(afterTotalFrames: lock.withLock { pipeline.writtenFrames })
                // The cycle that wrote the last frame has run; its frames leave the graph while the
                // next cycle runs. Stopped (and IsRunning false) once that next cycle has started.
                if processor.isDrained.load(ordering: .acquiring) && drainedCycleEnd == nil {
                    drainedCycleEnd = processor.nextCycleFrame.load(ordering: .acquiring)
                }
                if let end = drainedCycleEnd, processor.nextCycleFrame.load(ordering: .acquiring) > end {
                    finishDrain()
                    return
                }
            }
        }
        if (state == .running || state == .draining) && playbackStartFrame != nil { reportRunning(true) }
    }

    /// Offline: a queue stopped with `immediate: false` whose last frame has been rendered
    /// stops now (nothing is left to leave a device). Queue thread only.
    func finishOfflineDrain() {
        let finished = lock.withLock {
            runState == .draining && pipeline.enqueued.isEmpty && !pipeline.hasPendingFrames && feeder.queuedFrameCount == 0
        }
        if finished { finishDrain() }
    }

    /// Ends a drain: stopped, the last buffers back, `onRunningChange(false)`. Queue thread only.
    private func finishDrain() {
        drainedCycleEnd = nil
        processor.play(fromFrame: nil)
        processor.cancelDrain()
        lock.withLock { runState = .stopped }
        pipeline.returnPlayedBuffers()
        // A queue that played no frame (every packet failed to decode, or every buffer was
        // empty) still started and stopped: listeners waiting for IsRunning to drop hear both.
        if !lock.withLock({ deviceIsRunning }) { reportRunning(true) }
        reportRunning(false)
    }

    /// Stops output at the next cycle and drops the ring's frames and the pending ones.
    private func stopNow() {
        processor.play(fromFrame: nil)
        processor.setPaused(false)
        processor.cancelDrain()
        processor.discardQueuedFrames()
        let clocked: (any AudioDriver)? = lock.withLock({ offlineFormat?.driver }) ?? (driver.isClockedByCaller ? driver : nil)
        if let clocked {
            // Cycles run only when the caller asks: take the discard now.
            clocked.settle()
        } else {
            let deadline = Date().addingTimeInterval(0.5)
            while processor.isDiscardPending && Date() < deadline && !driver.hasShutDown { usleep(500) }
        }
        lock.withLock {
            pipeline.dropConvertedFrames(playedFrames: processor.playedFrameCount.load(ordering: .relaxed))
            runState = .stopped
        }
        reportRunning(false)
    }

    /// Hands every buffer back through the callback: those on their way out, then the
    /// enqueued ones. Enqueuing from the callback meanwhile answers
    /// `kAudioQueueErr_EnqueueDuringReset`, as on Apple's platforms. Queue thread only.
    private func returnAllBuffers() {
        lock.withLock { isResetting = true }
        defer { lock.withLock { isResetting = false } }
        pipeline.returnAllBuffers()
    }

    func reportRunning(_ running: Bool) {
        let handler = lock.withLock { () -> (@Sendable (Bool) -> Void)? in
            guard deviceIsRunning != running else { return nil }
            deviceIsRunning = running
            return runningHandler
        }
        handler?(running)
    }
}

extension AudioOutputQueue {
    // MARK: Processing

    /// Sets the queue's processing stages, applied in order (after decoding, before resampling to the device:
    /// ``QueueProcessingStage``); an empty list removes them. Only while the queue is stopped.
    ///
    /// - Throws: `kAudioQueueErr_InvalidRunState` while it runs or is paused.
    public func setProcessingStages(_ stages: [any QueueProcessingStage]) throws(AudioQueueError) {
        lock.lock()
        defer { lock.unlock() }
        pipeline.processing = try .forQueue(stages, channelCount: pipeline.format.channelCount, queueIsStopped: runState == .stopped)
    }
}

extension Comparable {
    /// `self` moved into `range`.
    func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
