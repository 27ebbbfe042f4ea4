import AQCore
import AQMedia
import AudioQueue
import CAudioTypes
import Foundation

// Apple's processing taps (AudioQueue.h, macOS 10.7 / iOS 6), as a processing stage of the
// queue (``QueueProcessingStage``): on a playback queue after decoding, on a recording queue
// before encoding, on the queue thread. Behaviour follows Apple's documentation of
// AudioQueueProcessingTapNew and its callback:
// - a tap is made or removed only on a stopped queue (paused is not enough), one per queue;
// - the processing format is non-interleaved 32-bit float at the queue's rate and channels;
// - a non-siphon tap gets its source with AudioQueueProcessingTapGetSourceAudio, only from
//   inside its callback, and must return exactly the frames asked for (fewer are padded with
//   silence here); a siphon tap sees the audio in ioData and must not change it (what it does
//   to ioData is ignored) nor ask for source audio;
// - the timestamp is the queue's sample time: frames through the tap since the start.
// The queue has no effects of its own, so PreEffects and PostEffects taps sit at the same place.


/// One tap: its callback, its queue, and the non-interleaved buffers it works in. Queue thread
/// (the callback and the Get functions run there); made and disposed on the caller's.
final class ProcessingTap: QueueProcessingStage, @unchecked Sendable {
    let reference: AudioQueueProcessingTapRef
    let callback: AudioQueueProcessingTapCallback
    let clientData: UnsafeMutableRawPointer?
    let flags: AudioQueueProcessingTapFlags
    let maximumFrames: Int
    let channelCount: Int
    let isInputQueue: Bool
    weak var queue: QueueBox?
    /// The source of the current callback, deinterleaved (channel c at `source + c·max`).
    private let source: UnsafeMutablePointer<Float>
    /// What a non-siphon tap's ioData points at on entry.
    private let output: UnsafeMutablePointer<Float>
    private let bufferList: UnsafeMutableAudioBufferListPointer
    /// Inside the callback: the frames of the current run and its first frame's queue time.
    private var current: (frames: Int, sampleTime: Double)?
    private var sourceTaken = false
    /// Frames through the tap since the start (the queue's sample time).
    private var sampleTime: Double = 0
    private var startOfStream = true

    private static let table = HandleTable<ProcessingTap>(.taps)
    /// What the callback gets as its client data when `AudioQueueProcessingTapNew` was given
    /// none: the callback's parameter is non-null (as Apple declares it), so a byte of ours
    /// stands in for NULL.
    nonisolated(unsafe) static let noClientData = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

    init(callback: AudioQueueProcessingTapCallback, clientData: UnsafeMutableRawPointer?, flags: AudioQueueProcessingTapFlags,
         maximumFrames: Int, channelCount: Int, isInputQueue: Bool) {
        self.callback = callback
        self.clientData = clientData
        self.flags = flags
        self.maximumFrames = maximumFrames
        self.channelCount = channelCount
        self.isInputQueue = isInputQueue
        source = .allocate(capacity: maximumFrames * channelCount)
        source.initialize(repeating: 0, count: maximumFrames * channelCount)
        output = .allocate(capacity: maximumFrames * channelCount)
        output.initialize(repeating: 0, count: maximumFrames * channelCount)
        bufferList = AudioBufferList.allocate(maximumBuffers: channelCount)
        reference = Self.table.reserve()
        Self.table.insert(self, at: reference)
    }

    deinit {
        source.deallocate()
        output.deallocate()
        free(bufferList.unsafeMutablePointer)
    }

    static func from(_ reference: AudioQueueProcessingTapRef?) -> ProcessingTap? { table.find(reference) }
    func unregister() { _ = Self.table.remove(reference) }

    var isSiphon: Bool { flags.contains(.siphon) }

    func reset() {
        sampleTime = 0
        startOfStream = true
    }

    func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount channels: Int) {
        var done = 0
        while done < frameCount {
            let count = min(maximumFrames, frameCount - done)
            let base = frames + done * channels
            SampleTranspose.deinterleave(base, frameCount: count, channelCount: channels, into: source, channelStride: maximumFrames)
            // ioData on entry: the audio itself for a siphon, the tap's output buffers otherwise.
            let entry = isSiphon ? source : output
            for channel in 0 ..< channels { bufferList[channel] = Self.buffer(entry + channel * maximumFrames, frames: count) }
            var stamp = timestamp()
            var callFlags = flags.union(startOfStream ? .startOfStream : [])
            var produced = UInt32(count)
            current = (count, sampleTime)
            sourceTaken = false
            callback(clientData ?? Self.noClientData, reference, UInt32(count), &stamp, &callFlags, &produced, bufferList.unsafeMutablePointer)
            current = nil
            startOfStream = false
            if !isSiphon {
                // What the tap left in ioData (its own buffers, the source's, or ours) is the audio.
                let made = min(Int(produced), count)
                for channel in 0 ..< channels {
                    // A channel without data, and the frames past what the tap made, are silence.
                    let data = bufferList[channel].mData?.assumingMemoryBound(to: Float.self)
                    if let data { SampleTranspose.setChannel(channel, of: base, frameCount: made, channelCount: channels, from: data) }
                    for frame in (data == nil ? 0 : made) ..< count { base[frame * channels + channel] = 0 }
                }
            }
            sampleTime += Double(count)
            done += count
        }
    }

    private static func buffer(_ data: UnsafeMutablePointer<Float>, frames: Int) -> AudioBuffer {
        AudioBuffer(mNumberChannels: 1, mDataByteSize: UInt32(frames * 4), mData: UnsafeMutableRawPointer(data))
    }

    private func timestamp() -> AudioTimeStamp {
        var stamp = AudioTimeStamp()
        stamp.mSampleTime = sampleTime
        stamp.mFlags = .sampleTimeValid
        return stamp
    }

    /// AudioQueueProcessingTapGetSourceAudio's work: the current run's source into `list`
    /// (copied where its buffers have memory, pointed at the queue's where they are NULL).
    func sourceAudio(frames requested: Int, timeStamp: UnsafeMutablePointer<AudioTimeStamp>, flags outFlags: UnsafeMutablePointer<AudioQueueProcessingTapFlags>,
                     frameCount: UnsafeMutablePointer<UInt32>, list: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
        guard let current else { return kAudioQueueErr_InvalidTapContext }
        guard !isSiphon else { return kAudioQueueErr_InvalidTapType }
        // The source of this run, once: a second request gets nothing more (the queue runs the
        // tap once per run of frames).
        let given = sourceTaken ? 0 : min(requested, current.frames)
        sourceTaken = true
        let buffers = UnsafeMutableAudioBufferListPointer(list)
        for channel in 0 ..< min(buffers.count, channelCount) {
            let from = source + channel * maximumFrames
            if let data = buffers[channel].mData?.assumingMemoryBound(to: Float.self) {
                // The caller's memory: as many frames as it says it holds (all, when it says 0).
                let capacity = Int(buffers[channel].mDataByteSize) / 4
                let count = capacity == 0 ? given : min(given, capacity)
                data.update(from: from, count: count)
                buffers[channel].mDataByteSize = UInt32(count * 4)
            } else {
                buffers[channel] = Self.buffer(from, frames: given)
            }
        }
        if isInputQueue { timeStamp.pointee = self.timestamp(at: current.sampleTime) }
        outFlags.pointee = current.sampleTime == 0 && given > 0 ? .startOfStream : []
        frameCount.pointee = UInt32(given)
        return noErr
    }

    private func timestamp(at time: Double) -> AudioTimeStamp {
        var stamp = AudioTimeStamp()
        stamp.mSampleTime = time
        stamp.mFlags = .sampleTimeValid
        return stamp
    }

    /// AudioQueueProcessingTapGetQueueTime's work.
    func queueTime(_ time: UnsafeMutablePointer<Float64>, _ frames: UnsafeMutablePointer<UInt32>) -> OSStatus {
        guard let current else { return kAudioQueueErr_InvalidTapContext }
        guard !isInputQueue else { return kAudioQueueErr_InvalidTapType }
        time.pointee = current.sampleTime
        frames.pointee = UInt32(current.frames)
        return noErr
    }
}

/// The frames a tap processes at most per callback: about 50 ms, a power of two (Apple's
/// 2048 at 44.1 kHz; 2048 at 48 kHz, 4096 at 96 kHz).
func tapMaximumFrames(sampleRate: Double) -> Int {
    var frames = 256
    while frames * 2 <= Int(sampleRate / 20) { frames *= 2 }
    return frames
}

@discardableResult
public func AudioQueueProcessingTapNew(_ inAQ: AudioQueueRef, _ inCallback: AudioQueueProcessingTapCallback, _ inClientData: UnsafeMutableRawPointer?,
                                       _ inFlags: AudioQueueProcessingTapFlags, _ outMaxFrames: UnsafeMutablePointer<UInt32>,
                                       _ outProcessingFormat: UnsafeMutablePointer<AudioStreamBasicDescription>,
                                       _ outAQTap: UnsafeMutablePointer<AudioQueueProcessingTapRef?>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let kinds = inFlags.intersection([.preEffects, .postEffects, .siphon])
    guard !kinds.isEmpty, inFlags.subtracting([.preEffects, .postEffects, .siphon]).isEmpty else {
        return kAudioQueueErr_InvalidTapType
    }
    guard box.tap == nil else { return kAudioQueueErr_TooManyTaps }
    guard !box.engine.isRunning else { return kAudioQueueErr_InvalidRunState }
    let format = box.engine.format
    let channels = Int(format.mChannelsPerFrame)
    let tap = ProcessingTap(callback: inCallback, clientData: inClientData, flags: inFlags,
                            maximumFrames: tapMaximumFrames(sampleRate: format.mSampleRate), channelCount: channels,
                            isInputQueue: box.input != nil)
    let result = status { () throws(AudioQueueError) in
        if let input = box.input { try input.setProcessingStages([tap]) } else { try box.output?.setProcessingStages([tap]) }
    }
    guard result == noErr else {
        tap.unregister()
        return result
    }
    tap.queue = box
    box.tap = tap
    outMaxFrames.pointee = UInt32(tap.maximumFrames)
    outProcessingFormat.pointee = AudioStreamBasicDescription(
        mSampleRate: format.mSampleRate, mFormatID: kAudioFormatLinearPCM,
        mFormatFlags: kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked | kAudioFormatFlagIsNonInterleaved,
        mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: UInt32(channels), mBitsPerChannel: 32, mReserved: 0)
    outAQTap.pointee = tap.reference
    return noErr
}

@discardableResult
public func AudioQueueProcessingTapDispose(_ inAQTap: AudioQueueProcessingTapRef) -> OSStatus {
    guard let tap = ProcessingTap.from(inAQTap) else { return kAudioQueueErr_InvalidTapContext }
    if let box = tap.queue {
        guard !box.engine.isRunning else { return kAudioQueueErr_InvalidRunState }
        let result = status { () throws(AudioQueueError) in
            if let input = box.input { try input.setProcessingStages([]) } else { try box.output?.setProcessingStages([]) }
        }
        guard result == noErr else { return result }
        box.tap = nil
    }
    tap.unregister()
    return noErr
}

@discardableResult
public func AudioQueueProcessingTapGetSourceAudio(_ inAQTap: AudioQueueProcessingTapRef, _ inNumberFrames: UInt32,
                                                  _ ioTimeStamp: UnsafeMutablePointer<AudioTimeStamp>,
                                                  _ outFlags: UnsafeMutablePointer<AudioQueueProcessingTapFlags>,
                                                  _ outNumberFrames: UnsafeMutablePointer<UInt32>,
                                                  _ ioData: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
    guard let tap = ProcessingTap.from(inAQTap) else { return kAudioQueueErr_InvalidTapContext }
    return tap.sourceAudio(frames: Int(inNumberFrames), timeStamp: ioTimeStamp, flags: outFlags, frameCount: outNumberFrames, list: ioData)
}

@discardableResult
public func AudioQueueProcessingTapGetQueueTime(_ inAQTap: AudioQueueProcessingTapRef, _ outQueueSampleTime: UnsafeMutablePointer<Float64>,
                                                _ outQueueFrameCount: UnsafeMutablePointer<UInt32>) -> OSStatus {
    guard let tap = ProcessingTap.from(inAQTap) else { return kAudioQueueErr_InvalidTapContext }
    return tap.queueTime(outQueueSampleTime, outQueueFrameCount)
}
