import AQServerSuite
import AQTestSupport
import AudioToolbox
import Foundation
import Synchronization
import Testing

@Suite("AudioFormat, Apple spelling")
struct AudioFormatTests {
    @Test("FormatInfo completes a 16-bit stereo linear-PCM description")
    func formatInfo() {
        var format = AudioStreamBasicDescription()
        format.mFormatID = kAudioFormatLinearPCM
        format.mSampleRate = 44100
        format.mChannelsPerFrame = 2
        format.mBitsPerChannel = 16
        format.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger
        var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        #expect(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &format) == noErr)
        #expect(format.mBytesPerFrame == 4 && format.mBytesPerPacket == 4 && format.mFramesPerPacket == 1)
        #expect(format.mFormatFlags == kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked)
        format.mBitsPerChannel = 12
        format.mBytesPerFrame = 0
        format.mBytesPerPacket = 0
        #expect(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &format) == kAudioFormatUnsupportedDataFormatError)
        var tooSmall: UInt32 = 4
        #expect(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &tooSmall, &format) == kAudioFormatBadPropertySizeError)
    }

    @Test("constants have Apple's values", arguments: [
        (kAudioFormatLinearPCM, 0x6C70_636D), (kAudioQueueProperty_StreamDescription, 0x6171_6674),
        (kAudioQueueProperty_IsRunning, 0x6171_726E), (kAudioQueueProperty_CurrentLevelMeterDB, 0x6171_6D64),
        (kAudioFileAIFFType, 0x4149_4646), (kAudioFileWAVEType, 0x5741_5645), (kAudioFileCAFType, 0x6361_6666),
        (kAudioFilePropertyDataFormat, 0x6466_6D74), (kAudioFilePropertyMagicCookieData, 0x6D67_6963),
    ] as [(UInt32, UInt32)])
    func constants(value: UInt32, expected: UInt32) {
        #expect(value == expected)
    }

    @Test("error codes have Apple's values")
    func errorCodes() {
        #expect(kAudioQueueErr_InvalidBuffer == -66687)
        #expect(kAudioQueueErr_RecordUnderrun == -66668)
        #expect(kAudioQueueErr_BufferEnqueuedTwice == -66666)
        #expect(kAudioFileUnsupportedDataFormatError == 1_718_449_215)
        #expect(kAudioFilePermissionsError == 1_886_547_263)
        #expect(kAudioFileNotOpenError == -38)
    }
}

/// The callback of the time tests: records each buffer's start time, re-enqueues unless told not to.
final class TimeLog: @unchecked Sendable {
    let lock = NSLock()
    var starts: [Double] = []
    var requeue = true
}

let timeLogCallback: AudioQueueInputCallback = { userData, queue, buffer, startTime, _, _ in
    let log = Unmanaged<TimeLog>.fromOpaque(userData!).takeUnretainedValue()
    let again = log.lock.withLock { () -> Bool in
        log.starts.append(startTime.pointee.mSampleTime)
        return log.requeue
    }
    if again { AudioQueueEnqueueBuffer(queue, buffer, 0, nil) }
}

extension JackServerSuite {
    @Suite("Queue and device time, Apple spelling")
    struct AppleTimeTests {
        @Test("a start at the nearest start time records from exactly that frame; device times translate both ways; the timeline reports an underrun")
        func timesAndTimeline() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("tgen"), channelCount: 1, integerBits: 16)
            var format = AudioStreamBasicDescription(mSampleRate: 0, mFormatID: kAudioFormatLinearPCM,
                                                     mFormatFlags: kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked,
                                                     mBytesPerPacket: 2, mFramesPerPacket: 1, mBytesPerFrame: 2, mChannelsPerFrame: 1,
                                                     mBitsPerChannel: 16, mReserved: 0)
            let log = TimeLog()
            var queue: AudioQueueRef?
            #expect(AudioQueueNewInput(&format, timeLogCallback, Unmanaged.passUnretained(log).toOpaque(), nil, nil, 0, &queue) == noErr)
            let aq = try #require(queue)
            var device = generator.client.name as CFString
            #expect(AudioQueueSetProperty(aq, kAudioQueueProperty_CurrentDevice, &device, UInt32(MemoryLayout<CFString>.size)) == noErr)
            // Channel assignments: a missing channel is refused; the generator's first port is taken.
            var missing = [AudioQueueChannelAssignment(mDeviceUID: Unmanaged.passUnretained(device), mChannelNumber: 2)]
            #expect(AudioQueueSetProperty(aq, kAudioQueueProperty_ChannelAssignments, &missing,
                                          UInt32(MemoryLayout<AudioQueueChannelAssignment>.stride)) == kAudioQueueErr_InvalidPropertyValue)
            var assignments = [AudioQueueChannelAssignment(mDeviceUID: Unmanaged.passUnretained(device), mChannelNumber: 1)]
            #expect(AudioQueueSetProperty(aq, kAudioQueueProperty_ChannelAssignments, &assignments,
                                          UInt32(MemoryLayout<AudioQueueChannelAssignment>.stride)) == noErr)
            var buffers: [AudioQueueBufferRef?] = [nil, nil]
            for index in 0 ..< 2 {
                #expect(AudioQueueAllocateBuffer(aq, 960 * 2, &buffers[index]) == noErr)
                #expect(AudioQueueEnqueueBuffer(aq, buffers[index]!, 0, nil) == noErr)
            }
            #expect(AudioQueueEnqueueBuffer(aq, buffers[0]!, 0, nil) == kAudioQueueErr_BufferEnqueuedTwice)

            var now = AudioTimeStamp()
            #expect(AudioQueueDeviceGetCurrentTime(aq, &now) == noErr)
            #expect(now.mFlags == .sampleHostTimeValid && now.mSampleTime > 0)
            var translated = AudioTimeStamp()
            var request = AudioTimeStamp()
            request.mSampleTime = now.mSampleTime + 4800
            request.mFlags = .sampleTimeValid
            #expect(AudioQueueDeviceTranslateTime(aq, &request, &translated) == noErr)
            var back = AudioTimeStamp()
            var hostOnly = AudioTimeStamp()
            hostOnly.mHostTime = translated.mHostTime
            hostOnly.mFlags = .hostTimeValid
            #expect(AudioQueueDeviceTranslateTime(aq, &hostOnly, &back) == noErr)
            #expect(abs(back.mSampleTime - request.mSampleTime) <= 1)
            #expect(abs(Double(translated.mHostTime) - Double(now.mHostTime) - 100_000_000) < 5_000_000)   // 4800 frames = 100 ms

            var start = AudioTimeStamp()
            start.mSampleTime = now.mSampleTime + 9600 + 17
            start.mFlags = .sampleTimeValid
            #expect(AudioQueueDeviceGetNearestStartTime(aq, &start, 0) == noErr)
            #expect(start.mSampleTime == now.mSampleTime + 9600 + 17)   // already late enough: kept
            var timeline: AudioQueueTimelineRef?
            #expect(AudioQueueCreateTimeline(aq, &timeline) == noErr)
            let xrunsBefore = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(AudioQueueStart(aq, &start) == noErr)
            usleep(700_000)
            #expect(log.lock.withLock { log.starts.first } == start.mSampleTime)

            var position = AudioTimeStamp()
            var discontinuity = DarwinBoolean(true)
            #expect(AudioQueueGetCurrentTime(aq, timeline, &position, &discontinuity) == noErr)
            // No discontinuity yet, unless the server skipped cycles (an xrun loses frames: the
            // timeline rightly says so).
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed) - xrunsBefore
            #expect(!discontinuity.boolValue || xruns > 0, "a discontinuity with no xrun")
            #expect(position.mSampleTime > 0 && position.mSampleTime < 48000)
            // Stop re-enqueuing: frames are lost, and the timeline says so once.
            log.lock.withLock { log.requeue = false }
            usleep(300_000)
            #expect(AudioQueueGetCurrentTime(aq, timeline, &position, &discontinuity) == noErr)
            #expect(discontinuity.boolValue)
            #expect(AudioQueueGetCurrentTime(aq, timeline, &position, &discontinuity) == noErr)
            #expect(!discontinuity.boolValue)

            // Property errors, Apple's codes.
            var tiny: UInt32 = 2
            var formatOut = AudioStreamBasicDescription()
            #expect(AudioQueueGetProperty(aq, kAudioQueueProperty_StreamDescription, &formatOut, &tiny) == kAudioQueueErr_InvalidPropertySize)
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            #expect(AudioQueueGetProperty(aq, kAudioQueueProperty_StreamDescription, &formatOut, &size) == noErr)
            #expect(formatOut.mSampleRate == 48000)
            #expect(AudioQueueSetProperty(aq, kAudioQueueProperty_StreamDescription, &formatOut, size) == kAudioQueueErr_InvalidPropertyValue)
            #expect(AudioQueueGetProperty(aq, 0x7A7A_7A7A, &formatOut, &size) == kAudioQueueErr_InvalidProperty)

            #expect(AudioQueueDisposeTimeline(aq, timeline!) == noErr)
            #expect(AudioQueueStop(aq, true) == noErr)
            #expect(AudioQueueDispose(aq, true) == noErr)
            // A disposed queue answers an error; it does not crash.
            #expect(AudioQueueStart(aq, nil) != noErr)
            #expect(AudioQueueDispose(aq, true) != noErr)
        }
    }
}

/// What the IsRunning listener saw: the property's value at each call, and whether the call
/// came on the thread that started the queue.
final class RunningLog: @unchecked Sendable {
    let lock = NSLock()
    var values: [UInt32] = []
    var onStartingThread: [Bool] = []
    var startingThread: pthread_t?
    /// The JACK frame time now, and its value at each call.
    var frameClock: (() -> UInt32)?
    var frames: [UInt32] = []
}

let runningListener: AudioQueuePropertyListenerProc = { userData, queue, propertyID in
    let log = Unmanaged<RunningLog>.fromOpaque(userData!).takeUnretainedValue()
    var running: UInt32 = 9
    var size = UInt32(4)
    AudioQueueGetProperty(queue, propertyID, &running, &size)
    log.lock.withLock {
        log.values.append(running)
        log.onStartingThread.append(log.startingThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false)
        log.frames.append(log.frameClock?() ?? 0)
    }
}

extension JackServerSuite {
    @Suite("IsRunning listener")
    struct IsRunningListenerTests {
        @Test("fires when the device delivers its first frame and when the stop has completed")
        func isRunningListener() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("irgen"), channelCount: 1, integerBits: 16)
            var format = AudioStreamBasicDescription(mSampleRate: 0, mFormatID: kAudioFormatLinearPCM,
                                                     mFormatFlags: kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked,
                                                     mBytesPerPacket: 2, mFramesPerPacket: 1, mBytesPerFrame: 2, mChannelsPerFrame: 1,
                                                     mBitsPerChannel: 16, mReserved: 0)
            let timeLog = TimeLog()
            var queue: AudioQueueRef?
            #expect(AudioQueueNewInput(&format, timeLogCallback, Unmanaged.passUnretained(timeLog).toOpaque(), nil, nil, 0, &queue) == noErr)
            let aq = try #require(queue)
            var device = generator.client.name as CFString
            AudioQueueSetProperty(aq, kAudioQueueProperty_CurrentDevice, &device, UInt32(MemoryLayout<CFString>.size))
            let log = RunningLog()
            log.startingThread = pthread_self()
            let clock = generator.client
            log.frameClock = { clock.estimatedFrameTime }
            #expect(AudioQueueAddPropertyListener(aq, kAudioQueueProperty_IsRunning, runningListener, Unmanaged.passUnretained(log).toOpaque()) == noErr)
            var buffer: AudioQueueBufferRef?
            AudioQueueAllocateBuffer(aq, 4800, &buffer)
            AudioQueueEnqueueBuffer(aq, buffer!, 0, nil)
            #expect(AudioQueueStart(aq, nil) == noErr)
            usleep(300_000)
            #expect(log.lock.withLock { log.values } == [1])
            // Not before the device delivered the first frame: the call came at a JACK frame time
            // at or after the first recorded frame's (checked by frames, not by looking right
            // after Start: a busy machine may run a cycle before the test thread looks).
            let first = try #require(timeLog.lock.withLock { timeLog.starts.first })
            let calledAt = try #require(log.lock.withLock { log.frames.first })
            #expect(Int32(bitPattern: calledAt &- UInt32(truncatingIfNeeded: Int64(first))) >= 0, "called at frame \(calledAt), first frame \(first)")
            #expect(AudioQueueStop(aq, true) == noErr)
            #expect(log.lock.withLock { log.values } == [1, 0])
            #expect(log.lock.withLock { log.onStartingThread } == [false, false])
            AudioQueueDispose(aq, true)
        }
    }
}
