import AQMedia
import AudioQueue
import Foundation

// Playback-side Audio Queue Services, Apple spelling, over ``AudioOutputQueue``.

public let kAudioQueueParam_Volume: AudioQueueParameterID = 1
public let kAudioQueueParam_PlayRate: AudioQueueParameterID = 2
public let kAudioQueueParam_Pitch: AudioQueueParameterID = 3

// Time-pitch (AudioQueue.h).
public let kAudioQueueProperty_EnableTimePitch: AudioQueuePropertyID = 0x715F_7470      // 'q_tp'
public let kAudioQueueProperty_TimePitchAlgorithm: AudioQueuePropertyID = 0x7174_7061   // 'qtpa'
public let kAudioQueueProperty_TimePitchBypass: AudioQueuePropertyID = 0x7174_7062      // 'qtpb'
public let kAudioQueueTimePitchAlgorithm_Spectral: UInt32 = 0x7370_6563                 // 'spec'
public let kAudioQueueTimePitchAlgorithm_TimeDomain: UInt32 = 0x7469_646F               // 'tido'
public let kAudioQueueTimePitchAlgorithm_Varispeed: UInt32 = 0x7673_7064                // 'vspd'
public let kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency: UInt32 = 0x6C71_7A6C    // 'lqzl'
public let kAudioQueueParam_VolumeRampTime: AudioQueueParameterID = 4
public let kAudioQueueParam_Pan: AudioQueueParameterID = 13
public let kAudioQueueErr_EnqueueDuringReset: OSStatus = -66632
public let kAudioQueueErr_InvalidOfflineMode: OSStatus = -66626

/// Creates a playback queue: a JACK client `aqjack` with ports `out_1 ... out_N`, connected at
/// start to the physical playback ports (see `kAudioQueueProperty_CurrentDevice`), or to what
/// the environment chooses (`AQJACK_SERVER`, `AQJACK_CLIENT_NAME`, `AQJACK_CONNECT`:
/// ``DeviceEnvironment``). The callback
/// runs on the queue's thread, or on the given run loop's thread.
///
/// With no JACK server running the queue is still made, for offline rendering only
/// (``AudioQueueSetOfflineRenderFormat``): Apple's queue renders offline without a device, and a
/// start on the device answers `kAudioQueueErr_InvalidDevice` naming the server.
@discardableResult
public func AudioQueueNewOutput(_ inFormat: UnsafePointer<AudioStreamBasicDescription>,
                                _ inCallbackProc: @escaping AudioQueueOutputCallback,
                                _ inUserData: UnsafeMutableRawPointer?,
                                _ inCallbackRunLoop: CFRunLoop?,
                                _ inCallbackRunLoopMode: CFString?,
                                _ inFlags: UInt32,
                                _ outAQ: UnsafeMutablePointer<AudioQueueRef?>) -> OSStatus {
    guard inFlags == 0 else { return kAudio_ParamError }
    return newOutputQueue(QueueBox(userData: inUserData, runLoop: inCallbackRunLoop, runLoopMode: inCallbackRunLoopMode), inFormat, outAQ) { box, buffer in
        inCallbackProc(box.userData, box.reference, buffer)
    }
}

/// The block a playback queue made by ``AudioQueueNewOutputWithDispatchQueue(_:_:_:_:_:)`` calls.
public typealias AudioQueueOutputCallbackBlock = (AudioQueueRef, AudioQueueBufferRef) -> Void

/// `AudioQueueNewOutput` with a block called on `inCallbackDispatchQueue` (macOS 10.6, iOS 10).
@discardableResult
public func AudioQueueNewOutputWithDispatchQueue(_ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
                                                 _ inFormat: UnsafePointer<AudioStreamBasicDescription>,
                                                 _ inFlags: UInt32,
                                                 _ inCallbackDispatchQueue: DispatchQueue,
                                                 _ inCallbackBlock: @escaping AudioQueueOutputCallbackBlock) -> OSStatus {
    guard inFlags == 0 else { return kAudio_ParamError }
    return newOutputQueue(QueueBox(userData: nil, runLoop: nil, dispatchQueue: inCallbackDispatchQueue), inFormat, outAQ) { box, buffer in inCallbackBlock(box.reference, buffer) }
}

/// What both output-queue constructors share.
private func newOutputQueue(_ box: QueueBox, _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
                            call: @escaping (QueueBox, AudioQueueBufferRef) -> Void) -> OSStatus {
    status { () throws(AudioQueueError) in
        let environment = DeviceEnvironment.current()
        let device = try environment.openPlaybackDriver(format: inFormat.pointee)
        let engine = try AudioOutputQueue(format: inFormat.pointee, driver: device.driver,
                                          unavailableDeviceReason: device.unavailableReason) { [unowned box] _, buffer in
            box.deliver { [box] in call(box, buffer) }
        }
        box.engine = engine
        if let peers = try environment.peers(for: engine, on: engine.driver, queueDirection: .output) { engine.channelDestinations = peers }
        box.engine.onRunningChange = { [unowned box] _ in box.notify(kAudioQueueProperty_IsRunning) }
        box.register()
        outAQ.pointee = box.reference
    }
}

/// Decodes enqueued buffers ahead so that a start is glitch-free; `inNumberOfFramesToPrepare`
/// 0 means everything enqueued (as far as the queue's ring holds).
@discardableResult
public func AudioQueuePrime(_ inAQ: AudioQueueRef, _ inNumberOfFramesToPrepare: UInt32,
                            _ outNumberOfFramesPrepared: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let output = QueueBox.from(inAQ)?.output else { return QueueBox.from(inAQ) == nil ? invalidQueueStatus : kAudioQueueErr_InvalidQueueType }
    let prepared = output.prime(frames: Int(inNumberOfFramesToPrepare))
    outNumberOfFramesPrepared?.pointee = UInt32(prepared)
    return noErr
}

/// Enqueues a playback buffer with frames to trim at its start and end and parameter events
/// (volume) that take effect when it starts playing. `inStartTime` (its `mSampleTime`, with
/// `kAudioTimeStampSampleTimeValid`) schedules the buffer on the queue's timeline, the sample
/// times `AudioQueueGetCurrentTime` reports: silence plays up to it. `outActualStartTime` gets
/// the time it will start: the one asked, or later when the buffers before it run past it (or
/// when it is past already), exact for linear PCM. Without a start time it is the time right
/// after the buffers before it.
@discardableResult
public func AudioQueueEnqueueBufferWithParameters(_ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef,
                                                  _ inNumPacketDescs: UInt32, _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?,
                                                  _ inTrimFramesAtStart: UInt32, _ inTrimFramesAtEnd: UInt32,
                                                  _ inNumParamValues: UInt32, _ inParamValues: UnsafePointer<AudioQueueParameterEvent>?,
                                                  _ inStartTime: UnsafePointer<AudioTimeStamp>?,
                                                  _ outActualStartTime: UnsafeMutablePointer<AudioTimeStamp>?) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    guard let output = box.output else { return kAudioQueueErr_InvalidQueueType }
    var startFrame: Int?
    if let inStartTime {
        guard inStartTime.pointee.mFlags.contains(.sampleTimeValid) else { return kAudioQueueErr_InvalidParameter }
        let time = inStartTime.pointee.mSampleTime
        guard time.isFinite, time >= 0, time < 9.0e15 else { return kAudio_ParamError }
        // The queue's sample times count its format's frames; the ring counts the device's.
        startFrame = Int((time * Double(output.playbackRate) / output.format.mSampleRate).rounded())
    }
    var volume: Float?
    for index in 0 ..< Int(inNumParamValues) {
        guard let event = inParamValues?[index] else { break }
        switch event.mID {
        case kAudioQueueParam_Volume:
            guard parameterRanges[kAudioQueueParam_Volume]!.contains(event.mValue) else { return kAudio_ParamError }
            volume = event.mValue
        default: return kAudioQueueErr_InvalidParameter
        }
    }
    return status { () throws(AudioQueueError) in
        let descriptions = inPacketDescs.map { Array(UnsafeBufferPointer(start: $0, count: Int(inNumPacketDescs))) } ?? []
        let start = try output.enqueue(inBuffer, trimStartFrames: Int(inTrimFramesAtStart), trimEndFrames: Int(inTrimFramesAtEnd), volume: volume,
                                       packetDescriptions: descriptions, startingAt: startFrame)
        if let outActualStartTime {
            var actual = AudioTimeStamp()
            actual.mSampleTime = (Double(start) * output.format.mSampleRate / Double(output.playbackRate)).rounded()
            actual.mFlags = .sampleTimeValid
            outActualStartTime.pointee = actual
        }
    }
}

/// Sets a playback parameter now: `Volume` (0 ... 1, ramped over `VolumeRampTime` seconds),
/// `VolumeRampTime`, `Pan` (-1 ... 1), `PlayRate` (0.5 ... 2) and `Pitch` (-2400 ... 2400
/// cents), the last two heard when `kAudioQueueProperty_EnableTimePitch` is on (Apple: "usable
/// only if the time-pitch processor is enabled"; set without it, they are kept for later).
@discardableResult
public func AudioQueueSetParameter(_ inAQ: AudioQueueRef, _ inParamID: AudioQueueParameterID,
                                   _ inValue: AudioQueueParameterValue) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    guard let output = box.output else { return kAudioQueueErr_InvalidParameter }
    guard let valid = parameterRanges[inParamID] else { return kAudioQueueErr_InvalidParameter }
    // Apple documents Volume 0 ... 1 and Pan -1 ... 1; a value outside (or NaN) is a bad
    // parameter value, kAudio_ParamError, and changes nothing (issue 9, item 8).
    guard valid.contains(inValue) else { return kAudio_ParamError }
    switch inParamID {
    case kAudioQueueParam_Volume: output.volumeLevel = inValue
    case kAudioQueueParam_VolumeRampTime: output.volumeRampTime = Double(inValue)
    case kAudioQueueParam_PlayRate: output.playRate = inValue
    case kAudioQueueParam_Pitch: output.pitchCents = inValue
    default: output.panPosition = inValue
    }
    return noErr
}

/// The values `AudioQueueSetParameter` and parameter events accept, per parameter: the
/// engine's (``AudioOutputQueue/volumeRange`` ...). NaN is in no range.
let parameterRanges: [AudioQueueParameterID: ClosedRange<Float>] = [
    kAudioQueueParam_Volume: AudioOutputQueue.volumeRange, kAudioQueueParam_Pan: AudioOutputQueue.panRange,
    kAudioQueueParam_VolumeRampTime: Float(AudioOutputQueue.volumeRampTimeRange.lowerBound) ... Float(AudioOutputQueue.volumeRampTimeRange.upperBound),
    kAudioQueueParam_PlayRate: AudioOutputQueue.playRateRange, kAudioQueueParam_Pitch: AudioOutputQueue.pitchRange,
]

@discardableResult
public func AudioQueueGetParameter(_ inAQ: AudioQueueRef, _ inParamID: AudioQueueParameterID,
                                   _ outValue: UnsafeMutablePointer<AudioQueueParameterValue>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    guard let output = box.output else { return kAudioQueueErr_InvalidParameter }
    switch inParamID {
    case kAudioQueueParam_Volume: outValue.pointee = output.volumeLevel
    case kAudioQueueParam_VolumeRampTime: outValue.pointee = Float(output.volumeRampTime)
    case kAudioQueueParam_Pan: outValue.pointee = output.panPosition
    case kAudioQueueParam_PlayRate: outValue.pointee = output.playRate
    case kAudioQueueParam_Pitch: outValue.pointee = output.pitchCents
    default: return kAudioQueueErr_InvalidParameter
    }
    return noErr
}

/// Switches a playback queue to offline rendering into `inFormat` (interleaved linear PCM with
/// the queue's channel count), or back to its device with NULL. The layout is accepted and not
/// used: the queue renders its channels in order. The queue must be stopped.
///
/// Offline, the queue connects to no device; a queue made by ``AudioQueueNewOutput`` while no
/// JACK server runs can render this way (it cannot start on a device).
@discardableResult
public func AudioQueueSetOfflineRenderFormat(_ inAQ: AudioQueueRef, _ inFormat: UnsafePointer<AudioStreamBasicDescription>?,
                                             _ inLayout: UnsafePointer<AudioChannelLayout>?) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    guard let output = box.output else { return kAudioQueueErr_InvalidQueueType }
    return status { () throws(AudioQueueError) in try output.setOfflineRenderFormat(inFormat?.pointee) }
}

/// Renders up to `inNumberFrames` frames of a queue in offline mode into `ioBuffer` (its
/// `mAudioDataByteSize` says how many came); fewer come when not enough is enqueued. The buffer
/// handed back through the callback during the call can be refilled and enqueued at once.
///
/// `inTimestamp` must have `kAudioTimeStampSampleTimeValid` (Apple: "mFlags must include
/// kAudioTimeStampSampleTimeValid"); its sample time is the caller's bookkeeping: frames come
/// one after another whatever it says.
@discardableResult
public func AudioQueueOfflineRender(_ inAQ: AudioQueueRef, _ inTimestamp: UnsafePointer<AudioTimeStamp>,
                                    _ ioBuffer: AudioQueueBufferRef, _ inNumberFrames: UInt32) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    guard let output = box.output else { return kAudioQueueErr_InvalidQueueType }
    guard inTimestamp.pointee.mFlags.contains(.sampleTimeValid) else { return kAudio_ParamError }
    return status { () throws(AudioQueueError) in _ = try output.renderOffline(frameCount: Int(inNumberFrames), into: ioBuffer) }
}
