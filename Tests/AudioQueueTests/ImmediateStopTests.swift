import AQServerSuite
import AudioToolbox
import Dispatch
import Foundation
import Testing

extension JackServerSuite {
    /// Issue 36's edge: Apple's queues deadlock here; aqjack's must return promptly.
    @Suite("Start, then at once Stop and Dispose, with no buffer enqueued")
    struct ImmediateStopTests {
        @Test("a playback and a recording queue with blocks on a dispatch queue, started with no buffer, stopped at once and disposed: each call returns, all within 2 s")
        func returnsPromptly() throws {
            var format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                                     mFormatFlags: kLinearPCMFormatFlagIsFloat | kLinearPCMFormatFlagIsPacked,
                                                     mBytesPerPacket: 8, mFramesPerPacket: 1, mBytesPerFrame: 8, mChannelsPerFrame: 2,
                                                     mBitsPerChannel: 32, mReserved: 0)
            let callbacks = DispatchQueue(label: "immediate-stop")
            for input in [false, true] {
                var made: AudioQueueRef?
                let created = input
                    ? AudioQueueNewInputWithDispatchQueue(&made, &format, 0, callbacks) { _, _, _, _, _ in }
                    : AudioQueueNewOutputWithDispatchQueue(&made, &format, 0, callbacks) { _, _ in }
                #expect(created == noErr)
                let queue = try #require(made)
                let started = Date()
                #expect(AudioQueueStart(queue, nil) == noErr)
                #expect(AudioQueueStop(queue, true) == noErr)
                #expect(AudioQueueDispose(queue, true) == noErr)
                let elapsed = Date().timeIntervalSince(started)
                print("\(input ? "recording" : "playback") queue: start, stop, dispose in \(String(format: "%.3f", elapsed)) s")
                #expect(elapsed < 2, "\(input ? "recording" : "playback"): \(elapsed) s")
            }
        }
    }
}
