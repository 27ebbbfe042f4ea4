import AQCore
import AQMedia
import AQTestSupport
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization
import Testing

/// Queue behaviour that needs no real time, moved here from the JACK server suite (they slept
/// 0.3 … 2 s each there): formats, scheduled starts, underruns, resampling and volume, on the
/// offline driver, exact and repeatable. What only JACK shows (connections, xruns, host time on
/// JACK's clock, a stalled queue thread against the real process thread) stays in that suite.
@Suite("Queue engine offline (no server needed)")
struct OfflineEngineTests {
    /// A recording queue on `driver` whose callback logs every buffer, as float samples, and
    /// (with `refill`) enqueues it again.
    static func recorder(_ format: AudioStreamBasicDescription, on driver: OfflineDriver, refill: Bool = true,
                         onDelivery: @escaping @Sendable (AudioInputQueue) -> Void = { _ in }) throws -> (AudioInputQueue, DeliveryLog) {
        let layout = try LinearPCMLayout(validating: format)
        let log = DeliveryLog()
        let queue = try AudioInputQueue(format: format, driver: driver) { queue, buffer, startTime in
            onDelivery(queue)
            let count = Int(buffer.pointee.mAudioDataByteSize) / layout.bytesPerSample
            log.append(.init(startTime: startTime, samples: (0 ..< count).map { layout.decode(from: buffer.pointee.mAudioData + $0 * layout.bytesPerSample) }))
            if refill { try? queue.enqueue(buffer) }
        }
        return (queue, log)
    }

    @Test("a start time on the device timeline makes that exact frame the first one recorded (a frame inside a cycle)")
    func scheduledStart() throws {
        let driver = OfflineDriver(name: "off-sched", sampleRate: 48000, bufferSize: 128, startFrame: 7_000_000)
        let (queue, log) = try Self.recorder(pcmFormat(rate: 0, channels: 1, bits: 32, float: true), on: driver, refill: false)
        defer { queue.dispose() }
        #expect(queue.format.mSampleRate == 48000)
        try queue.enqueue(queue.allocateBuffer(byteCapacity: 1000 * 4))
        // Half a second ahead, deliberately not on a cycle boundary.
        let startFrame = driver.currentFrame + 24000 + 37
        try queue.start(atFrame: startFrame)
        driver.run(frames: 48000, input: OfflineQueueTests.integerSignal)
        queue.stop()
        let first = try #require(log.deliveries.first)
        #expect(first.startTime.mSampleTime == Double(startFrame))
        #expect(first.samples.count == 1000)
        #expect(log.deliveries.count == 1)
        #expect(verifyIntegerSignal(log.deliveries, channels: 1, bits: 16).wrong == 0)
    }

    @Test("with no buffer enqueued, frames are lost, counted, and the next timestamp jumps by exactly the loss")
    func recordUnderrun() throws {
        let driver = OfflineDriver(name: "off-under", sampleRate: 48000, bufferSize: 128)
        let lostAtDelivery = Mutex<[Int]>([])
        let (queue, log) = try Self.recorder(pcmFormat(rate: 48000, channels: 1, bits: 16), on: driver, refill: false) { queue in
            lostAtDelivery.withLock { $0.append(queue.underrunFrameCount) }
        }
        defer { queue.dispose() }
        let buffer = try queue.allocateBuffer(byteCapacity: 2400 * 2)
        try queue.enqueue(buffer)
        try queue.start(atFrame: 0)
        driver.run(frames: 6000, input: OfflineQueueTests.integerSignal)   // 2400 recorded, 3600 lost
        let lostBefore = queue.underrunFrameCount
        try queue.enqueue(buffer)
        driver.run(frames: 6000, input: OfflineQueueTests.integerSignal)
        queue.stop()
        let deliveries = log.deliveries
        try #require(deliveries.count == 2)
        #expect(lostBefore == 3600)
        // Everything lost before the second buffer started is exactly its timestamp's jump.
        #expect(deliveries[1].startTime.mSampleTime == deliveries[0].startTime.mSampleTime + 2400 + 3600)
        #expect(lostAtDelivery.withLock { $0 } == [0, 3600])
        // Two underruns: before the buffer came back, and after it filled again (3600 more lost).
        #expect(queue.discontinuityCount == 2)
        #expect(queue.underrunFrameCount == 7200)
        #expect(verifyIntegerSignal(deliveries, channels: 1, bits: 16).wrong == 0)
    }

    @Test("inconsistent formats are refused with 'fmt?' and a message naming the field", arguments: [
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mBitsPerChannel = 20; return f }(), "mBitsPerChannel is 20"),
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mBytesPerFrame = 2; return f }(), "mBytesPerFrame is 2; expected 4"),
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mChannelsPerFrame = 0; return f }(), "mChannelsPerFrame is 0"),
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFormatID = 0x666C_6163; return f }(), "'flac' is played here, not recorded"),
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFormatID = 0x616C_6163; return f }(), "Apple Lossless recording: mFormatFlags 12"),
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFormatID = 0x6161_6320; return f }(), "AAC object type 12"),
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true); f.mBitsPerChannel = 16; f.mBytesPerFrame = 4; f.mBytesPerPacket = 4; return f }(), "with kAudioFormatFlagIsFloat; expected 32 or 64"),
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFramesPerPacket = 2; return f }(), "mFramesPerPacket is 2"),
        ({ var f = pcmFormat(rate: 48000, channels: 2, bits: 16); f.mFormatFlags |= AudioFormatValues.isNonInterleaved; return f }(), "NonInterleaved"),
        (pcmFormat(rate: -1, channels: 2, bits: 16), "mSampleRate is -1.0"),
    ])
    func invalidFormats(format: AudioStreamBasicDescription, message: String) {
        #expect {
            _ = try AudioInputQueue(format: format, driver: OfflineDriver(name: "never", sampleRate: 48000)) { _, _, _ in }
        } throws: { error in
            guard let error = error as? AudioQueueError else { return false }
            return error.status == AudioQueueError.unsupportedDataFormatCode && error.message.contains(message)
        }
    }

    @Test("a 1 kHz sine recorded at 44.1 kHz from a 48 kHz device: consecutive buffers continue each other at 48000/44100 device frames per frame, SNR ≥ 90 dB against the ideal at the reported times")
    func sineAt44100() throws {
        let driver = OfflineDriver(name: "off-sine", sampleRate: 48000, bufferSize: 128, startFrame: 1_000_000)
        let (queue, log) = try Self.recorder(pcmFormat(rate: 44100, channels: 1, bits: 32, float: true), on: driver)
        defer { queue.dispose() }
        #expect(queue.isResampling)
        for _ in 0 ..< 3 { try queue.enqueue(queue.allocateBuffer(byteCapacity: 4410 * 4)) }
        try queue.start(atFrame: driver.currentFrame)
        driver.run(frames: 96000) { _, first, samples in
            for index in samples.indices { samples[index] = Float(0.5 * sin(2 * Double.pi * 1000 * Double(first + UInt64(index)) / 48000)) }
        }
        queue.stop()
        let deliveries = log.deliveries
        for (previous, next) in zip(deliveries, deliveries.dropFirst()) {
            #expect(abs(next.startTime.mSampleTime - (previous.startTime.mSampleTime + Double(previous.samples.count) * 48000 / 44100)) < 1e-6)
        }
        let first = try #require(deliveries.first)
        #expect(first.startTime.mSampleTime == 1_000_000)
        let samples = deliveries.flatMap(\.samples)
        #expect(samples.count >= 88200 - 64)
        // Output frame k is the 48 kHz sine at device time t0 + k·48000/44100.
        let t0 = first.startTime.mSampleTime
        let ideal = (0 ..< samples.count).map { 0.5 * sin(2 * Double.pi * 1000 * (t0 + Double($0) * 48000 / 44100) / 48000) }
        let margin = 2048   // the converter's start-up and flush-out
        let snr = SineAnalysis.snr(samples[margin ..< samples.count - margin], ideal: ideal[margin ..< samples.count - margin])
        #expect(snr >= 90)
    }

    /// A mono float playback queue on `driver` with `buffers` buffers of 2048 frames of
    /// `produce(frame)` enqueued and primed (never refilled).
    static func player(on driver: OfflineDriver, buffers: Int, produce: (Int) -> Float) throws -> AudioOutputQueue {
        let queue = try AudioOutputQueue(format: pcmFormat(rate: 48000, channels: 1, bits: 32, float: true), driver: driver) { _, _ in }
        for part in 0 ..< buffers {
            let buffer = try queue.allocateBuffer(byteCapacity: 2048 * 4)
            let samples = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
            for index in 0 ..< 2048 { samples[index] = produce(part * 2048 + index) }
            buffer.pointee.mAudioDataByteSize = 2048 * 4
            try queue.enqueue(buffer)
        }
        queue.prime()
        return queue
    }

    /// Runs `driver` for `frames` frames and returns channel 0's output. In runs of 2048 frames:
    /// each run ends with the queue refilling its ring (a quarter second), so no run can outpace
    /// it, which makes the result the same every time.
    static func play(_ driver: OfflineDriver, frames: Int) -> [Float] {
        var played: [Float] = []
        var left = frames
        while left > 0 {
            driver.run(frames: min(left, 2048), output: { _, _, samples in played += samples })
            left -= 2048
        }
        return played
    }

    @Test("volume 0.5: every played sample exactly half the buffer's (so −6.02 dB within 0.01 dB)")
    func halfVolume() throws {
        let driver = OfflineDriver(name: "off-vol", sampleRate: 48000, bufferSize: 128)
        let sine = { (frame: Int) in 0.5 * Float(sin(2 * Double.pi * 1000 * Double(frame) / 48000)) }
        let queue = try Self.player(on: driver, buffers: 12, produce: sine)
        defer { queue.dispose() }
        queue.volumeLevel = 0.5
        try queue.start(atFrame: 0)
        let played = Self.play(driver, frames: 12 * 2048)
        var wrong = 0
        for frame in played.indices where played[frame] != 0.5 * sine(frame) { wrong += 1 }
        #expect(wrong == 0)
        let rms = (played.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(played.count)).squareRoot()
        #expect(abs(20 * log10(rms / (0.5 / 2.0.squareRoot())) - (-6.0206)) <= 0.01)
    }

    @Test("a volume ramp moves no faster than its slope: no step larger than the gain change over the ramp frames, and it takes the ramp's 0.1 s")
    func rampHasNoSteps() throws {
        let driver = OfflineDriver(name: "off-ramp", sampleRate: 48000, bufferSize: 128)
        let queue = try Self.player(on: driver, buffers: 16) { _ in 0.5 }
        defer { queue.dispose() }
        queue.volumeRampTime = 0.1
        try queue.start(atFrame: 0)
        var sound = Self.play(driver, frames: 9600)
        queue.volumeLevel = 0   // 1 → 0 over 4800 frames on a constant 0.5
        sound += Self.play(driver, frames: 9600)
        let allowed: Float = 0.5 / 4800 * 1.001 + 1e-7
        var largest: Float = 0
        var ramping = 0
        for (previous, next) in zip(sound, sound.dropFirst()) where previous > 0 || next > 0 {
            largest = max(largest, abs(next - previous))
            if next < previous { ramping += 1 }
        }
        #expect(sound.prefix(9600).allSatisfy { $0 == 0.5 })
        #expect(largest <= allowed)
        #expect(ramping >= 4700 && ramping <= 4801)
        #expect(sound.last == 0)
    }

    @Test("when the caller stops enqueuing: the frames, then silence (never stale data), counted exactly as one underrun the timeline reports")
    func underrunPlaysSilence() throws {
        let driver = OfflineDriver(name: "off-dry", sampleRate: 48000, bufferSize: 128)
        let queue = try Self.player(on: driver, buffers: 2) { 0.25 + Float($0 % 7) * 0.01 }
        defer { queue.dispose() }
        try queue.start(atFrame: 0)
        let played = Self.play(driver, frames: 28800)
        #expect(played.prefix(4096).enumerated().allSatisfy { $0.element == 0.25 + Float($0.offset % 7) * 0.01 })
        #expect(played.dropFirst(4096).allSatisfy { $0 == 0 })
        #expect(queue.underrunFrameCount == 28800 - 4096)
        #expect(queue.underrunEventCount == 1)
        #expect(queue.discontinuityTotal == 1)
    }
}
