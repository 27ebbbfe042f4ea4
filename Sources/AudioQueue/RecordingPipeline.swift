import AQCodecs
import AQCore
import AQMedia
import CAudioTypes
import Foundation
import Synchronization

/// The signal path of a recording queue, in the order frames take it, on the queue thread:
///
/// 1. **drain the ring in place** (``drainRing(final:)``): each captured cycle is read where the
///    process thread wrote it (``RingRegions``; only a frame split by the ring's wrap is copied),
///    a cycle JACK labelled one cycle ahead is put back where its frames belong;
/// 2. **align to the device timeline** (``TimelineAligner``), the one place a gap is decided,
///    by the queue's ``RecordingGapPolicy``: lost device frames become silence (a compressed
///    stream always; PCM with `.silence`), or end the PCM buffer being filled (`.timestamps`:
///    its successor's timestamp shows the gap); a repeated cycle's frames already delivered are
///    dropped;
/// 3. **resample** from the device's rate to the format's (``Resampler``), keeping each
///    output frame's device-time anchor;
/// 4. **processing stages** (``QueueProcessingStage``: the insertion point for taps and plugins);
/// 5. **convert or encode**: PCM frames encoded to the format's samples, or AAC/ALAC packets
///    (``InputPacketStage``);
/// 6. **fill buffers** in enqueue order, meter them, stamp each with its first frame's device
///    time, and hand each full one to the callback.
///
/// ``AudioInputQueue`` is the API and state shell around it. Every method runs on the queue
/// thread with the queue's `lock` held (the callback runs with it released), except those that
/// take the lock themselves (`drainRing`, `finish...`).
final class RecordingPipeline {
    /// Delivered buffers go here (the queue's callback), with the lock released.
    typealias Delivery = (_ buffer: AudioQueueBufferRef, _ startTime: AudioTimeStamp) -> Void

    let format: StreamFormat
    let deviceRate: Int
    private let reader: CaptureReader
    let lock: NSLock
    private let deliver: Delivery
    /// Called (without the lock) when the first cycle after a start arrives.
    private let onFirstCycle: () -> Void
    /// The encoder and packet numbering when the format is compressed.
    let packetStage: InputPacketStage?

    // MARK: Shared with the shell, under the lock

    /// Buffers waiting to be filled, in order.
    var enqueued: [AudioQueueBufferRef] = []
    /// Set by a start that resumes a pause: the gap that follows is the pause, not lost audio.
    var resumingFromPause = false
    var meteringEnabled = false
    /// RMS and peak of each channel over the latest delivered buffer.
    private(set) var levels: [AudioQueueLevelMeterState]
    var converterQuality = Resampler.Quality.best
    var resamplerEngine = Resampler.Engine.soxr
    /// Whether the device has delivered a cycle since the latest start.
    var deviceIsRunning = false
    /// The device frame of the first frame recorded since the latest start, once known.
    var firstRecordedFrame: Double?
    /// Subtracted from every timestamp's device frame (``AudioInputQueue/latencyCompensationFrames``).
    var latencyCompensationFrames = 0
    /// What a gap in the device's frames becomes (2.), set while the queue is stopped.
    var gapPolicy = RecordingGapPolicy.timestamps {
        didSet { timeline = Self.timeline(policy: gapPolicy, deviceRate: deviceRate) }
    }
    /// Processing stages (4.), set while the queue is stopped.
    var processing = CompensatedStages()
    /// JACK's transport, cycle by cycle (``AudioInputQueue/takeTransportChanges(before:)``).
    var transportLog = TransportTracker()

    // MARK: Counters (any thread)

    let underrunFrames = Atomic<Int>(0)
    let relabelledCycles = Atomic<Int>(0)
    let discontinuities = Atomic<Int>(0)
    let insertedSilenceFrames = Atomic<Int>(0)
    let underrunSilenceFrames = Atomic<Int>(0)
    let repeatedFrames = Atomic<Int>(0)
    let encoderFailures = Atomic<Int>(0)

    // MARK: Stage state (queue thread, under the lock)

    /// 2: where the delivered frames are on the device timeline: with `.silence` any gap is
    /// filled; else (a compressed stream) gaps up to 10 s, a longer one restarts its timeline.
    private var timeline: TimelineAligner
    private static func timeline(policy: RecordingGapPolicy, deviceRate: Int) -> TimelineAligner {
        TimelineAligner(longestFilledGap: policy == .silence ? .max : 10 * Int64(deviceRate))
    }
    /// Silence to insert for a gap, a chunk at a time (zeros, `silenceChunkFrames` frames).
    private var silenceChunk: [Float] = []
    private static let silenceChunkFrames = 1024
    /// 3: created at the first cycle with ``converterQuality``; the device frame (fractional)
    /// that output frame 0 since the last discontinuity maps to, and the output frames since.
    private var resampler: Resampler?
    var resampleAnchor: Double?
    var resampledFrames = 0
    /// 4: frames being processed, and 1: a frame split by the ring's wrap.
    private var processingScratch: [Float] = []
    /// The record the stages' latest input frames came in, and the frame of it after them:
    /// where a flushed tail's frames belong.
    private var lastProcessed: (CaptureCycle, Int)?
    private var stitchedFrame: [Float]
    /// 6: the buffer being filled (`enqueued[0]`): frames, or bytes and packets, and its stamp.
    private var filledFrames = 0
    var filledBytes = 0
    var filledPackets = 0
    var fillStart = AudioTimeStamp()
    private var meterSums: LevelSums
    /// Frames counted into the meters since the last delivered buffer (compressed buffers hold packets).
    var meteredFrames = 0
    var lastRecord: CaptureCycle?
    var isInUnderrun = false
    /// `.silence`, PCM: output frames an underrun lost, owed as silence before the next frames.
    private var owedSilenceFrames = 0
    /// PCM: set while the frames being emitted are silence for lost frames; the frames of the
    /// buffer being filled that are such silence, and those of the buffer being delivered
    /// (``AudioInputQueue/gapSilenceInDeliveredBuffer``).
    private var emittingGapSilence = false
    private var fillGapSilence: [Range<Int>] = []
    private(set) var deliveredGapSilence: [Range<Int>] = []

    init(format: StreamFormat, deviceRate: Int, packetStage: InputPacketStage?, reader: CaptureReader, lock: NSLock,
         onFirstCycle: @escaping () -> Void, deliver: @escaping Delivery) {
        self.format = format
        self.deviceRate = deviceRate
        self.packetStage = packetStage
        self.reader = reader
        self.lock = lock
        self.onFirstCycle = onFirstCycle
        self.deliver = deliver
        let channels = format.channelCount
        timeline = Self.timeline(policy: .timestamps, deviceRate: deviceRate)
        meterSums = LevelSums(channelCount: channels)
        levels = Array(repeating: AudioQueueLevelMeterState(), count: channels)
        stitchedFrame = Array(repeating: 0, count: channels)
    }

    var layout: LinearPCMLayout { format.frameLayout }
    var isResampling: Bool { format.sampleRate != Double(deviceRate) }

    // MARK: 1. Drain the ring

    /// Moves every captured cycle into buffers. Takes the lock.
    ///
    /// A cycle whose frame time jumps ahead by exactly its own length is held until the next
    /// cycle is seen (waiting at most 50 ms for it): when that one repeats the frame time, JACK
    /// told this client the wrong time for the first (it did in a CI run around an xrun: 4985216
    /// for the cycle of 4985088, then 4985216 again), and the first goes where its frames
    /// belong, so nothing is filled with silence or dropped. Any other jump stays a gap. With
    /// `final` no more cycles will come (stopped, paused): nothing is held.
    func drainRing(final: Bool = false) {
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
                    relabelledCycles.add(1, ordering: .relaxed)
                }
            }
            _ = reader.readCycle { _, samples in consume(placed, samples) }
        }
    }

    /// Forgets the timeline (a stop or reset): the next cycle starts it afresh.
    func resetTimeline() {
        timeline.reset()
        owedSilenceFrames = 0
        transportLog.reset()
        processing.reset()
    }

    // MARK: 2. Align

    private func consume(_ record: CaptureCycle, _ samples: RingRegions<Float>) {
        if !lock.withLock({ deviceIsRunning }) { onFirstCycle() }
        lock.lock()
        defer { lock.unlock() }
        transportLog.note(rolling: record.transportRolling, position: record.transportFrame, frameCount: record.frameCount,
                          sampleTime: Double(record.frameTime) - Double(latencyCompensationFrames))
        // Frames at the start of this record already in a compressed stream (JACK repeated a
        // cycle's frame time around an xrun): dropped, as a PCM file overwrites them in place.
        var alreadyEncoded = 0
        let previousEnd = timeline.next
        let placement = timeline.place(position: Int64(record.frameTime), count: Int64(record.frameCount), rebasing: resumingFromPause)
        if placement != TimelineAligner.Placement() {
            discontinuities.add(1, ordering: .relaxed)
            if (packetStage != nil || gapPolicy == .silence) && !(placement.rebase && packetStage == nil) {
                // Lost device frames (xrun, overrun) become silence, so the stream stays on the
                // device timeline: a compressed stream always (up to 10 s; after a pause it simply
                // continues, its timeline moved on by the pause), PCM with `.silence`.
                if placement.silence > 0 {
                    insertedSilenceFrames.add(Int(placement.silence), ordering: .relaxed)
                    insertSilenceLocked(frames: Int(placement.silence), before: record)
                }
                alreadyEncoded = Int(placement.skip)
                repeatedFrames.add(alreadyEncoded, ordering: .relaxed)
                if placement.rebase, let previousEnd, let packetStage {
                    packetStage.anchorDeviceFrame = packetStage.anchorDeviceFrame.map { $0 + Double(Int64(record.frameTime) - previousEnd) }
                }
            } else {
                // Linear PCM with `.timestamps` (Apple's behaviour), or any PCM timeline restart
                // (a pause): a gap or a repeat ends the buffer being filled, so that every
                // buffer's frames are contiguous from its timestamp (the caller sees the gap in
                // the timestamps, as on Apple's queue).
                finishResamplingLocked(record)
                finishProcessingLocked()
                deliverPartialBufferLocked()
            }
        }
        resumingFromPause = false
        guard alreadyEncoded < record.frameCount else { return }
        forEachContiguousRun(of: samples, skippingFrames: alreadyEncoded) { frames, count, start in
            resampleLocked(frames, frameCount: count, record: record, recordOffset: start)
        }
    }

    /// Puts `frames` frames of silence into the stream just before `record`'s frames (stamped
    /// as the device frames they stand for), a chunk at a time.
    private func insertSilenceLocked(frames: Int, before record: CaptureCycle) {
        let chunk = Self.silenceChunkFrames
        if silenceChunk.isEmpty { silenceChunk = [Float](repeating: 0, count: chunk * layout.channelCount) }
        emittingGapSilence = true
        defer { emittingGapSilence = false }
        var done = 0
        while done < frames {
            let count = min(chunk, frames - done)
            silenceChunk.withUnsafeBufferPointer {
                resampleLocked($0.baseAddress!, frameCount: count, record: record, recordOffset: done - frames)
            }
            done += count
        }
    }

    /// Hands the frames of a ring run, after its first `skip`, to `body` as contiguous runs
    /// straight from the ring: the first segment's whole frames, the one frame the wrap splits
    /// (copied into ``stitchedFrame``), the rest of the second segment; with each run, the frame
    /// of the record it starts at.
    private func forEachContiguousRun(of samples: RingRegions<Float>, skippingFrames skip: Int,
                                      _ body: (UnsafePointer<Float>, Int, Int) -> Void) {
        let channels = layout.channelCount
        let totalFrames = samples.count / channels
        var frame = skip
        let firstFrames = samples.first.count / channels
        if frame < firstFrames {
            body(UnsafePointer(samples.first.baseAddress! + frame * channels), firstFrames - frame, frame)
            frame = firstFrames
        }
        let split = samples.first.count % channels
        if split != 0 && frame == firstFrames && frame < totalFrames {
            stitchedFrame.withUnsafeMutableBufferPointer { stitch in
                for channel in 0 ..< channels { stitch[channel] = samples[firstFrames * channels + channel] }
                body(UnsafePointer(stitch.baseAddress!), 1, firstFrames)
            }
            frame += 1
        }
        if frame < totalFrames {
            // Frame f of the run starts at sample f·C, which is in the second segment here.
            body(UnsafePointer(samples.second.baseAddress! + (frame * channels - samples.first.count)), totalFrames - frame, frame)
        }
    }

    // MARK: 3. Resample

    /// Device-rate frames, starting `recordOffset` frames into `record`: resample when needed,
    /// then go on to the processing stages.
    private func resampleLocked(_ frames: UnsafePointer<Float>, frameCount: Int, record: CaptureCycle, recordOffset: Int) {
        guard isResampling else {
            processLocked(frames, frameCount: frameCount, record: record, recordOffset: recordOffset)
            return
        }
        if resampler == nil {
            resampler = try? Resampler(channelCount: layout.channelCount, inputRate: Double(deviceRate), outputRate: format.sampleRate, quality: converterQuality, engine: resamplerEngine)
        }
        if resampleAnchor == nil && packetStage == nil {
            resampleAnchor = Double(record.frameTime)
            resampledFrames = 0
        }
        resampler?.process(frames, frameCount: frameCount) { output, count in
            processLocked(output, frameCount: count, record: record, recordOffset: 0)
        }
    }

    /// Flushes the resampler's delay line into the buffers and forgets the anchor.
    func finishResamplingLocked(_ record: CaptureCycle?) {
        guard let resampler, resampleAnchor != nil else { return }
        let timing = record ?? lastRecord
        resampler.flush { output, count in
            if let timing { processLocked(output, frameCount: count, record: timing, recordOffset: 0) }
        }
        resampleAnchor = nil
    }

    /// Called by stop and flush: drains the resampler and the processing stages so the last
    /// frames reach the buffers. Takes the lock.
    func finishResampling() {
        lock.withLock {
            finishResamplingLocked(nil)
            finishProcessingLocked()
        }
    }

    // MARK: 4. Processing stages

    /// Runs the stages over frames that start `recordOffset` frames into `record`. With latency
    /// L, what comes out is the input of L frames before: the stages' first L frames after a
    /// (re)start are dropped and the rest are stamped L frames earlier, so a recording through
    /// a look-ahead limiter still starts on its first device frame (issue 12).
    private func processLocked(_ frames: UnsafePointer<Float>, frameCount: Int, record: CaptureCycle, recordOffset: Int) {
        guard !processing.isEmpty else {
            emitLocked(frames, frameCount: frameCount, record: record, recordOffset: recordOffset)
            return
        }
        let channels = layout.channelCount
        let sampleCount = frameCount * channels
        if processingScratch.count < sampleCount { processingScratch = [Float](repeating: 0, count: sampleCount) }
        lastProcessed = (record, recordOffset + frameCount)
        processingScratch.withUnsafeMutableBufferPointer { scratch in
            scratch.baseAddress!.update(from: frames, count: sampleCount)
            let dropped = processing.process(scratch.baseAddress!, frameCount: frameCount).offset
            guard dropped < frameCount else { return }
            emitLocked(UnsafePointer(scratch.baseAddress! + dropped * channels), frameCount: frameCount - dropped, record: record,
                       recordOffset: recordOffset + dropped - processing.latencyFrames)
        }
    }

    /// Pushes the stages' latency of silence through them after the latest frames (a stop, or a
    /// gap in the input), so those frames reach the buffers; the next frames start a new
    /// compensated run.
    private func finishProcessingLocked() {
        guard processing.hasPendingTail, let (record, end) = lastProcessed else { return }
        let silence = [Float](repeating: 0, count: processing.latencyFrames * layout.channelCount)
        silence.withUnsafeBufferPointer { processLocked($0.baseAddress!, frameCount: processing.latencyFrames, record: record, recordOffset: end) }
        processing.restartCompensation()
        lastProcessed = nil
    }

    // MARK: 5 and 6. Convert or encode, fill buffers

    /// Puts `frameCount` interleaved frames (in the format's rate) into the enqueued buffers,
    /// delivering each buffer as it fills. Without resampling, the first is device frame
    /// `record.frameTime + recordOffset` (the offset may be negative: frames delayed by stages).
    private func emitLocked(_ frames: UnsafePointer<Float>, frameCount: Int, record: CaptureCycle, recordOffset: Int) {
        lastRecord = record
        if let packetStage {
            encodeLocked(frames, frameCount: frameCount, record: record, stage: packetStage)
            return
        }
        if owedSilenceFrames > 0 && !enqueued.isEmpty {
            // `.silence`: what an underrun lost comes back as silence, where it was.
            let owed = owedSilenceFrames
            owedSilenceFrames = 0
            if isResampling { resampledFrames -= owed }
            if silenceChunk.isEmpty { silenceChunk = [Float](repeating: 0, count: Self.silenceChunkFrames * layout.channelCount) }
            emittingGapSilence = true
            defer { emittingGapSilence = false }
            var done = 0
            while done < owed {
                let count = min(Self.silenceChunkFrames, owed - done)
                silenceChunk.withUnsafeBufferPointer {
                    emitLocked($0.baseAddress!, frameCount: count, record: record, recordOffset: recordOffset - owed + done)
                }
                done += count
            }
            // What found no buffer again is owed again (and counted as underrun again).
            underrunSilenceFrames.add(owed - owedSilenceFrames, ordering: .relaxed)
        }
        let channels = layout.channelCount
        let bytesPerFrame = layout.bytesPerFrame
        var offset = 0
        while offset < frameCount {
            guard let buffer = enqueued.first else {
                // kAudioQueueErr_RecordUnderrun: nowhere to put the data. Lost and counted; the
                // next buffer's timestamp jumps by exactly the loss (the frame count runs on),
                // or with `.silence` the loss is owed as silence to the next buffer.
                underrunFrames.add(frameCount - offset, ordering: .relaxed)
                if !isInUnderrun { discontinuities.add(1, ordering: .relaxed) }
                isInUnderrun = true
                if isResampling { resampledFrames += frameCount - offset }
                if gapPolicy == .silence { owedSilenceFrames += frameCount - offset }
                return
            }
            isInUnderrun = false
            if filledFrames == 0 {
                fillStart = timestamp(ofOutputFrame: recordOffset + offset, record: record)
                if firstRecordedFrame == nil { firstRecordedFrame = fillStart.mSampleTime }
            }
            let capacityFrames = Int(buffer.pointee.mAudioDataBytesCapacity) / bytesPerFrame
            let count = min(capacityFrames - filledFrames, frameCount - offset)
            let destination = buffer.pointee.mAudioData + filledFrames * bytesPerFrame
            let source = frames + offset * channels
            if format.isNativeFloat32 {
                // The ring's samples are already the format's bytes: one copy.
                destination.copyMemory(from: source, byteCount: count * bytesPerFrame)
            } else {
                layout.encode(source, count: count * channels, to: destination, byteStride: layout.bytesPerSample)
            }
            if meteringEnabled { meterLocked(source, frameCount: count) }
            if emittingGapSilence { noteGapSilenceLocked(filledFrames ..< filledFrames + count) }
            filledFrames += count
            offset += count
            if isResampling { resampledFrames += count }
            if filledFrames == capacityFrames { deliverPartialBufferLocked() }
        }
    }

    /// Marks frames of the buffer being filled as silence for lost frames (merged with the run
    /// before when they follow it).
    private func noteGapSilenceLocked(_ frames: Range<Int>) {
        if let last = fillGapSilence.last, last.upperBound == frames.lowerBound {
            fillGapSilence[fillGapSilence.count - 1] = last.lowerBound ..< frames.upperBound
        } else {
            fillGapSilence.append(frames)
        }
    }

    /// Adds frames to the level meters' running sums.
    func meterLocked(_ source: UnsafePointer<Float>, frameCount: Int) {
        meterSums.add(source, frameCount: frameCount)
    }

    /// Delivers `enqueued[0]` if it holds frames. Takes the lock.
    func deliverPartialBuffer() {
        lock.withLock { deliverPartialBufferLocked() }
    }

    /// Delivers `enqueued[0]` if it holds frames; releases the lock around the callback.
    func deliverPartialBufferLocked() {
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
        if meteringEnabled && meterFrames > 0 { levels = meterSums.take(frameCount: meterFrames) }
        filledFrames = 0
        swap(&deliveredGapSilence, &fillGapSilence)
        fillGapSilence.removeAll(keepingCapacity: true)
        let startTime = fillStart
        lock.unlock()
        deliver(buffer, startTime)
        lock.lock()
    }
}
