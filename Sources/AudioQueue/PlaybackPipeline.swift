import AQCodecs
import AQCore
import AQMedia
import CAudioTypes
import Foundation
import Synchronization

/// The signal path of a playback queue, in the order frames take it, on the queue thread (or,
/// rendering offline, on the renderer's):
///
/// 1. **take buffers** in enqueue order, with their trims and per-buffer volume;
/// 2. **decode**: linear PCM samples to float, or AAC/ALAC packets through the decoder made from
///    the magic cookie;
/// 3. **processing stages** (``QueueProcessingStage``: the insertion point for taps and plugins);
/// 3b. **time-pitch** (Apple's `EnableTimePitch`): Spectral and TimeDomain stretch with
///    ``TimePitch`` (pitch kept, or shifted by the Pitch parameter); Varispeed plays the stream
///    as if its rate were `rate × playRate`, which the resampler then takes to the device's;
/// 4. **resample** from the format's rate to the device's (``Resampler``);
/// 5. **fill the ring** (``PlaybackFeeder``): at the device's rate with no stages, samples are
///    decoded straight into the ring; otherwise through `pending`;
/// 6. **hand buffers back** once their last frame has been played (the process thread's played
///    frame count), as Apple's queue does.
///
/// The process thread then plays the ring from the start frame with volume and pan
/// (``PlaybackProcessor``). ``AudioOutputQueue`` is the API and state shell around this. Every
/// method runs with the queue's `lock` held unless it says it takes the lock; the callback runs
/// with it released.
final class PlaybackPipeline {
    /// One enqueued buffer and what to skip of it.
    struct Entry {
        let buffer: AudioQueueBufferRef
        var trimStartFrames: Int
        var trimEndFrames: Int
        var gain: Float?
        /// Compressed: where each packet lies in the buffer.
        var packetDescriptions: [AudioStreamPacketDescription] = []
        /// The ring frame (device frames, the queue's timeline) its first frame is to play at;
        /// silence fills the ring up to it. nil: right after what comes before.
        var startFrame: Int? = nil
    }

    let format: StreamFormat
    private let feeder: PlaybackFeeder
    private let processor: PlaybackProcessor
    private let lock: NSLock
    /// Buffers go back here (the queue's callback), with the lock released.
    private let deliver: (AudioQueueBufferRef) -> Void
    /// A buffer enqueued with a volume reaches its first frame: the shell sets the gain (lock held).
    private let bufferVolume: (Float) -> Void

    // MARK: Shared with the shell, under the lock

    /// 1: the buffers not yet converted, in order.
    var enqueued: [Entry] = []
    /// 6: buffers fully converted but not yet played out, with the played-frame count at which
    /// their last frame has left.
    private(set) var inFlight: [(buffer: AudioQueueBufferRef, doneAtPlayedFrame: Int)] = []
    /// The rate frames are played at: the device's, or the offline render format's.
    private(set) var deviceRate: Int
    var converterQuality = Resampler.Quality.best
    var resamplerEngine = Resampler.Engine.soxr
    /// 3b: the time-pitch algorithm, nil when time-pitch is off or bypassed; the play rate
    /// (0.5 ... 2) and pitch shift in cents (-2400 ... 2400; not for Varispeed).
    var timePitchAlgorithm: TimePitchAlgorithm? {
        didSet { if timePitchAlgorithm != oldValue { stretcher = nil } }
    }
    var playRate = 1.0
    var pitchCents = 0.0
    /// 2: the stream's magic cookie (compressed); setting it makes a new decoder at the next buffer.
    var cookie: [UInt8] = [] {
        didSet { decoder = nil }
    }
    /// 3: processing stages, set while the queue is stopped.
    var processing = CompensatedStages()
    /// Frames written into the ring since the queue was made.
    private(set) var writtenFrames = 0

    /// Compressed packets that did not decode (their frames are skipped). Any thread.
    let decodeFailures = Atomic<Int>(0)

    /// Level metering (`kAudioQueueProperty_EnableLevelMetering` on a playback queue): frames
    /// are measured as they go into the ring, in blocks of `meterBlockFrames`, each kept with
    /// the ring frame it ends at, so that the levels reported are those of the block playing
    /// now, not of frames a quarter-second ahead.
    var meteringEnabled = false {
        didSet { if !meteringEnabled { meterBlocks.removeAll() } }
    }
    private static let meterBlockFrames = 1024
    private var meterBlocks: [(endFrame: Int, levels: [AudioQueueLevelMeterState])] = []
    private var meterSums = LevelSums(channelCount: 0)
    private var meterFrames = 0

    // MARK: Stage state

    /// Frames of the front buffer already converted.
    private var frontOffset = 0
    /// 2: the decoder, and the front compressed buffer decoded (interleaved float).
    private var decoder: (any PacketDecoding)?
    private var decodedFront: [Float]?
    /// 3 and 4: one piece of decoded frames being processed or resampled.
    private var piece: [Float] = []
    private var resampler: Resampler?
    /// The input rate `resampler` was made for (Varispeed changes it).
    private var resamplerInputRate = 0.0
    /// 3b: the stretcher of Spectral and TimeDomain.
    private var stretcher: TimePitch?
    /// 5: converted frames (device rate) not yet in the ring, from `pendingStart` on.
    private var pending: [Float] = []
    private var pendingStart = 0

    init(format: StreamFormat, deviceRate: Int, feeder: PlaybackFeeder, processor: PlaybackProcessor, lock: NSLock,
         bufferVolume: @escaping (Float) -> Void, deliver: @escaping (AudioQueueBufferRef) -> Void) {
        self.format = format
        self.deviceRate = deviceRate
        self.feeder = feeder
        self.processor = processor
        self.lock = lock
        self.bufferVolume = bufferVolume
        self.deliver = deliver
    }

    private var layout: LinearPCMLayout { format.frameLayout }

    /// Whether `buffer` is enqueued or on its way out.
    func holds(_ buffer: AudioQueueBufferRef) -> Bool {
        enqueued.contains { $0.buffer == buffer } || inFlight.contains { $0.buffer == buffer }
    }

    /// Whether converted frames wait to go into the ring.
    var hasPendingFrames: Bool { pending.count > pendingStart }

    /// The ring frame at which a buffer enqueued now with `startFrame` will start: after
    /// everything written, waiting and enqueued (each buffer's frames at the device's rate, its
    /// own start honoured), and not before `startFrame`. Exact for linear PCM at a constant
    /// play rate; compressed buffers count their packets' nominal frames.
    func projectedStart(for startFrame: Int?) -> Int {
        var position = Double(writtenFrames + (pending.count - pendingStart) / layout.channelCount)
        let ratio = Double(deviceRate) / format.sampleRate / (timePitchAlgorithm == nil ? 1 : playRate)
        for (index, entry) in enqueued.enumerated() {
            if let start = entry.startFrame, Double(start) > position { position = Double(start) }
            let frames = format.isCompressed
                ? entry.packetDescriptions.count * Int(format.description.mFramesPerPacket)
                : Int(entry.buffer.pointee.mAudioDataByteSize) / layout.bytesPerFrame
            let left = max(0, frames - entry.trimStartFrames - entry.trimEndFrames - (index == 0 ? max(0, frontOffset - entry.trimStartFrames) : 0))
            position += Double(left) * ratio
        }
        return max(Int(position.rounded()), startFrame ?? 0)
    }
    /// Whether anything is enqueued, waiting or on its way out (a rate change would mix rates).
    var holdsFrames: Bool { !enqueued.isEmpty || !inFlight.isEmpty || hasPendingFrames || feeder.queuedFrameCount > 0 }

    /// Plays at `rate` from now on (offline rendering at another rate); only when nothing is held.
    func changeDeviceRate(_ rate: Int) {
        guard rate != deviceRate else { return }
        deviceRate = rate
        resampler = nil
    }

    // MARK: 1 to 5: buffers into the ring

    /// Converts enqueued buffers into the ring as far as it has room. Takes the lock.
    func fill() {
        while true {
            // Pending converted frames go first.
            let left = lock.withLock { () -> Int in
                let count = (pending.count - pendingStart) / layout.channelCount
                guard count > 0 else { return 0 }
                let written = pending.withUnsafeBufferPointer { frames in
                    let written = feeder.write(frames.baseAddress! + pendingStart, frameCount: count)
                    if meteringEnabled { meter(frames.baseAddress! + pendingStart, sampleCount: written * layout.channelCount, endingAt: writtenFrames + written) }
                    return written
                }
                pendingStart += written * layout.channelCount
                writtenFrames += written
                if pendingStart == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingStart = 0
                }
                return count - written
            }
            if left > 0 { return }
            // Then the next piece of the front buffer.
            guard let finished = convertNextPiece() else { return }
            if let buffer = finished {
                lock.withLock {
                    let mark = writtenFrames + (pending.count - pendingStart) / layout.channelCount
                    inFlight.append((buffer, mark))
                }
            }
        }
    }

    /// Converts the next piece of the front buffer: at the device's rate with no processing
    /// stages as much as the ring has room for, straight into it; otherwise up to 1024 frames
    /// through the stages and the resampler into `pending`. Takes the lock.
    /// - Returns: nil when nothing is enqueued or the ring is full; `.some(buffer)` when that
    ///   buffer is used up (removed from the queue; the caller puts it in flight); `.some(nil)` otherwise.
    private func convertNextPiece() -> AudioQueueBufferRef?? {
        lock.lock()
        defer { lock.unlock() }
        guard var entry = enqueued.first else { return nil }
        if format.isCompressed && decodedFront == nil { decodedFront = decode(entry) }
        let totalFrames = decodedFront.map { $0.count / layout.channelCount } ?? Int(entry.buffer.pointee.mAudioDataByteSize) / layout.bytesPerFrame
        let firstFrame = min(entry.trimStartFrames, totalFrames)
        let endFrame = max(firstFrame, totalFrames - entry.trimEndFrames)
        if frontOffset < firstFrame { frontOffset = firstFrame }
        if frontOffset == firstFrame, let gain = entry.gain {
            entry.gain = nil
            enqueued[0] = entry
            bufferVolume(gain)
        }
        if frontOffset == firstFrame, let start = entry.startFrame {
            // A scheduled start: silence in the ring up to it (a time already past starts now).
            entry.startFrame = nil
            enqueued[0] = entry
            let position = writtenFrames + (pending.count - pendingStart) / layout.channelCount
            if start > position { pending.append(contentsOf: repeatElement(0, count: (start - position) * layout.channelCount)) }
            return .some(nil)
        }
        if frontOffset >= endFrame {
            enqueued.removeFirst()
            frontOffset = 0
            decodedFront = nil
            return .some(entry.buffer)
        }
        let channels = layout.channelCount
        let atDeviceRate = format.sampleRate == Double(deviceRate) && timePitchAlgorithm == nil
        if atDeviceRate && processing.isEmpty {
            // The frames go straight into the ring (fill has emptied `pending` first): no copy
            // in between.
            let source = entry.buffer.pointee.mAudioData + frontOffset * layout.bytesPerFrame
            let written = feeder.write(frameCount: endFrame - frontOffset) { samples, before in
                if let decoded = decodedFront {
                    for index in samples.indices { samples[index] = decoded[frontOffset * channels + before + index] }
                } else {
                    layout.decode(from: source + before * layout.bytesPerSample, into: samples.baseAddress!, count: samples.count)
                }
                if meteringEnabled {
                    meter(samples.baseAddress!, sampleCount: samples.count, endingAt: writtenFrames + (before + samples.count) / channels)
                }
            }
            frontOffset += written
            writtenFrames += written
            return written > 0 ? .some(nil) : nil   // a full ring: nothing more for now
        }
        let count = min(1024, endFrame - frontOffset)
        if piece.count < count * channels { piece = [Float](repeating: 0, count: count * channels) }
        piece.withUnsafeMutableBufferPointer { floats in
            if let decoded = decodedFront {
                for index in 0 ..< count * channels { floats[index] = decoded[frontOffset * channels + index] }
            } else {
                let source = entry.buffer.pointee.mAudioData + frontOffset * layout.bytesPerFrame
                layout.decode(from: source, into: floats.baseAddress!, count: count * channels)
            }
        }
        frontOffset += count
        processAndDeliverPiece(frameCount: count)
        return .some(nil)
    }

    /// Runs `piece`'s first `frameCount` frames through the stages (their start-up silence
    /// dropped: the stream's first frame plays first, as it would without them), the time-pitch
    /// stage and the resampler into `pending`. Under the lock.
    private func processAndDeliverPiece(frameCount count: Int) {
        let channels = layout.channelCount
        let dropped = piece.withUnsafeMutableBufferPointer { floats in
            processing.isEmpty ? 0 : processing.process(floats.baseAddress!, frameCount: count).offset
        }
        guard dropped < count else { return }
        piece.withUnsafeBufferPointer { input in
            let start = input.baseAddress! + dropped * channels
            if let stretcher = currentStretcher() {
                stretcher.process(start, frameCount: count - dropped) { output, produced in resample(output, frameCount: produced) }
            } else {
                resample(start, frameCount: count - dropped)
            }
        }
    }

    /// The stretcher for Spectral and TimeDomain at the current rate and pitch, made on first use.
    private func currentStretcher() -> TimePitch? {
        guard let algorithm = timePitchAlgorithm, algorithm != .varispeed else { return nil }
        if stretcher == nil {
            stretcher = TimePitch(sampleRate: Int(format.sampleRate), channelCount: layout.channelCount,
                                  algorithm: algorithm == .spectral ? .spectral : .timeDomain, rate: playRate, pitchCents: pitchCents)
        }
        if stretcher!.rate != playRate { stretcher!.rate = playRate }
        if stretcher!.pitchCents != pitchCents { stretcher!.pitchCents = pitchCents }
        return stretcher
    }

    /// Frames at the stream's rate into `pending` at the device's: Varispeed takes the stream's
    /// rate as `rate × playRate`, so the resampler plays it faster or slower, pitch and all.
    private func resample(_ frames: UnsafePointer<Float>, frameCount: Int) {
        let channels = layout.channelCount
        let inputRate = format.sampleRate * (timePitchAlgorithm == .varispeed ? playRate : 1)
        if inputRate == Double(deviceRate) {
            pending.append(contentsOf: UnsafeBufferPointer(start: frames, count: frameCount * channels))
            return
        }
        if resampler == nil || resamplerInputRate != inputRate {
            // A new rate: what the old resampler holds goes out first.
            resampler?.flush { output, produced in pending.append(contentsOf: UnsafeBufferPointer(start: output, count: produced * channels)) }
            resampler = try? Resampler(channelCount: channels, inputRate: inputRate, outputRate: Double(deviceRate), quality: converterQuality, engine: resamplerEngine)
            resamplerInputRate = inputRate
        }
        resampler?.process(frames, frameCount: frameCount) { output, produced in
            pending.append(contentsOf: UnsafeBufferPointer(start: output, count: produced * channels))
        }
    }

    /// Decodes a compressed buffer's packets. A packet that fails is counted and skipped; a
    /// missing decoder (no usable cookie) leaves the buffer silent-empty. The first failure is
    /// said once on standard error (Apple's queue has no error path for it; the count is
    /// ``AudioOutputQueue/decodeFailureCount``).
    private func decode(_ entry: Entry) -> [Float] {
        if decoder == nil {
            do throws(AudioConverterError) {
                decoder = try PacketDecoders.decoder(for: format.description, cookie: cookie)
            } catch {
                reportDecodeFailure(error.message)
            }
        }
        guard let decoder else {
            decodeFailures.add(entry.packetDescriptions.count, ordering: .relaxed)
            return []
        }
        var output: [Float] = []
        let data = UnsafeRawPointer(entry.buffer.pointee.mAudioData)
        for description in entry.packetDescriptions {
            let packet = UnsafeRawBufferPointer(start: data + Int(description.mStartOffset), count: Int(description.mDataByteSize))
            do throws(AudioConverterError) {
                try decoder.decode(packet) { pointer, frames in output += UnsafeBufferPointer(start: pointer, count: frames * self.layout.channelCount) }
            } catch {
                decodeFailures.add(1, ordering: .relaxed)
                reportDecodeFailure(error.message)
            }
        }
        return output
    }

    private var reportedDecodeFailure = false

    /// Says once on standard error that packets are being skipped, and why.
    private func reportDecodeFailure(_ reason: String) {
        guard !reportedDecodeFailure else { return }
        reportedDecodeFailure = true
        let message = "aqjack: an output queue of \(fourCharacterCode(format.description.mFormatID)) skips packets it cannot decode (\(reason)); "
            + "their frames are not played, and AudioOutputQueue.decodeFailureCount counts them\n"
        try? FileHandle.standardError.write(contentsOf: Data(message.utf8))
    }

    /// Moves the stages' tail (their latency of silence pushed through) and the resampler's
    /// delay line into the ring (the end of the stream). Takes the lock.
    func flushResampler() {
        lock.withLock {
            let channels = layout.channelCount
            if processing.hasPendingTail {
                let count = processing.latencyFrames
                if piece.count < count * channels { piece = [Float](repeating: 0, count: count * channels) }
                piece.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
                processAndDeliverPiece(frameCount: count)
                processing.restartCompensation()
            }
            stretcher?.finish { output, produced in resample(output, frameCount: produced) }
            stretcher = nil
            resampler?.flush { output, produced in
                pending.append(contentsOf: UnsafeBufferPointer(start: output, count: produced * channels))
            }
        }
        fill()
    }

    /// Forgets every converted frame not yet played (a stop): `writtenFrames` becomes what was played.
    func dropConvertedFrames(playedFrames: Int) {
        pending.removeAll()
        pendingStart = 0
        writtenFrames = playedFrames
        frontOffset = 0
        decodedFront = nil
        resampler?.reset()
        stretcher = nil
        processing.reset()
    }

    // MARK: Level meters

    /// Adds `sampleCount` interleaved samples, the last of which is ring frame `endFrame` - 1,
    /// to the meters; every full block is kept with its end.
    private func meter(_ samples: UnsafePointer<Float>, sampleCount: Int, endingAt endFrame: Int) {
        let channels = layout.channelCount
        if meterSums.channelCount != channels { meterSums = LevelSums(channelCount: channels) }
        let frames = sampleCount / channels
        var done = 0
        while done < frames {
            // Up to the end of the current block at a time.
            let count = min(frames - done, Self.meterBlockFrames - meterFrames)
            meterSums.add(samples + done * channels, frameCount: count)
            meterFrames += count
            done += count
            if meterFrames == Self.meterBlockFrames {
                meterBlocks.append((endFrame - (frames - done), meterSums.take(frameCount: meterFrames)))
                if meterBlocks.count > 256 { meterBlocks.removeFirst(meterBlocks.count - 256) }
                meterFrames = 0
            }
        }
    }

    /// The levels of the block that holds ring frame `playedFrame` (the one playing), or of
    /// the last block before it; zeros before anything was measured.
    func levels(atPlayedFrame playedFrame: Int) -> [AudioQueueLevelMeterState] {
        let block = meterBlocks.first { $0.endFrame > playedFrame } ?? meterBlocks.last
        return block?.levels ?? Array(repeating: AudioQueueLevelMeterState(), count: layout.channelCount)
    }

    // MARK: 6. Buffers back

    /// Hands back the buffers whose frames have all been played. Takes the lock.
    func returnPlayedBuffers() {
        let played = processor.playedFrameCount.load(ordering: .acquiring)
        while let buffer = lock.withLock({ () -> AudioQueueBufferRef? in
            guard let first = inFlight.first, first.doneAtPlayedFrame <= played else { return nil }
            inFlight.removeFirst()
            return first.buffer
        }) {
            deliver(buffer)
        }
    }

    /// Hands every buffer back: those on their way out, then the enqueued ones. Takes the lock.
    func returnAllBuffers() {
        while let item = lock.withLock({ inFlight.isEmpty ? nil : inFlight.removeFirst() }) {
            deliver(item.buffer)
        }
        while let entry = lock.withLock({ enqueued.isEmpty ? nil : enqueued.removeFirst() }) {
            deliver(entry.buffer)
        }
    }

    /// Forgets every buffer (dispose).
    func removeAll() {
        enqueued.removeAll()
        inFlight.removeAll()
    }
}

/// How a playback queue changes its play rate (Apple's `kAudioQueueTimePitchAlgorithm_*`).
public enum TimePitchAlgorithm: Sendable, Equatable {
    /// Pitch kept, Rubber Band's finer engine ('spec').
    case spectral
    /// Pitch kept, Rubber Band's faster engine ('tido'; also Apple's LowQualityZeroLatency).
    case timeDomain
    /// Resampled: faster is higher ('vspd').
    case varispeed
}
