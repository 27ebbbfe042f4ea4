import AQCore
import AQTestSupport
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization
import Testing

/// An output queue playing mono float buffers produced by `produce(frameIndex)` into a recording
/// queue through JACK; refills as buffers come back unless told to stop.
final class PlayRecordRig: @unchecked Sendable {
    let player: AudioOutputQueue
    let recorder: AudioInputQueue
    let log = DeliveryLog()
    let refilling = Flag(true)
    private let produce: @Sendable (Int) -> Float
    private let nextFrame = FrameCounter()

    init(produce: @escaping @Sendable (Int) -> Float) throws {
        self.produce = produce
        let format = pcmFormat(rate: 48000, channels: 1, bits: 32, float: true)
        let refilling = self.refilling
        let nextFrame = self.nextFrame
        player = try AudioOutputQueue(format: format, clientName: TestServer.uniqueClientName("vplay")) { queue, buffer in
            guard refilling.value else { return }
            PlayRecordRig.fill(buffer, next: nextFrame, produce: produce)
            try? queue.enqueue(buffer)
        }
        player.channelDestinations = []
        let log = self.log
        recorder = try AudioInputQueue(format: format, clientName: TestServer.uniqueClientName("vrec")) { queue, buffer, startTime in
            let count = Int(buffer.pointee.mAudioDataByteSize) / 4
            log.append(.init(startTime: startTime, samples: (0 ..< count).map { buffer.pointee.mAudioData.load(fromByteOffset: $0 * 4, as: Float.self) }))
            try? queue.enqueue(buffer)
        }
        recorder.currentDevice = player.driver.name
        for _ in 0 ..< 4 { try recorder.enqueue(recorder.allocateBuffer(byteCapacity: 4800 * 4)) }
    }

    static func fill(_ buffer: AudioQueueBufferRef, next: FrameCounter, produce: (Int) -> Float) {
        let frames = Int(buffer.pointee.mAudioDataBytesCapacity) / 4
        let first = next.take(frames)
        let samples = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
        for index in 0 ..< frames { samples[index] = produce(first + index) }
        buffer.pointee.mAudioDataByteSize = UInt32(frames * 4)
    }

    /// Enqueues `count` buffers of 2048 frames and starts both queues at the same frame.
    func start(buffers count: Int = 3) throws {
        for _ in 0 ..< count {
            let buffer = try player.allocateBuffer(byteCapacity: 2048 * 4)
            Self.fill(buffer, next: nextFrame, produce: produce)
            try player.enqueue(buffer)
        }
        player.prime()
        try recorder.start()
        let start = UInt64(player.driver.estimatedFrameTime) + 4800
        try recorder.start(atFrame: start)
        try player.start(atFrame: start)
    }

    func finish() -> [Float] {
        player.stop(immediate: true)
        recorder.stop()
        recorder.dispose()
        player.dispose()
        return log.deliveries.flatMap(\.samples)
    }
}

extension JackServerSuite {
    @Suite("Playback volume, ramps and underruns")
    struct VolumeAndUnderrunTests {
        @Test("volume 0.5 measures -6.02 dB within 0.01 dB on the recording")
        func halfVolume() throws {
            let rig = try PlayRecordRig { 0.5 * Float(sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
            rig.player.volumeLevel = 0.5
            try rig.start()
            usleep(1_000_000)
            let samples = rig.finish()
            let sound = samples.drop { $0 == 0 }.dropLast(4800)
            let rms = (sound.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(sound.count)).squareRoot()
            let decibels = 20 * log10(rms / (0.5 / 2.0.squareRoot()))
            print("volume 0.5: \(decibels) dB over \(sound.count) frames")
            #expect(sound.count > 24000)
            #expect(abs(decibels - (-6.0206)) <= 0.01)
        }

        @Test("a volume ramp moves no faster than its slope: no step larger than the gain change over the ramp frames")
        func rampHasNoSteps() throws {
            let rig = try PlayRecordRig { _ in 0.5 }
            rig.player.volumeRampTime = 0.1
            try rig.start()
            usleep(300_000)
            rig.player.volumeLevel = 0   // 1 → 0 over 4800 frames on a constant 0.5
            usleep(400_000)
            let samples = rig.finish()
            let allowed: Float = 0.5 / 4800 * 1.001 + 1e-7
            var largest: Float = 0
            var ramping = 0
            let sound = Array(samples.drop { $0 == 0 })
            for (previous, next) in zip(sound, sound.dropFirst()) where previous > 0 || next > 0 {
                largest = max(largest, abs(next - previous))
                if next < previous { ramping += 1 }
            }
            print("ramp: largest step \(largest), allowed \(allowed), \(ramping) falling frames")
            #expect(largest <= allowed)
            #expect(ramping >= 4700 && ramping <= 4801)   // the ramp really took 0.1 s
            #expect(sound.last == 0)
        }

        @Test("when the caller stops enqueuing: silence, counted, and the timeline reports it")
        func underrunPlaysSilence() throws {
            let rig = try PlayRecordRig { 0.25 + Float($0 % 7) * 0.01 }
            try rig.start(buffers: 2)
            rig.refilling.value = false   // 4096 frames, then nothing
            usleep(600_000)
            let underrun = rig.player.underrunFrameCount
            let events = rig.player.underrunEventCount
            let samples = rig.finish()
            let sound = Array(samples.drop { $0 == 0 })
            #expect(sound.prefix(4096).enumerated().allSatisfy { $0.element == 0.25 + Float($0.offset % 7) * 0.01 })
            #expect(sound.dropFirst(4096).allSatisfy { $0 == 0 })   // silence, never stale data
            #expect(underrun > 20000)
            #expect(events == 1)
            #expect(rig.player.discontinuityTotal == 1)
        }
    }
}

/// Hands out consecutive frame numbers to whichever thread fills a buffer.
final class FrameCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    func take(_ count: Int) -> Int {
        lock.withLock {
            defer { next += count }
            return next
        }
    }
}

/// A flag shared between threads.
final class Flag: @unchecked Sendable {
    private let storage: Atomic<Bool>
    init(_ value: Bool) { storage = Atomic(value) }
    var value: Bool {
        get { storage.load(ordering: .acquiring) }
        set { storage.store(newValue, ordering: .releasing) }
    }
}
