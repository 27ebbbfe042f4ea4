import AQCore
import AQTestSupport
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization
import Testing

/// An ASBD for interleaved signed-integer or float linear PCM.
func pcmFormat(rate: Double, channels: Int, bits: Int, float: Bool = false, bigEndian: Bool = false) -> AudioStreamBasicDescription {
    var flags = AudioFormatValues.isPacked | (float ? AudioFormatValues.isFloat : AudioFormatValues.isSignedInteger)
    if bigEndian { flags |= AudioFormatValues.isBigEndian }
    let bytesPerFrame = UInt32(channels * bits / 8)
    return AudioStreamBasicDescription(mSampleRate: rate, mFormatID: AudioFormatValues.linearPCM, mFormatFlags: flags,
                                       mBytesPerPacket: bytesPerFrame, mFramesPerPacket: 1, mBytesPerFrame: bytesPerFrame,
                                       mChannelsPerFrame: UInt32(channels), mBitsPerChannel: UInt32(bits), mReserved: 0)
}

/// Checks deliveries against the integer test signal: sample-exact data at the reported sample
/// times, and each buffer starting where the previous ended.
func verifyIntegerSignal(_ deliveries: [DeliveryLog.Delivery], channels: Int, bits: Int) -> (frames: Int, wrong: Int, gaps: Int) {
    var frames = 0
    var wrong = 0
    var gaps = 0
    var expectedStart: Double?
    for delivery in deliveries where !delivery.samples.isEmpty {
        let count = delivery.samples.count / channels
        if let expectedStart, expectedStart != delivery.startTime.mSampleTime { gaps += 1 }
        let first = UInt32(truncatingIfNeeded: UInt64(delivery.startTime.mSampleTime))
        for frame in 0 ..< count {
            for channel in 0 ..< channels {
                let expected = TestSignal.integerSample(channel: channel, frame: first &+ UInt32(frame), bits: bits)
                if delivery.samples[frame * channels + channel] != expected { wrong += 1 }
            }
        }
        frames += count
        expectedStart = delivery.startTime.mSampleTime + Double(count)
    }
    return (frames, wrong, gaps)
}

extension JackServerSuite {
    @Suite("Recording queue engine")
    struct InputQueueTests {
        @Test("16-bit big-endian stereo from the generator: every buffer sample-exact at its timestamp, no gap", arguments: [true, false])
        func sixteenBitStereo(bigEndian: Bool) throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("qgen"), channelCount: 2, integerBits: 16)
            let format = pcmFormat(rate: 48000, channels: 2, bits: 16, bigEndian: bigEndian)
            let layout = try LinearPCMLayout(validating: format)
            let log = DeliveryLog()
            let running = Atomic<Bool>(true)
            let queue = try AudioInputQueue(format: format, clientName: TestServer.uniqueClientName("qrec")) { queue, buffer, startTime in
                let size = Int(buffer.pointee.mAudioDataByteSize)
                let samples = (0 ..< size / layout.bytesPerSample).map { layout.decode(from: buffer.pointee.mAudioData + $0 * layout.bytesPerSample) }
                log.append(.init(startTime: startTime, samples: samples))
                if running.load(ordering: .relaxed) { try? queue.enqueue(buffer) }
            }
            queue.currentDevice = generator.client.name
            for _ in 0 ..< 3 { try queue.enqueue(queue.allocateBuffer(byteCapacity: 4800 * layout.bytesPerFrame)) }
            try queue.start()
            usleep(2_000_000)
            queue.stop(immediate: true)
            running.store(false, ordering: .relaxed)
            queue.dispose()

            let deliveries = log.deliveries
            let result = verifyIntegerSignal(deliveries, channels: 2, bits: 16)
            #expect(result.frames >= 48000 * 19 / 10, "\(result)")
            #expect(result.wrong == 0)
            #expect(result.gaps == 0)
            #expect(queue.underrunFrameCount == 0)
            // Every full buffer holds 4800 frames; host times advance with the frames.
            #expect(deliveries.dropLast().allSatisfy { $0.samples.count == 4800 * 2 })
            #expect(deliveries.allSatisfy { $0.startTime.mFlags == 7 })
            if deliveries.count >= 2 {
                let hostDelta = Double(deliveries[1].startTime.mHostTime) - Double(deliveries[0].startTime.mHostTime)
                #expect(abs(hostDelta - 100_000_000) < 2_000_000)   // 4800 frames = 100 ms
            }
        }

        @Test("a start time on the device timeline makes that exact frame the first one recorded")
        func scheduledStart() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("sgen"), channelCount: 1, integerBits: 16)
            let format = pcmFormat(rate: 0, channels: 1, bits: 32, float: true)
            let log = DeliveryLog()
            let queue = try AudioInputQueue(format: format, clientName: TestServer.uniqueClientName("srec")) { _, buffer, startTime in
                let count = Int(buffer.pointee.mAudioDataByteSize) / 4
                let samples = (0 ..< count).map { buffer.pointee.mAudioData.load(fromByteOffset: $0 * 4, as: Float.self) }
                log.append(.init(startTime: startTime, samples: samples))
            }
            #expect(queue.format.mSampleRate == 48000)
            queue.currentDevice = generator.client.name
            try queue.enqueue(queue.allocateBuffer(byteCapacity: 1000 * 4))
            // A frame half a second ahead, deliberately not on a cycle boundary.
            let startFrame = UInt64(generator.client.estimatedFrameTime) + 24000 + 37
            try queue.start(atFrame: startFrame)
            usleep(1_000_000)
            queue.stop()
            queue.dispose()
            let first = try #require(log.deliveries.first)
            #expect(first.startTime.mSampleTime == Double(startFrame))
            #expect(first.samples.count == 1000)
            #expect(verifyIntegerSignal(log.deliveries, channels: 1, bits: 16).wrong == 0)
        }

        @Test("with no buffer enqueued, frames are lost, counted, and the next timestamp jumps by exactly the loss")
        func recordUnderrun() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("ugen"), channelCount: 1, integerBits: 16)
            let format = pcmFormat(rate: 48000, channels: 1, bits: 16)
            let log = DeliveryLog()
            let lostAtDelivery = Mutex<[Int]>([])
            let queue = try AudioInputQueue(format: format, clientName: TestServer.uniqueClientName("urec")) { queue, buffer, startTime in
                lostAtDelivery.withLock { $0.append(queue.underrunFrameCount) }
                let layout = try! LinearPCMLayout(validating: format)
                let count = Int(buffer.pointee.mAudioDataByteSize) / 2
                log.append(.init(startTime: startTime, samples: (0 ..< count).map { layout.decode(from: buffer.pointee.mAudioData + $0 * 2) }))
            }
            queue.currentDevice = generator.client.name
            let buffer = try queue.allocateBuffer(byteCapacity: 2400 * 2)
            try queue.enqueue(buffer)
            try queue.start()
            usleep(300_000)   // the one buffer fills after 50 ms; then frames are lost
            let lostBefore = queue.underrunFrameCount
            try queue.enqueue(buffer)
            usleep(200_000)
            queue.stop()
            queue.dispose()
            let deliveries = log.deliveries
            try #require(deliveries.count == 2)
            let gap = deliveries[1].startTime.mSampleTime - (deliveries[0].startTime.mSampleTime + 2400)
            #expect(lostBefore > 0)
            #expect(Int(gap) >= lostBefore)
            // Everything lost before the second buffer started is exactly its timestamp's jump.
            #expect(Int(gap) == lostAtDelivery.withLock { $0[1] })
            #expect(lostAtDelivery.withLock { $0[0] } == 0)
            #expect(queue.discontinuityCount >= 1)
            #expect(verifyIntegerSignal(deliveries, channels: 1, bits: 16).wrong == 0)
        }

        @Test("a queue thread stalled past what the ring holds: the dropped cycles are counted and the next timestamp jumps by exactly them")
        func ringOverrun() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("ogen"), channelCount: 1, integerBits: 16)
            let format = pcmFormat(rate: 48000, channels: 1, bits: 16)
            let log = DeliveryLog()
            let stalled = Atomic<Bool>(false)
            let overrunAtDelivery = Mutex<[Int]>([])
            let queue = try AudioInputQueue(format: format, clientName: TestServer.uniqueClientName("orec")) { queue, buffer, startTime in
                overrunAtDelivery.withLock { $0.append(queue.overrunFrameCount) }
                let layout = try! LinearPCMLayout(validating: format)
                let count = Int(buffer.pointee.mAudioDataByteSize) / 2
                log.append(.init(startTime: startTime, samples: (0 ..< count).map { layout.decode(from: buffer.pointee.mAudioData + $0 * 2) }))
                try? queue.enqueue(buffer)
                if !stalled.exchange(true, ordering: .relaxed) { usleep(3_500_000) }   // longer than the ring holds (2.73 s)
            }
            queue.currentDevice = generator.client.name
            for _ in 0 ..< 3 { try queue.enqueue(queue.allocateBuffer(byteCapacity: 4800 * 2)) }
            try queue.start()
            usleep(4_300_000)
            queue.stop()
            queue.dispose()
            let deliveries = log.deliveries
            let overrun = queue.overrunFrameCount
            #expect(overrun > 0 && overrun % 128 == 0)
            // Exactly one jump in the timeline, equal to the frames the process thread dropped.
            var jumps: [Double] = []
            for (previous, next) in zip(deliveries, deliveries.dropFirst()) {
                let gap = next.startTime.mSampleTime - (previous.startTime.mSampleTime + Double(previous.samples.count))
                if gap != 0 { jumps.append(gap) }
            }
            #expect(jumps == [Double(overrun)])
            #expect(queue.discontinuityCount == 1)
            #expect(verifyIntegerSignal(deliveries, channels: 1, bits: 16).wrong == 0)
        }

        @Test("inconsistent formats are refused with 'fmt?' and a message naming the field", arguments: [
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mBitsPerChannel = 20; return f }(), "mBitsPerChannel is 20"),
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mBytesPerFrame = 2; return f }(), "mBytesPerFrame is 2; expected 4"),
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mChannelsPerFrame = 0; return f }(), "mChannelsPerFrame is 0"),
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFormatID = 0x666C_6163; return f }(), "mFormatID is 'flac'"),
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFormatID = 0x616C_6163; return f }(), "Apple Lossless recording: mFormatFlags 12"),
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFormatID = 0x6161_6320; return f }(), "AAC object type 12"),
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true); f.mBitsPerChannel = 16; f.mBytesPerFrame = 4; f.mBytesPerPacket = 4; return f }(), "with kAudioFormatFlagIsFloat; expected 32 or 64"),
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFramesPerPacket = 2; return f }(), "mFramesPerPacket is 2"),
            ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFormatFlags |= AudioFormatValues.isNonInterleaved; return f }(), "NonInterleaved"),
            (pcmFormat(rate: -1, channels: 2, bits: 16), "mSampleRate is -1.0"),
        ])
        func invalidFormats(format: AudioStreamBasicDescription, message: String) {
            #expect {
                _ = try AudioInputQueue(format: format, clientName: "never") { _, _, _ in }
            } throws: { error in
                guard let error = error as? AudioQueueError else { return false }
                return error.status == AudioQueueError.unsupportedDataFormatCode && error.message.contains(message)
            }
        }
    }
}
