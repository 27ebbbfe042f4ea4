import AQServerSuite
import AQTestSupport
import AudioToolbox
import Foundation
import Synchronization
import Testing

extension JackServerSuite {
    /// `AudioQueueNewInputWithDispatchQueue` and `AudioQueueNewOutputWithDispatchQueue` as Apple
    /// Swift code calls them: blocks, called on the given dispatch queue.
    @Suite("Queues with dispatch-queue blocks")
    struct DispatchQueueQueueTests {
        static let key = DispatchSpecificKey<String>()

        @Test("AudioQueueNewInputWithDispatchQueue: every block runs on the given queue, each buffer bit-exact at its timestamp (the generator's float signal)")
        func inputBlocks() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("dqgen"), channelCount: 2)
            let callbacks = DispatchQueue(label: "recorder callbacks")
            callbacks.setSpecific(key: Self.key, value: "recorder")
            let log = DeliveryLog()
            let offQueue = Atomic<Int>(0)
            var format = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
            var queue: AudioQueueRef?
            let status = AudioQueueNewInputWithDispatchQueue(&queue, &format, 0, callbacks) { aq, buffer, startTime, packets, _ in
                if DispatchQueue.getSpecific(key: Self.key) != "recorder" { offQueue.add(1, ordering: .relaxed) }
                let count = Int(buffer.pointee.mAudioDataByteSize) / 4
                log.append(.init(startTime: startTime.pointee, samples: Array(UnsafeBufferPointer(start: buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self), count: count))))
                #expect(Int(packets) == count / 2)
                AudioQueueEnqueueBuffer(aq, buffer, 0, nil)
            }
            #expect(status == noErr)
            let aq = try #require(queue)
            var device = generator.client.name as CFString
            AudioQueueSetProperty(aq, kAudioQueueProperty_CurrentDevice, &device, UInt32(MemoryLayout<CFString>.size))
            for _ in 0 ..< 3 {
                var buffer: AudioQueueBufferRef?
                AudioQueueAllocateBuffer(aq, 4800 * 8, &buffer)
                AudioQueueEnqueueBuffer(aq, try #require(buffer), 0, nil)
            }
            #expect(AudioQueueStart(aq, nil) == noErr)
            usleep(1_000_000)
            AudioQueueStop(aq, true)
            callbacks.sync {}   // the blocks posted before the stop have run
            AudioQueueDispose(aq, true)
            var frames = 0, wrong = 0
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for frame in 0 ..< delivery.samples.count / 2 {
                    for channel in 0 ..< 2 where delivery.samples[2 * frame + channel] != TestSignal.sample(channel: channel, frame: first &+ UInt32(frame)) { wrong += 1 }
                }
                frames += delivery.samples.count / 2
            }
            #expect(frames >= 38_400 && wrong == 0 && offQueue.load(ordering: .relaxed) == 0, "\(frames) frames, \(wrong) wrong")
        }

        @Test("AudioQueueNewOutputWithDispatchQueue: the block refills buffers on the given queue; the recorder receives every frame of the 16-bit signal once, in order")
        func outputBlocks() throws {
            let (recorder, log) = try startListingRecorder(role: "dqrec")
            let callbacks = DispatchQueue(label: "player callbacks")
            callbacks.setSpecific(key: Self.key, value: "player")
            let total = 24_000, chunk = 2400
            let next = Mutex(0)
            let offQueue = Atomic<Int>(0)
            let done = Atomic<Bool>(false)
            func fill(_ buffer: AudioQueueBufferRef) -> Bool {
                let start = next.withLock { value -> Int in defer { value += chunk }; return value }
                guard start < total else { return false }
                let samples = buffer.pointee.mAudioData.assumingMemoryBound(to: Int16.self)
                for frame in 0 ..< chunk {
                    for channel in 0 ..< 2 {
                        samples[2 * frame + channel] = Int16(TestSignal.integerSample(channel: channel, frame: UInt32(start + frame), bits: 16) * 32768)
                    }
                }
                buffer.pointee.mAudioDataByteSize = UInt32(chunk * 4)
                return true
            }
            var format = pcmFormat(rate: 48000, channels: 2, bits: 16)
            var queue: AudioQueueRef?
            let status = AudioQueueNewOutputWithDispatchQueue(&queue, &format, 0, callbacks) { aq, buffer in
                if DispatchQueue.getSpecific(key: Self.key) != "player" { offQueue.add(1, ordering: .relaxed) }
                if fill(buffer) {
                    AudioQueueEnqueueBuffer(aq, buffer, 0, nil)
                } else if !done.exchange(true, ordering: .relaxed) {
                    AudioQueueStop(aq, false)
                }
            }
            #expect(status == noErr)
            let aq = try #require(queue)
            var device = recorder.driver.name as CFString
            AudioQueueSetProperty(aq, kAudioQueueProperty_CurrentDevice, &device, UInt32(MemoryLayout<CFString>.size))
            for _ in 0 ..< 3 {
                var buffer: AudioQueueBufferRef?
                AudioQueueAllocateBuffer(aq, UInt32(chunk * 4), &buffer)
                if fill(try #require(buffer)) { AudioQueueEnqueueBuffer(aq, buffer!, 0, nil) }
            }
            #expect(AudioQueueStart(aq, nil) == noErr)
            usleep(1_200_000)
            recorder.stop()
            recorder.dispose()
            AudioQueueDispose(aq, true)
            let samples = log.deliveries.flatMap(\.samples)
            let first = try #require((0 ..< samples.count / 2).first { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 })
            #expect(samples.count / 2 >= first + total)
            var wrong = 0
            for frame in 0 ..< min(total, samples.count / 2 - first) {
                for channel in 0 ..< 2 where samples[2 * (first + frame) + channel] != TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16) { wrong += 1 }
            }
            #expect(wrong == 0 && offQueue.load(ordering: .relaxed) == 0, "\(wrong) samples wrong")
            let finished = done.load(ordering: .relaxed)
            #expect(finished)
        }
    }
}
