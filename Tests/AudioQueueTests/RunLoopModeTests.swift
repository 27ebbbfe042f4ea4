import AQServerSuite
import AudioToolbox
import Foundation
import Testing

/// Counts a playback queue's callbacks and gives each buffer back, full of silence.
private final class CallbackCounter {
    var count = 0
}

private let countingOutputCallback: AudioQueueOutputCallback = { userData, queue, buffer in
    let counter = Unmanaged<CallbackCounter>.fromOpaque(userData!).takeUnretainedValue()
    counter.count += 1
    memset(buffer.pointee.mAudioData, 0, Int(buffer.pointee.mAudioDataBytesCapacity))
    buffer.pointee.mAudioDataByteSize = buffer.pointee.mAudioDataBytesCapacity
    AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
}

extension JackServerSuite {
    /// Issue 36: a queue's callbacks come through its run loop however the thread runs it
    /// (CoreFoundation's calls or Foundation's `RunLoop`), in the mode the queue was made for.
    @Suite("Run-loop modes of a queue's callbacks")
    struct RunLoopModeTests {
        /// Runs Foundation's run loop of this thread in `mode` for `seconds` (it returns at once
        /// while it has nothing to run: then waits a little and runs it again).
        static func runFoundation(_ mode: RunLoop.Mode, seconds: Double) {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if !RunLoop.current.run(mode: mode, before: end) { usleep(10_000) }
            }
        }

        @Test("a playback queue made for a mode of its own calls back only while its thread runs that mode: none under CFRunLoopRunInMode's or Foundation's default mode, every waiting one under CFRunLoopRunInMode(its mode); one made for the common modes calls back under Foundation's RunLoop.run(mode: .default) alone")
        func modes() throws {
            for (mode, runsInDefault) in [("aqjack.test.mode" as CFString, false), (kCFRunLoopCommonModes!, true)] {
                var format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                                         mFormatFlags: kLinearPCMFormatFlagIsFloat | kLinearPCMFormatFlagIsPacked,
                                                         mBytesPerPacket: 8, mFramesPerPacket: 1, mBytesPerFrame: 8, mChannelsPerFrame: 2,
                                                         mBitsPerChannel: 32, mReserved: 0)
                let counter = CallbackCounter()
                var made: AudioQueueRef?
                #expect(AudioQueueNewOutput(&format, countingOutputCallback, Unmanaged.passUnretained(counter).toOpaque(),
                                            CFRunLoopGetCurrent(), mode, 0, &made) == noErr)
                let queue = try #require(made)
                defer { AudioQueueDispose(queue, true) }
                for _ in 0 ..< 3 {
                    var buffer: AudioQueueBufferRef?
                    #expect(AudioQueueAllocateBuffer(queue, 8 * 4800, &buffer) == noErr)
                    let allocated = try #require(buffer)
                    memset(allocated.pointee.mAudioData, 0, 8 * 4800)
                    allocated.pointee.mAudioDataByteSize = 8 * 4800
                    #expect(AudioQueueEnqueueBuffer(queue, allocated, 0, nil) == noErr)
                }
                #expect(AudioQueueStart(queue, nil) == noErr)
                CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.5, false)
                Self.runFoundation(.default, seconds: 0.5)
                let inDefault = counter.count
                CFRunLoopRunInMode(mode, 0.5, false)
                let inOwn = counter.count - inDefault
                print("queue for \(mode): \(inDefault) callbacks while the default mode ran, then \(inOwn) in its own")
                if runsInDefault {
                    #expect(inDefault >= 5, "\(inDefault) callbacks in 1 s of 0.1 s buffers")
                } else {
                    #expect(inDefault == 0 && inOwn >= 3, "\(inDefault) callbacks in the default mode, \(inOwn) in its own")
                }
            }
        }
    }
}
