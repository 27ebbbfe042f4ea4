import AQCore
import AQServerSuite
import AQTestSupport
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization
import Testing

/// Fills output buffers with the test signal numbered from 0, counting buffers handed back.
final class SignalSource: @unchecked Sendable {
    let channels: Int
    let totalFrames: Int
    private let lock = NSLock()
    private(set) var nextFrame = 0
    private(set) var returned = 0
    var refill = true

    init(channels: Int, totalFrames: Int) {
        self.channels = channels
        self.totalFrames = totalFrames
    }

    /// Writes the next frames of the signal into `buffer`; false at the end of the signal.
    func fill(_ buffer: AudioQueueBufferRef) -> Bool {
        lock.withLock {
            let capacity = Int(buffer.pointee.mAudioDataBytesCapacity) / (4 * channels)
            let count = min(capacity, totalFrames - nextFrame)
            guard count > 0 else { return false }
            let samples = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
            for frame in 0 ..< count {
                for channel in 0 ..< channels {
                    samples[frame * channels + channel] = TestSignal.sample(channel: channel, frame: UInt32(nextFrame + frame))
                }
            }
            buffer.pointee.mAudioDataByteSize = UInt32(count * 4 * channels)
            nextFrame += count
            return true
        }
    }

    func noteReturned() { lock.withLock { returned += 1 } }
}

extension JackServerSuite {
    @Suite("Playback queue engine")
    struct OutputQueueTests {
        /// Plays `seconds` of the test signal from an output queue into an input queue through
        /// JACK, both scheduled at the same frame; returns what was recorded.
        static func loop(channels: Int, seconds: Double, configure: (AudioOutputQueue) -> Void = { _ in },
                         stopEnqueuingAfter: Int? = nil) throws -> (recorded: [DeliveryLog.Delivery], start: UInt64, output: AudioOutputQueue) {
            let format = pcmFormat(rate: 48000, channels: channels, bits: 32, float: true)
            let total = Int(seconds * 48000)
            let source = SignalSource(channels: channels, totalFrames: total)
            let enqueued = Mutex(0)
            let player = try AudioOutputQueue(format: format, clientName: TestServer.uniqueClientName("play")) { queue, buffer in
                source.noteReturned()
                let limit = stopEnqueuingAfter ?? .max
                guard enqueued.withLock({ $0 }) < limit, source.fill(buffer) else { return }
                enqueued.withLock { $0 += 1 }
                try? queue.enqueue(buffer)
            }
            player.channelDestinations = []   // the recorder connects itself to the player
            configure(player)
            let log = DeliveryLog()
            let recorder = try AudioInputQueue(format: format, clientName: TestServer.uniqueClientName("rec")) { queue, buffer, startTime in
                let count = Int(buffer.pointee.mAudioDataByteSize) / 4
                log.append(.init(startTime: startTime, samples: (0 ..< count).map { buffer.pointee.mAudioData.load(fromByteOffset: $0 * 4, as: Float.self) }))
                try? queue.enqueue(buffer)
            }
            recorder.currentDevice = player.driver.name
            for _ in 0 ..< 4 { try recorder.enqueue(recorder.allocateBuffer(byteCapacity: 4800 * 4 * channels)) }
            for _ in 0 ..< 3 {
                let buffer = try player.allocateBuffer(byteCapacity: 4096 * 4 * channels)
                if source.fill(buffer) {
                    try player.enqueue(buffer)
                    enqueued.withLock { $0 += 1 }
                }
            }
            player.prime()
            try recorder.start()   // connects in_N to the player's out_N
            let start = UInt64(player.driver.estimatedFrameTime) + 9600 + 5
            try recorder.start(atFrame: start)
            try player.start(atFrame: start)
            usleep(UInt32((seconds + 0.6) * 1_000_000))
            player.stop(immediate: true)
            recorder.stop()
            recorder.dispose()
            return (log.deliveries, start, player)
        }

        @Test("play → record through JACK, 16 channels, 30 s: bit-exact, the recording starts at the scheduled frame")
        func playRecordLoop() throws {
            let (deliveries, start, player) = try Self.loop(channels: 16, seconds: 30)
            defer { player.dispose() }
            let first = try #require(deliveries.first)
            #expect(first.startTime.mSampleTime == Double(start))
            #expect(player.playbackStartFrame == start)
            var frames = 0
            var wrong = 0
            var expectedTime = Double(start)
            var gaps = 0
            var gapNotes: [String] = []
            for delivery in deliveries {
                if delivery.startTime.mSampleTime != expectedTime {
                    gaps += 1
                    if gapNotes.count < 6 { gapNotes.append("\(delivery.startTime.mSampleTime - Double(start)) vs \(expectedTime - Double(start))") }
                    // One break in the timeline counts once: carry on from where it resumed
                    // (an ASan run with 3 xruns counted one 128-frame jump on all 31 later buffers).
                    expectedTime = delivery.startTime.mSampleTime
                }
                let count = delivery.samples.count / 16
                for frame in 0 ..< count where frames + frame < 30 * 48000 {
                    for channel in 0 ..< 16 where delivery.samples[frame * 16 + channel].bitPattern != TestSignal.sample(channel: channel, frame: UInt32(frames + frame)).bitPattern {
                        wrong += 1
                    }
                }
                frames += count
                expectedTime += Double(count)
            }
            #expect(frames >= 30 * 48000)
            // In real time the 2-core VM occasionally makes the server report an xrun; JACK then
            // skips or repeats a cycle's frame time and that cycle may not pass through the graph
            // intact. Without an xrun everything must be exact; with one, only that much may differ.
            let xruns = player.driver.xrunCount
            let allowedBreaks = max(1, xruns)   // one unreported server stall tolerated (seen in CI once)
            #expect(wrong <= (wrong == 0 ? 0 : allowedBreaks * 128 * 16), "xruns \(xruns)")
            #expect(gaps <= 2 * allowedBreaks, "\(gapNotes) xruns \(xruns)")
            #expect(player.underrunFrameCount == 0 || frames > 30 * 48000)   // silence only after the signal ended
        }
    }
}
