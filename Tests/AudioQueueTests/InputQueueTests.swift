import AQJack
import AQCore
import AQMedia
import AQServerSuite
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
            let queue = try AudioInputQueue(format: format, driver: JackDriver(name: TestServer.uniqueClientName("qrec"))) { queue, buffer, startTime in
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
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            #expect(result.frames >= 48000 * 19 / 10, "\(result)")
            #expect(queue.underrunFrameCount == 0)
            let short = deliveries.dropLast().filter { $0.samples.count != 4800 * 2 }.count
            if xruns == 0 {
                #expect(deliveries.allSatisfy { $0.startTime.mFlags == [.sampleTimeValid, .hostTimeValid, .rateScalarValid] })
                #expect(result.wrong == 0)
                #expect(result.gaps == 0)
                // Every full buffer holds 4800 frames; host times advance with the frames.
                #expect(short == 0)
                if deliveries.count >= 2 {
                    let hostDelta = Double(deliveries[1].startTime.mHostTime) - Double(deliveries[0].startTime.mHostTime)
                    #expect(abs(hostDelta - 100_000_000) < 2_000_000)   // 4800 frames = 100 ms
                }
            } else {
                // A server xrun makes JACK skip or repeat a cycle's frame time (a gap, which ends
                // the buffer early) and can leave a cycle of a late generator stale: at most two
                // gaps and one stale cycle per xrun, and a short buffer only at a gap. (This test
                // needed 5 and 8 attempts in two CI runs of 2026-12-02 when it allowed none.)
                #expect(result.wrong <= xruns * 128 * 2, "\(result), \(xruns) xruns")
                #expect(result.gaps <= 2 * xruns, "\(result), \(xruns) xruns")
                #expect(short <= result.gaps, "\(short) short buffers, \(result)")
                #expect(deliveries.allSatisfy { $0.startTime.mFlags.contains(.sampleTimeValid) })
            }
        }

        @Test("a queue thread stalled past what the ring holds: the dropped cycles are counted and the next timestamp jumps by exactly them")
        func ringOverrun() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("ogen"), channelCount: 1, integerBits: 16)
            let format = pcmFormat(rate: 48000, channels: 1, bits: 16)
            let log = DeliveryLog()
            let stalled = Atomic<Bool>(false)
            let overrunAtDelivery = Mutex<[Int]>([])
            let queue = try AudioInputQueue(format: format, driver: JackDriver(name: TestServer.uniqueClientName("orec"))) { queue, buffer, startTime in
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
            let skipped = queue.serverSkippedFrameCount
            let xruns = generator.client.notifications.xrunCount.load(ordering: .relaxed)
            if xruns == 0 && skipped == 0 {
                #expect(jumps == [Double(overrun)])
                #expect(queue.discontinuityCount == 1)
                #expect(verifyIntegerSignal(deliveries, channels: 1, bits: 16).wrong == 0)
            } else {
                // With server xruns JACK's frame time also skips and repeats cycles, and a
                // generator not finished in time leaves a cycle stale, so the timeline has more
                // jumps than the overrun's (measured: [37120] for an overrun of 36992 with 384
                // skipped; in another run 30 jumps of -128 ... 24960). What still holds: the dropped
                // frames show as a gap of at least their number, and a discontinuity is reported.
                #expect(jumps.filter { $0 > 0 }.reduce(0, +) >= Double(overrun), "jumps \(jumps), overrun \(overrun), skipped \(skipped)")
                #expect(queue.discontinuityCount >= 1)
            }
        }
    }
}

extension JackServerSuite.InputQueueTests {
    @Test("a start with no frame records from the first cycle whose graph has its connections: the next cycle, not the one after (the process thread checks), every channel from the same frame")
    func startAtFirstConnectedCycle() throws {
        // A private server at period 1024 (21 ms): the start's connect, a round trip to the
        // server, then fits in the cycle it is made in. At the suite's period 128 (2.7 ms) a
        // loaded machine often needs longer, the graph switches a cycle later and every start
        // is legitimately one period after the cycle sampled before it (two CI runs: 5 of 5).
        let server = try PrivateJackServer(period: 1024, realtime: true)
        defer { server.stop() }
        let generator = try GeneratorClient(name: TestServer.uniqueClientName("cstart-gen"), channelCount: 4, server: server.name)
        let format = pcmFormat(rate: 48000, channels: 4, bits: 32, float: true)
        // The old rule recorded from one period after the next cycle the queue knew of once its
        // ports were connected: every start below would be at nextCycle + period or later.
        var starts: [(start: UInt64, nextCycle: UInt64)] = []
        for _ in 0 ..< 5 {
            let log = DeliveryLog()
            let queue = try AudioInputQueue(format: format, driver: JackDriver(name: TestServer.uniqueClientName("cstart-rec"), server: server.name)) { _, buffer, startTime in
                let count = Int(buffer.pointee.mAudioDataByteSize) / 4
                log.append(.init(startTime: startTime, samples: (0 ..< count).map { buffer.pointee.mAudioData.load(fromByteOffset: $0 * 4, as: Float.self) }))
            }
            defer { queue.dispose() }
            queue.currentDevice = generator.client.name
            try queue.enqueue(queue.allocateBuffer(byteCapacity: 1024 * 16))
            let running = Date().addingTimeInterval(2)
            while queue.latestCycleEndFrame == 0 && Date() < running { usleep(1_000) }   // its first cycles
            let nextCycle = queue.latestCycleEndFrame
            try queue.start()
            let deadline = Date().addingTimeInterval(2)
            while log.deliveries.isEmpty && Date() < deadline { usleep(10_000) }
            queue.stop(immediate: true)
            let first = try #require(log.deliveries.first)
            let start = UInt64(first.startTime.mSampleTime)
            // Every channel carries the generator's signal from the first frame on: no channel
            // joined late.
            var wrong = 0
            for frame in 0 ..< first.samples.count / 4 {
                for channel in 0 ..< 4 where first.samples[frame * 4 + channel] != TestSignal.sample(channel: channel, frame: UInt32(truncatingIfNeeded: start + UInt64(frame))) {
                    wrong += 1
                }
            }
            #expect(first.samples.count == 1024 * 4)
            #expect(wrong == 0, "start \(start)")
            starts.append((start, nextCycle))
        }
        #expect(starts.contains { $0.start <= $0.nextCycle }, "\(starts)")
    }
}
