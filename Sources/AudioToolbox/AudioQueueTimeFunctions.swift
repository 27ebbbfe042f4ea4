import AudioQueue
import Foundation

// Queue and device time, Apple spelling. The device timeline is JACK's frame clock; host times
// are nanoseconds on JACK's microsecond clock (CLOCK_MONOTONIC), not mach_absolute_time units.

/// A timeline remembers the discontinuity count it last reported.
final class TimelineBox {
    var seenDiscontinuities: Int
    init(seen: Int) { seenDiscontinuities = seen }
}

public func AudioQueueCreateTimeline(_ inAQ: AudioQueueRef, _ outTimeline: UnsafeMutablePointer<AudioQueueTimelineRef?>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let timeline = TimelineBox(seen: box.engine.discontinuityTotal)
    outTimeline.pointee = OpaquePointer(Unmanaged.passRetained(timeline).toOpaque())
    return noErr
}

public func AudioQueueDisposeTimeline(_ inAQ: AudioQueueRef, _ inTimeline: AudioQueueTimelineRef) -> OSStatus {
    Unmanaged<TimelineBox>.fromOpaque(UnsafeRawPointer(inTimeline)).release()
    return noErr
}

/// The queue's position: `mSampleTime` in the queue's format rate, counted from the first frame
/// recorded or played since the latest start (0 before it; a playback position includes the
/// silence of underruns). With a timeline, `outTimelineDiscontinuity` says whether the timeline
/// broke (overrun, xrun, no buffer enqueued, underrun) since the previous call.
public func AudioQueueGetCurrentTime(_ inAQ: AudioQueueRef, _ inTimeline: AudioQueueTimelineRef?,
                                     _ outTimeStamp: UnsafeMutablePointer<AudioTimeStamp>?,
                                     _ outTimelineDiscontinuity: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let queue = box.engine!
    let (_, host) = queue.deviceCurrentTime()
    if let outTimeStamp {
        var stamp = AudioTimeStamp()
        stamp.mSampleTime = queue.currentSampleTime
        stamp.mHostTime = host
        stamp.mFlags = kAudioTimeStampSampleHostTimeValid
        outTimeStamp.pointee = stamp
    }
    if let inTimeline, let outTimelineDiscontinuity {
        let timeline = Unmanaged<TimelineBox>.fromOpaque(UnsafeRawPointer(inTimeline)).takeUnretainedValue()
        let count = queue.discontinuityTotal
        outTimelineDiscontinuity.pointee = DarwinBoolean(count != timeline.seenDiscontinuities)
        timeline.seenDiscontinuities = count
    }
    return noErr
}

/// The device's current sample (JACK frame) and host time.
public func AudioQueueDeviceGetCurrentTime(_ inAQ: AudioQueueRef, _ outTimeStamp: UnsafeMutablePointer<AudioTimeStamp>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let (frame, host) = box.engine.deviceCurrentTime()
    var stamp = AudioTimeStamp()
    stamp.mSampleTime = frame
    stamp.mHostTime = host
    stamp.mFlags = kAudioTimeStampSampleHostTimeValid
    outTimeStamp.pointee = stamp
    return noErr
}

/// Fills in the host time of a sample time, or the sample time of a host time.
public func AudioQueueDeviceTranslateTime(_ inAQ: AudioQueueRef, _ inTime: UnsafePointer<AudioTimeStamp>,
                                          _ outTime: UnsafeMutablePointer<AudioTimeStamp>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let input = inTime.pointee
    var stamp = AudioTimeStamp()
    if input.mFlags & kAudioTimeStampSampleTimeValid != 0 {
        stamp.mSampleTime = input.mSampleTime
        stamp.mHostTime = box.engine.hostNanoseconds(atDeviceFrame: input.mSampleTime)
    } else if input.mFlags & kAudioTimeStampHostTimeValid != 0 {
        stamp.mHostTime = input.mHostTime
        stamp.mSampleTime = box.engine.deviceFrame(atHostNanoseconds: input.mHostTime)
    } else {
        return kAudio_ParamError
    }
    stamp.mFlags = kAudioTimeStampSampleHostTimeValid
    outTime.pointee = stamp
    return noErr
}

/// The earliest device time a start can be scheduled at.
public func AudioQueueDeviceGetNearestStartTime(_ inAQ: AudioQueueRef, _ ioRequestedStartTime: UnsafeMutablePointer<AudioTimeStamp>,
                                                _ inFlags: UInt32) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let nearest = Double(box.engine.nearestStartFrame())
    var stamp = ioRequestedStartTime.pointee
    if stamp.mFlags & kAudioTimeStampSampleTimeValid == 0 || stamp.mSampleTime < nearest { stamp.mSampleTime = nearest }
    stamp.mHostTime = box.engine.hostNanoseconds(atDeviceFrame: stamp.mSampleTime)
    stamp.mFlags = kAudioTimeStampSampleHostTimeValid
    ioRequestedStartTime.pointee = stamp
    return noErr
}

/// Apple's `Boolean` as Swift sees it.
public struct DarwinBoolean: ExpressibleByBooleanLiteral, Equatable, Sendable {
    public var boolValue: Bool
    public init(_ value: Bool) { boolValue = value }
    public init(booleanLiteral value: Bool) { boolValue = value }
}
