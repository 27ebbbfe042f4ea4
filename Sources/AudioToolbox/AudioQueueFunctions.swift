import AQCodecs
import AQCore
import AQMedia
import AudioQueue
import Foundation

// Audio Queue Services, Apple spelling: thin functions over ``AudioInputQueue`` that return
// `OSStatus`, with Apple's Swift-imported signatures.

/// What an `AudioQueueRef` stands for: the engine and the C callback it drives.
///
/// References are serial numbers, never reused, looked up in a table: a call with a disposed
/// or unknown queue answers an error instead of touching freed memory.
final class QueueBox: @unchecked Sendable {
    /// The engine: an ``AudioInputQueue`` or an ``AudioOutputQueue``.
    var engine: (any AudioQueueEngine)!
    var input: AudioInputQueue? { engine as? AudioInputQueue }
    var output: AudioOutputQueue? { engine as? AudioOutputQueue }
    /// `kAudioQueueProperty_MagicCookie`: the recorded stream's, or the one set for playback.
    var magicCookie: [UInt8] { input?.magicCookie ?? output?.magicCookie ?? [] }
    let userData: UnsafeMutableRawPointer?
    let runLoop: CFRunLoop?
    /// The run-loop mode its callbacks run in (`kCFRunLoopCommonModes` when nil).
    let runLoopMode: String?
    /// AudioQueueNew...WithDispatchQueue: the queue its blocks are called on.
    let dispatchQueue: DispatchQueue?
    let reference: AudioQueueRef
    /// The queue's processing tap (AudioQueueProcessingTapNew): at most one.
    var tap: ProcessingTap?
    /// Time-pitch as Apple's properties set it (`EnableTimePitch`, `TimePitchAlgorithm`,
    /// `TimePitchBypass`): the output queue plays with the algorithm when enabled and not bypassed.
    var timePitchEnabled = false {
        didSet { applyTimePitch() }
    }
    var timePitchAlgorithm = kAudioQueueTimePitchAlgorithm_Spectral {
        didSet { applyTimePitch() }
    }
    var timePitchBypass = false {
        didSet { applyTimePitch() }
    }
    /// `kAudioQueueProperty_ChannelLayout` as set (its tag), nil until set: the default layout
    /// for the channel count is reported. The queue's channels stay in order (no remapping).
    var channelLayoutTag: UInt32?

    private func applyTimePitch() {
        let algorithm: TimePitchAlgorithm = switch timePitchAlgorithm {
        case kAudioQueueTimePitchAlgorithm_Varispeed: .varispeed
        case kAudioQueueTimePitchAlgorithm_Spectral: .spectral
        default: .timeDomain
        }
        output?.timePitchAlgorithm = timePitchEnabled && !timePitchBypass ? algorithm : nil
    }
    private let lock = NSLock()
    private var listeners: [(AudioQueuePropertyID, AudioQueuePropertyListenerProc, UnsafeMutableRawPointer?)] = []

    private static let table = HandleTable<QueueBox>(.queues)

    init(userData: UnsafeMutableRawPointer?, runLoop: CFRunLoop?, runLoopMode: CFString? = nil, dispatchQueue: DispatchQueue? = nil) {
        self.userData = userData
        self.runLoop = runLoop
        self.runLoopMode = runLoopMode.map { $0 as String }
        self.dispatchQueue = dispatchQueue
        reference = Self.table.reserve()
    }

    func register() { Self.table.insert(self, at: reference) }
    func unregister() { _ = Self.table.remove(reference) }

    static func from(_ reference: AudioQueueRef) -> QueueBox? { table.find(reference) }

    /// Whether the queue has been disposed: callbacks posted to a run loop before then are dropped.
    var isDisposed: Bool { Self.from(reference) == nil }

    func addListener(_ id: AudioQueuePropertyID, _ proc: @escaping AudioQueuePropertyListenerProc, _ data: UnsafeMutableRawPointer?) {
        lock.withLock { listeners.append((id, proc, data)) }
    }

    func removeListener(_ id: AudioQueuePropertyID, _ data: UnsafeMutableRawPointer?) -> Bool {
        lock.withLock {
            guard let index = listeners.firstIndex(where: { $0.0 == id && $0.2 == data }) else { return false }
            listeners.remove(at: index)
            return true
        }
    }

    /// Runs a callback now (no run loop given) or posts it to the queue's run loop, where it is
    /// dropped if the queue has been disposed by the time the loop runs.
    ///
    /// A playback queue rendering offline calls back at once, inside `AudioQueueOfflineRender`:
    /// Apple's AQOfflineRenderTest passes its own run loop and runs it only after the render
    /// loop, whose calls are fed by the callback's enqueues.
    func deliver(_ callback: @escaping () -> Void) {
        guard output?.offlineRenderFormat == nil else {
            callback()
            return
        }
        if let dispatchQueue {
            // One callback after the other, in order, on the caller's queue (a serial queue
            // keeps them serial; a concurrent one is the caller's choice, as on Apple's).
            nonisolated(unsafe) let call = callback
            dispatchQueue.async { [self] in
                guard !isDisposed else { return }
                call()
            }
            return
        }
        guard let runLoop else {
            callback()
            return
        }
        runLoop.perform(mode: runLoopMode) { [self] in
            guard !isDisposed else { return }
            callback()
        }
    }

    func notify(_ id: AudioQueuePropertyID) {
        let matching = lock.withLock { listeners.filter { $0.0 == id } }
        for (_, proc, data) in matching { proc(data, reference, id) }
    }
}

/// `kAudioQueueErr_InvalidBuffer`-style answer for a queue reference that is unknown or disposed.
let invalidQueueStatus: OSStatus = kAudio_ParamError

/// Runs `body`, turning the error it throws (any domain's) into its `OSStatus`.
func status<Failure: AudioStatusCarrying>(_ body: () throws(Failure) -> Void) -> OSStatus {
    do {
        try body()
        return noErr
    } catch {
        return error.status
    }
}

/// Creates a recording queue. The callback runs on the queue's internal thread, or, when
/// `inCallbackRunLoop` is given, on the thread that runs that run loop
/// (`CFRunLoopRunInMode`). The queue is a JACK client named `aqjack` with ports `in_1 ... in_N`
/// on the server in `$JACK_DEFAULT_SERVER` (else `default`), fed by the physical ports; the
/// environment may choose all three (`AQJACK_SERVER`, `AQJACK_CLIENT_NAME`, `AQJACK_CONNECT`:
/// ``DeviceEnvironment``); see also `kAudioQueueProperty_CurrentDevice`.
@discardableResult
public func AudioQueueNewInput(_ inFormat: UnsafePointer<AudioStreamBasicDescription>,
                               _ inCallbackProc: @escaping AudioQueueInputCallback,
                               _ inUserData: UnsafeMutableRawPointer?,
                               _ inCallbackRunLoop: CFRunLoop?,
                               _ inCallbackRunLoopMode: CFString?,
                               _ inFlags: UInt32,
                               _ outAQ: UnsafeMutablePointer<AudioQueueRef?>) -> OSStatus {
    guard inFlags == 0 else { return kAudio_ParamError }
    return newInputQueue(QueueBox(userData: inUserData, runLoop: inCallbackRunLoop, runLoopMode: inCallbackRunLoopMode), inFormat, outAQ) { box, buffer, time, packets, descriptions in
        inCallbackProc(box.userData, box.reference, buffer, time, packets, descriptions)
    }
}

/// The block a recording queue made by ``AudioQueueNewInputWithDispatchQueue(_:_:_:_:_:)`` calls.
public typealias AudioQueueInputCallbackBlock = (AudioQueueRef, AudioQueueBufferRef, UnsafePointer<AudioTimeStamp>, UInt32,
                                                 UnsafePointer<AudioStreamPacketDescription>?) -> Void

/// `AudioQueueNewInput` with a block called on `inCallbackDispatchQueue` (macOS 10.6, iOS 10).
@discardableResult
public func AudioQueueNewInputWithDispatchQueue(_ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
                                                _ inFormat: UnsafePointer<AudioStreamBasicDescription>,
                                                _ inFlags: UInt32,
                                                _ inCallbackDispatchQueue: DispatchQueue,
                                                _ inCallbackBlock: @escaping AudioQueueInputCallbackBlock) -> OSStatus {
    guard inFlags == 0 else { return kAudio_ParamError }
    return newInputQueue(QueueBox(userData: nil, runLoop: nil, dispatchQueue: inCallbackDispatchQueue), inFormat, outAQ) { box, buffer, time, packets, descriptions in
        inCallbackBlock(box.reference, buffer, time, packets, descriptions)
    }
}

/// What both input-queue constructors share: the queue, its callback's arguments as Apple
/// computes them, the IsRunning listeners.
private func newInputQueue(_ box: QueueBox, _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ outAQ: UnsafeMutablePointer<AudioQueueRef?>,
                           call: @escaping (QueueBox, AudioQueueBufferRef, UnsafePointer<AudioTimeStamp>, UInt32, UnsafePointer<AudioStreamPacketDescription>?) -> Void) -> OSStatus {
    status { () throws(AudioQueueError) in
        let environment = DeviceEnvironment.current()
        let engine = try AudioInputQueue(format: inFormat.pointee, driver: environment.openDriver(format: inFormat.pointee, purpose: .recording)) { [unowned box] queue, buffer, startTime in
            // For linear PCM, macOS passes the buffer's packet count as inNumberPacketDescriptions
            // (with no descriptions); seed 003's callback writes exactly that many packets. For
            // AAC, the buffer's packet descriptions (seed 000's callback writes them to the file).
            let compressed = queue.format.mFormatID != kAudioFormatLinearPCM
            let packets = compressed ? buffer.pointee.mPacketDescriptionCount
                                     : UInt32(Int(buffer.pointee.mAudioDataByteSize) / queue.layout.bytesPerFrame)
            let descriptions = compressed ? UnsafePointer(buffer.pointee.mPacketDescriptions) : nil
            box.deliver { [box] in
                var time = startTime
                call(box, buffer, &time, packets, descriptions)
            }
        }
        box.engine = engine
        if let peers = try environment.peers(for: engine, on: engine.driver, queueDirection: .input) { engine.channelSources = peers }
        box.engine.onRunningChange = { [unowned box] _ in box.notify(kAudioQueueProperty_IsRunning) }
        box.register()
        outAQ.pointee = box.reference
    }
}

@discardableResult
public func AudioQueueAllocateBuffer(_ inAQ: AudioQueueRef, _ inBufferByteSize: UInt32,
                                     _ outBuffer: UnsafeMutablePointer<AudioQueueBufferRef?>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    return status { () throws(AudioQueueError) in
        outBuffer.pointee = try box.engine.allocateBuffer(byteCapacity: Int(inBufferByteSize), packetDescriptionCapacity: 0)
    }
}

@discardableResult
public func AudioQueueAllocateBufferWithPacketDescriptions(_ inAQ: AudioQueueRef, _ inBufferByteSize: UInt32,
                                                           _ inNumberPacketDescriptions: UInt32,
                                                           _ outBuffer: UnsafeMutablePointer<AudioQueueBufferRef?>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    return status { () throws(AudioQueueError) in
        outBuffer.pointee = try box.engine.allocateBuffer(byteCapacity: Int(inBufferByteSize),
                                                         packetDescriptionCapacity: Int(inNumberPacketDescriptions))
    }
}

@discardableResult
public func AudioQueueFreeBuffer(_ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    return status { () throws(AudioQueueError) in try box.engine.freeBuffer(inBuffer) }
}

/// Input queues take no packet descriptions (pass 0 and nil), as on Apple's platforms.
@discardableResult
public func AudioQueueEnqueueBuffer(_ inAQ: AudioQueueRef, _ inBuffer: AudioQueueBufferRef, _ inNumPacketDescs: UInt32,
                                    _ inPacketDescs: UnsafePointer<AudioStreamPacketDescription>?) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    return status { () throws(AudioQueueError) in
        if let output = box.output {
            // No descriptions given: the buffer's own (AudioQueueAllocateBufferWithPacketDescriptions,
            // its mPacketDescriptionCount set), as Apple's queue takes them.
            let descriptions: [AudioStreamPacketDescription]
            if let inPacketDescs {
                descriptions = Array(UnsafeBufferPointer(start: inPacketDescs, count: Int(inNumPacketDescs)))
            } else if let own = inBuffer.pointee.mPacketDescriptions {
                let count = min(inBuffer.pointee.mPacketDescriptionCount, inBuffer.pointee.mPacketDescriptionCapacity)
                descriptions = Array(UnsafeBufferPointer(start: own, count: Int(count)))
            } else {
                descriptions = []
            }
            try output.enqueue(inBuffer, packetDescriptions: descriptions)
        } else {
            try box.input!.enqueue(inBuffer)
        }
    }
}

/// Starts the queue; a start time's `mSampleTime` is a JACK frame on the device timeline.
@discardableResult
public func AudioQueueStart(_ inAQ: AudioQueueRef, _ inStartTime: UnsafePointer<AudioTimeStamp>?) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    var startFrame: UInt64?
    if let time = inStartTime?.pointee, time.mFlags.contains(.sampleTimeValid) {
        // A device frame must be finite and within latestStartFrame (2^53); 1e30 or NaN is a
        // bad parameter, never a trap (issue 9, item 8).
        guard time.mSampleTime.isFinite, time.mSampleTime <= Double(latestStartFrame) else { return kAudio_ParamError }
        if time.mSampleTime >= 0 { startFrame = UInt64(time.mSampleTime) }
    }
    // IsRunning listeners hear about it when the device really delivers the first frame.
    return status { () throws(AudioQueueError) in try box.engine.start(atFrame: startFrame) }
}

@discardableResult
public func AudioQueueStop(_ inAQ: AudioQueueRef, _ inImmediate: Bool) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    box.engine.stop(immediate: inImmediate)   // IsRunning listeners hear about it once stopped
    return noErr
}

@discardableResult
public func AudioQueuePause(_ inAQ: AudioQueueRef) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    box.engine.pause()
    return noErr
}

@discardableResult
public func AudioQueueFlush(_ inAQ: AudioQueueRef) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    box.engine.flush()
    return noErr
}

@discardableResult
public func AudioQueueReset(_ inAQ: AudioQueueRef) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    box.engine.reset()
    return noErr
}

/// Disposes of the queue and its buffers. With `inImmediate` false the disposal happens on
/// another thread after the call returns (Apple: "asynchronously").
@discardableResult
public func AudioQueueDispose(_ inAQ: AudioQueueRef, _ inImmediate: Bool) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    box.unregister()
    // Its tap goes with it (Apple: disposing of a queue disposes of its tap).
    box.tap?.unregister()
    if inImmediate {
        box.engine.dispose()
    } else {
        // Asynchronous: the frames captured so far still reach the callback, then the queue goes.
        Thread.detachNewThread {
            box.engine.stop(immediate: true)
            box.engine.dispose()
        }
    }
    return noErr
}

@discardableResult
public func AudioQueueAddPropertyListener(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID,
                                          _ inProc: @escaping AudioQueuePropertyListenerProc,
                                          _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    guard inID == kAudioQueueProperty_IsRunning else { return kAudioQueueErr_InvalidProperty }
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    box.addListener(inID, inProc, inUserData)
    return noErr
}

@discardableResult
public func AudioQueueRemovePropertyListener(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID,
                                             _ inProc: @escaping AudioQueuePropertyListenerProc,
                                             _ inUserData: UnsafeMutableRawPointer?) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    return box.removeListener(inID, inUserData) ? noErr : kAudioQueueErr_InvalidProperty
}

// MARK: Properties

/// The size in bytes of a property's value now.
@discardableResult
public func AudioQueueGetPropertySize(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID,
                                      _ outDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    guard let box = QueueBox.from(inAQ), let queue = box.engine else { return invalidQueueStatus }
    switch inID {
    case kAudioQueueProperty_StreamDescription: outDataSize.pointee = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    case kAudioQueueProperty_IsRunning, kAudioQueueDeviceProperty_NumberChannels, kAudioQueueProperty_EnableLevelMetering,
         kAudioQueueProperty_MaximumOutputPacketSize, kAudioConverterPropertyMaximumOutputPacketSize:
        outDataSize.pointee = 4
    case kAudioQueueProperty_EnableTimePitch, kAudioQueueProperty_TimePitchAlgorithm, kAudioQueueProperty_TimePitchBypass:
        guard box.output != nil else { return kAudioQueueErr_InvalidProperty }
        outDataSize.pointee = 4
    case kAudioQueueProperty_ChannelLayout: outDataSize.pointee = UInt32(MemoryLayout<AudioChannelLayout>.size)
    case kAudioQueueDeviceProperty_SampleRate: outDataSize.pointee = 8
    case kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB:
        outDataSize.pointee = UInt32(queue.layout.channelCount * MemoryLayout<AudioQueueLevelMeterState>.size)
    case kAudioQueueProperty_MagicCookie: outDataSize.pointee = UInt32(box.magicCookie.count)   // linear PCM has none
    case kAudioQueueProperty_CurrentDevice: outDataSize.pointee = UInt32(MemoryLayout<CFString>.size)
    case kAudioQueueProperty_ChannelAssignments:
        outDataSize.pointee = UInt32(queue.layout.channelCount * MemoryLayout<AudioQueueChannelAssignment>.stride)
    case kAudioConverterCurrentInputStreamDescription, kAudioConverterCurrentOutputStreamDescription:
        outDataSize.pointee = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    case kAudioConverterCompressionMagicCookie, kAudioConverterDecompressionMagicCookie:
        outDataSize.pointee = UInt32(box.magicCookie.count)
    default: return kAudioQueueErr_InvalidProperty
    }
    return noErr
}

/// The stream descriptions of the queue's converter, as Apple's queue answers
/// `kAudioConverterCurrentInputStreamDescription` / `...OutputStreamDescription` asked of the
/// queue (the Learning Core Audio recorder reads its complete AAC format this way): a recording
/// queue converts float PCM into its format, a playback queue its format into float PCM; a
/// linear-PCM queue's converter has its format on both sides.
private func converterFormats(_ box: QueueBox) -> (input: AudioStreamBasicDescription, output: AudioStreamBasicDescription) {
    let format = box.engine.format
    guard format.mFormatID != kAudioFormatLinearPCM else { return (format, format) }
    let pcm = CompressedFormatValues.floatPCM(sampleRate: format.mSampleRate, channelCount: Int(format.mChannelsPerFrame))
    return box.input != nil ? (pcm, format) : (format, pcm)
}

@discardableResult
public func AudioQueueGetProperty(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID, _ outData: UnsafeMutableRawPointer,
                                  _ ioDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    guard let box = QueueBox.from(inAQ), let queue = box.engine else { return invalidQueueStatus }
    func put<T>(_ value: T) -> OSStatus { storeProperty(value, into: outData, size: ioDataSize, tooSmall: kAudioQueueErr_InvalidPropertySize) }
    switch inID {
    case kAudioQueueProperty_StreamDescription: return put(queue.format)
    case kAudioQueueProperty_IsRunning: return put(UInt32(queue.isRunning ? 1 : 0))
    case kAudioQueueDeviceProperty_SampleRate: return put(Double(queue.driver.sampleRate))
    case kAudioQueueDeviceProperty_NumberChannels: return put(UInt32(queue.layout.channelCount))
    case kAudioQueueProperty_EnableLevelMetering:
        return put(UInt32(box.input?.isLevelMeteringEnabled ?? box.output?.isLevelMeteringEnabled ?? false ? 1 : 0))
    case kAudioQueueProperty_MaximumOutputPacketSize, kAudioConverterPropertyMaximumOutputPacketSize:
        // The converter's question asked of the queue (the Learning Core Audio recorder sizes
        // its buffers so): the same answer.
        return put(UInt32(box.input?.maximumOutputPacketSize ?? queue.layout.bytesPerFrame))
    case kAudioQueueProperty_CurrentDevice:
        return storePropertyObject(queue.currentDevice as CFString, into: outData, size: ioDataSize, tooSmall: kAudioQueueErr_InvalidPropertySize)
    case kAudioQueueProperty_MagicCookie, kAudioConverterCompressionMagicCookie, kAudioConverterDecompressionMagicCookie:
        // The queue's cookie is its converter's (Apple's queue forwards converter properties).
        return storePropertyBytes(box.magicCookie, into: outData, size: ioDataSize, mustFit: true, tooSmall: kAudioQueueErr_InvalidPropertySize)
    case kAudioQueueProperty_ChannelLayout:
        var layout = defaultChannelLayout(queue.layout.channelCount)
        if let tag = box.channelLayoutTag { layout.mChannelLayoutTag = tag }
        return put(layout)
    case kAudioQueueProperty_EnableTimePitch, kAudioQueueProperty_TimePitchAlgorithm, kAudioQueueProperty_TimePitchBypass:
        guard box.output != nil else { return kAudioQueueErr_InvalidProperty }
        return put(inID == kAudioQueueProperty_EnableTimePitch ? UInt32(box.timePitchEnabled ? 1 : 0)
                   : inID == kAudioQueueProperty_TimePitchBypass ? UInt32(box.timePitchBypass ? 1 : 0) : box.timePitchAlgorithm)
    case kAudioConverterCurrentInputStreamDescription: return put(converterFormats(box).input)
    case kAudioConverterCurrentOutputStreamDescription: return put(converterFormats(box).output)
    case kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB:
        // As many channels as fit, like Apple's.
        guard let levels = box.input?.currentLevels ?? box.output?.currentLevels else { return kAudioQueueErr_InvalidProperty }
        let count = min(levels.count, Int(ioDataSize.pointee) / MemoryLayout<AudioQueueLevelMeterState>.size)
        let states = outData.bindMemory(to: AudioQueueLevelMeterState.self, capacity: count)
        for index in 0 ..< count {
            var state = levels[index]
            if inID == kAudioQueueProperty_CurrentLevelMeterDB {
                state.mAveragePower = decibels(state.mAveragePower)
                state.mPeakPower = decibels(state.mPeakPower)
            }
            states[index] = state
        }
        ioDataSize.pointee = UInt32(count * MemoryLayout<AudioQueueLevelMeterState>.size)
        return noErr
    default:
        return kAudioQueueErr_InvalidProperty
    }
}

/// Decibels relative to full scale; silence is -120 dB.
func decibels(_ linear: Float) -> Float { linear > 1e-6 ? 20 * log10(linear) : -120 }

@discardableResult
public func AudioQueueSetProperty(_ inAQ: AudioQueueRef, _ inID: AudioQueuePropertyID, _ inData: UnsafeRawPointer,
                                  _ inDataSize: UInt32) -> OSStatus {
    guard let box = QueueBox.from(inAQ), let queue = box.engine else { return invalidQueueStatus }
    switch inID {
    case kAudioQueueProperty_EnableLevelMetering:
        guard inDataSize >= 4 else { return kAudioQueueErr_InvalidPropertySize }
        let enabled = inData.loadUnaligned(as: UInt32.self) != 0
        if let input = box.input { input.isLevelMeteringEnabled = enabled } else { box.output?.isLevelMeteringEnabled = enabled }
        return noErr
    case kAudioQueueProperty_CurrentDevice:
        guard Int(inDataSize) >= MemoryLayout<CFString>.size else { return kAudioQueueErr_InvalidPropertySize }
        queue.currentDevice = inData.load(as: CFString.self) as String
        return noErr
    case kAudioQueueProperty_MagicCookie:
        // Playback of AAC: the decoder's config (seed 001 copies the file's cookie here).
        // Linear PCM needs none; accepted and ignored, as is a cookie set on a recording queue.
        guard let output = box.output else { return noErr }
        let cookie = Array(UnsafeRawBufferPointer(start: inData, count: Int(inDataSize)))
        return status { () throws(AudioQueueError) in try output.setMagicCookie(cookie) }
    case kAudioQueueProperty_ChannelAssignments:
        let stride = MemoryLayout<AudioQueueChannelAssignment>.stride
        let count = Int(inDataSize) / stride
        guard count == queue.layout.channelCount, Int(inDataSize) % stride == 0 else { return kAudioQueueErr_InvalidPropertySize }
        let assignments = UnsafeBufferPointer(start: inData.assumingMemoryBound(to: AudioQueueChannelAssignment.self), count: count)
        return status { () throws(AudioQueueError) in
            try queue.assignChannels(assignments.map { ($0.mDeviceUID.takeUnretainedValue() as String, Int($0.mChannelNumber)) })
        }
    case kAudioQueueProperty_ChannelLayout:
        // The fixed part (tag, bitmap, description count); the layout must have the queue's
        // channel count. Accepted and reported back; channels are not remapped.
        guard inDataSize >= 12 else { return kAudioQueueErr_InvalidPropertySize }
        var layout = AudioChannelLayout()
        layout.mChannelLayoutTag = inData.loadUnaligned(as: UInt32.self)
        layout.mNumberChannelDescriptions = inData.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        if let count = channelCount(of: layout), count != queue.layout.channelCount { return kAudioQueueErr_InvalidPropertyValue }
        box.channelLayoutTag = layout.mChannelLayoutTag
        return noErr
    case kAudioQueueProperty_EnableTimePitch, kAudioQueueProperty_TimePitchAlgorithm, kAudioQueueProperty_TimePitchBypass:
        guard inDataSize >= 4 else { return kAudioQueueErr_InvalidPropertySize }
        guard box.output != nil else { return kAudioQueueErr_InvalidProperty }
        let value = inData.loadUnaligned(as: UInt32.self)
        switch inID {
        case kAudioQueueProperty_EnableTimePitch: box.timePitchEnabled = value != 0
        case kAudioQueueProperty_TimePitchBypass: box.timePitchBypass = value != 0
        default:
            guard [kAudioQueueTimePitchAlgorithm_Spectral, kAudioQueueTimePitchAlgorithm_TimeDomain, kAudioQueueTimePitchAlgorithm_Varispeed,
                   kAudioQueueTimePitchAlgorithm_LowQualityZeroLatency].contains(value) else { return kAudioQueueErr_InvalidPropertyValue }
            box.timePitchAlgorithm = value
        }
        return noErr
    case kAudioQueueProperty_StreamDescription, kAudioQueueProperty_IsRunning, kAudioQueueDeviceProperty_SampleRate,
         kAudioQueueDeviceProperty_NumberChannels, kAudioQueueProperty_CurrentLevelMeter, kAudioQueueProperty_CurrentLevelMeterDB,
         kAudioQueueProperty_MaximumOutputPacketSize:
        return kAudioQueueErr_InvalidPropertyValue   // read-only
    default:
        return kAudioQueueErr_InvalidProperty
    }
}
