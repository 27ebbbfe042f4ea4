import AudioQueue
import Foundation

// Queue and device time, Apple spelling. The device timeline is JACK's frame clock; host times
// are nanoseconds on JACK's microsecond clock (CLOCK_MONOTONIC), not mach_absolute_time units.

/// A timeline remembers its queue and the discontinuity count it last reported. Timelines are
/// handles in a ``HandleTable`` like files and converters, so a disposed, foreign or made-up
/// `AudioQueueTimelineRef` is found to be one and answered with `kAudio_ParamError` instead of
/// touching freed memory (issue 9, item 9; Apple documents no code for it).
final class TimelineBox {
    static let table = HandleTable<TimelineBox>(.timelines)
    let queue: AudioQueueRef
    var seenDiscontinuities: Int
    init(queue: AudioQueueRef, seen: Int) {
        self.queue = queue
        seenDiscontinuities = seen
    }

    /// The timeline `reference` names if it belongs to `queue`.
    static func find(_ reference: AudioQueueTimelineRef?, of queue: AudioQueueRef) -> TimelineBox? {
        guard let timeline = table.find(reference), timeline.queue == queue else { return nil }
        return timeline
    }
}

@discardableResult
public func AudioQueueCreateTimeline(_ inAQ: AudioQueueRef, _ outTimeline: UnsafeMutablePointer<AudioQueueTimelineRef?>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    outTimeline.pointee = TimelineBox.table.register(TimelineBox(queue: inAQ, seen: box.engine.discontinuityTotal))
    return noErr
}

/// - Returns: `kAudio_ParamError` for a timeline that is not one of this queue's (already
///   disposed, another queue's, or never created).
@discardableResult
public func AudioQueueDisposeTimeline(_ inAQ: AudioQueueRef, _ inTimeline: AudioQueueTimelineRef) -> OSStatus {
    guard QueueBox.from(inAQ) != nil else { return invalidQueueStatus }
    guard TimelineBox.find(inTimeline, of: inAQ) != nil else { return kAudio_ParamError }
    _ = TimelineBox.table.remove(inTimeline)
    return noErr
}

/// The queue's position: `mSampleTime` in the queue's format rate, counted from the first frame
/// recorded or played since the latest start (0 before it; a playback position includes the
/// silence of underruns). With a timeline, `outTimelineDiscontinuity` says whether the timeline
/// broke (overrun, xrun, no buffer enqueued, underrun) since the previous call.
@discardableResult
public func AudioQueueGetCurrentTime(_ inAQ: AudioQueueRef, _ inTimeline: AudioQueueTimelineRef?,
                                     _ outTimeStamp: UnsafeMutablePointer<AudioTimeStamp>?,
                                     _ outTimelineDiscontinuity: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let queue = box.engine!
    var timeline: TimelineBox?
    if let inTimeline {
        guard let found = TimelineBox.find(inTimeline, of: inAQ) else { return kAudio_ParamError }
        timeline = found
    }
    let (_, host) = queue.deviceCurrentTime()
    if let outTimeStamp {
        var stamp = AudioTimeStamp()
        stamp.mSampleTime = queue.currentSampleTime
        stamp.mHostTime = host
        stamp.mFlags = .sampleHostTimeValid
        outTimeStamp.pointee = stamp
    }
    if let timeline, let outTimelineDiscontinuity {
        let count = queue.discontinuityTotal
        outTimelineDiscontinuity.pointee = DarwinBoolean(count != timeline.seenDiscontinuities)
        timeline.seenDiscontinuities = count
    }
    return noErr
}

/// The device's current sample (JACK frame) and host time.
@discardableResult
public func AudioQueueDeviceGetCurrentTime(_ inAQ: AudioQueueRef, _ outTimeStamp: UnsafeMutablePointer<AudioTimeStamp>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let (frame, host) = box.engine.deviceCurrentTime()
    var stamp = AudioTimeStamp()
    stamp.mSampleTime = frame
    stamp.mHostTime = host
    stamp.mFlags = .sampleHostTimeValid
    outTimeStamp.pointee = stamp
    return noErr
}

/// Fills in the host time of a sample time, or the sample time of a host time.
@discardableResult
public func AudioQueueDeviceTranslateTime(_ inAQ: AudioQueueRef, _ inTime: UnsafePointer<AudioTimeStamp>,
                                          _ outTime: UnsafeMutablePointer<AudioTimeStamp>) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let input = inTime.pointee
    var stamp = AudioTimeStamp()
    if input.mFlags.contains(.sampleTimeValid) {
        stamp.mSampleTime = input.mSampleTime
        stamp.mHostTime = box.engine.hostNanoseconds(atDeviceFrame: input.mSampleTime)
    } else if input.mFlags.contains(.hostTimeValid) {
        stamp.mHostTime = input.mHostTime
        stamp.mSampleTime = box.engine.deviceFrame(atHostNanoseconds: input.mHostTime)
    } else {
        return kAudio_ParamError
    }
    stamp.mFlags = .sampleHostTimeValid
    outTime.pointee = stamp
    return noErr
}

/// The earliest device time a start can be scheduled at.
@discardableResult
public func AudioQueueDeviceGetNearestStartTime(_ inAQ: AudioQueueRef, _ ioRequestedStartTime: UnsafeMutablePointer<AudioTimeStamp>,
                                                _ inFlags: UInt32) -> OSStatus {
    guard let box = QueueBox.from(inAQ) else { return invalidQueueStatus }
    let nearest = Double(box.engine.nearestStartFrame())
    var stamp = ioRequestedStartTime.pointee
    if !stamp.mFlags.contains(.sampleTimeValid) || stamp.mSampleTime < nearest { stamp.mSampleTime = nearest }
    stamp.mHostTime = box.engine.hostNanoseconds(atDeviceFrame: stamp.mSampleTime)
    stamp.mFlags = .sampleHostTimeValid
    ioRequestedStartTime.pointee = stamp
    return noErr
}

/// Apple's `Boolean` as Swift sees it.
public struct DarwinBoolean: ExpressibleByBooleanLiteral, Equatable, Sendable {
    public var boolValue: Bool
    public init(_ value: Bool) { boolValue = value }
    public init(booleanLiteral value: Bool) { boolValue = value }
}
