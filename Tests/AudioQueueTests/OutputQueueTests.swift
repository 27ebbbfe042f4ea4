import AQJack
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
            let player = try AudioOutputQueue(format: format, driver: JackDriver(name: TestServer.uniqueClientName("play"))) { queue, buffer in
                source.noteReturned()
                let limit = stopEnqueuingAfter ?? .max
                guard enqueued.withLock({ $0 }) < limit, source.fill(buffer) else { return }
                enqueued.withLock { $0 += 1 }
                try? queue.enqueue(buffer)
            }
            player.channelDestinations = []   // the recorder connects itself to the player
            configure(player)
            let log = DeliveryLog()
            let recorder = try AudioInputQueue(format: format, driver: JackDriver(name: TestServer.uniqueClientName("rec"))) { queue, buffer, startTime in
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
            // The length, then until the recorder has it on JACK's clock (up to 15 s more): a
            // server that falls behind the wall clock on a busy host delivers it later.
            usleep(UInt32((seconds + 0.6) * 1_000_000))
            let deadline = Date().addingTimeInterval(15)
            while log.deliveries.reduce(0, { $0 + $1.samples.count / channels }) <= total, Date() < deadline { usleep(50_000) }
            player.stop(immediate: true)
            recorder.stop()
            recorder.dispose()
            return (log.deliveries, start, player)
        }

        @Test("connectDevice() connects the ports before the start (a player fills its buffers meanwhile); the start after it plays the signal's frame 0 on the frame it armed, on every channel")
        func connectDeviceBeforeStart() throws {
            let run = try Self.startAfterConnecting { player, capture in
                #expect(capture.ports.map(\.connections) == [["\(player.driver.name):out_1"], ["\(player.driver.name):out_2"]])
            }
            #expect(run.arrivals == [run.start, run.start])
            #expect(run.connectionCounts == [1, 1])
        }

        /// One start after ``AudioOutputQueue/connectDevice()`` into a 2-channel capture client,
        /// `afterConnecting` run between the two (a test removes a connection there): the frame at
        /// which signal frame 0 reached each channel (nil: not within 5 s, or the channel lost its
        /// connection), the queue's start frame, its processor's next cycle just before the start,
        /// the period, and each capture port's connections at the end.
        static func startAfterConnecting(afterConnecting: (AudioOutputQueue, CaptureClient) throws -> Void = { _, _ in })
            throws -> (arrivals: [UInt64?], start: UInt64, nextCycleBefore: UInt64, period: UInt64, connectionCounts: [Int]) {
            let capture = try CaptureClient(name: TestServer.uniqueClientName("cstart-cap"), channelCount: 2, capacityFrames: 48000)
            let firstSignalFrame = Mutex<[UInt64?]>([nil, nil])   // per channel: the frame time of signal frame 0
            try capture.activate()
            let sink = CaptureSink(reader: capture.reader) { cycle, samples in
                for frame in 0 ..< cycle.frameCount {
                    for channel in 0 ..< 2 where samples[frame * 2 + channel].bitPattern == TestSignal.sample(channel: channel, frame: 0).bitPattern {
                        firstSignalFrame.withLock { if $0[channel] == nil { $0[channel] = cycle.frameTime + UInt64(frame) } }
                    }
                }
            }
            defer {
                try? capture.client.deactivate()
                sink.stop()
            }
            let source = SignalSource(channels: 2, totalFrames: 9600)
            let player = try AudioOutputQueue(format: pcmFormat(rate: 48000, channels: 2, bits: 32, float: true),
                                              driver: JackDriver(name: TestServer.uniqueClientName("cstart-play"))) { _, _ in source.noteReturned() }
            defer { player.dispose() }
            player.channelDestinations = capture.ports.map(\.name)
            try player.connectDevice()
            try afterConnecting(player, capture)
            let connected = capture.ports.map { !$0.connections.isEmpty }
            let buffer = try player.allocateBuffer(byteCapacity: 9600 * 8)
            #expect(source.fill(buffer))
            try player.enqueue(buffer)
            player.prime()
            let before = player.latestCycleEndFrame
            try player.start()
            let deadline = Date().addingTimeInterval(5)
            while firstSignalFrame.withLock({ zip($0, connected).contains { $0 == nil && $1 } }) && Date() < deadline { usleep(10_000) }
            let start = try #require(player.playbackStartFrame)
            return (firstSignalFrame.withLock { $0 }, start, before, UInt64(player.driver.bufferSize), capture.ports.map(\.connections.count))
        }

        @Test("a start after connectDevice() plays from the first cycle whose graph has the connections: the next cycle, not the one after (the process thread checks), every channel on the same frame")
        func startAtFirstConnectedCycle() throws {
            // The old rule started one period after the next cycle the queue knew of, always:
            // every start below would be at nextCycleBefore + period or later.
            var starts: [(start: UInt64, nextCycle: UInt64)] = []
            for _ in 0 ..< 5 {
                let (arrivals, start, nextCycle, _, _) = try Self.startAfterConnecting()
                #expect(arrivals == [start, start], "no partial start")
                starts.append((start, nextCycle))
            }
            #expect(starts.contains { $0.start <= $0.nextCycle }, "\(starts)")
        }

        @Test("a start whose last connection is removed before it reaches the graph still plays, 8 periods after the cycle sure to carry the connections")
        func startWithoutItsConnection() throws {
            let (arrivals, start, nextCycle, period, _) = try Self.startAfterConnecting { player, capture in
                try capture.client.disconnect("\(player.driver.name):out_2", from: capture.ports[1].name)
            }
            #expect(arrivals == [start, nil])
            // The cycle sure to carry connections is the one after the next (nextCycle + period,
            // or later when a cycle ran during the start call), and the wait is 8 periods.
            #expect(start >= nextCycle + 9 * period && start <= nextCycle + 12 * period, "next cycle \(nextCycle), start \(start)")
        }

        @Test("play → record through JACK, 16 channels, 30 s: bit-exact, the recording starts at the scheduled frame")
        func playRecordLoop() throws {
            let (deliveries, start, player) = try Self.loop(channels: 16, seconds: 30)
            defer { player.dispose() }
            let first = try #require(deliveries.first)
            #expect(first.startTime.mSampleTime == Double(start))
            #expect(player.playbackStartFrame == start)
            // Every recorded frame carries the signal frame it holds (TestSignal encodes it), so
            // the check follows the signal itself: each frame must be exactly the signal's frame
            // on all 16 channels, and the frame numbers must run on. Around a server xrun the two
            // queues may part by a cycle (the player plays on through a cycle whose frame time
            // JACK repeats, the recorder keeps its timeline and leaves that cycle out), so a break
            // in the run is counted and measured, and the check resumes from it instead of
            // calling every later frame wrong (a CI run: 22,581,632 "wrong" samples, 1 break).
            var frames = 0
            var wrong = 0
            var expectedFrame: UInt32 = 0   // the signal starts at its frame 0 on the start frame
            var breaks: [Int] = []          // frames skipped (+) or repeated (-) at each break
            var expectedTime = Double(start)
            var gaps = 0
            var gapNotes: [String] = []
            var silentFrames = 0            // frames of the signal's 30 s that are silence: the player ran dry
            for delivery in deliveries {
                if delivery.startTime.mSampleTime != expectedTime {
                    gaps += 1
                    if gapNotes.count < 6 { gapNotes.append("\(delivery.startTime.mSampleTime - Double(start)) vs \(expectedTime - Double(start))") }
                    expectedTime = delivery.startTime.mSampleTime
                }
                let count = delivery.samples.count / 16
                for frame in 0 ..< count where frames + frame < 30 * 48000 {
                    let row = delivery.samples[(frame * 16) ..< (frame * 16 + 16)]
                    guard let decoded = TestSignal.decode(row.first!), decoded.channel == 0 else {
                        if row.allSatisfy({ $0 == 0 }) { silentFrames += 1 }
                        wrong += 16   // not the signal at all (a stale or silent cycle)
                        continue
                    }
                    if decoded.frame != expectedFrame % TestSignal.framePeriod {
                        let jump = Int(Int32(bitPattern: (decoded.frame &- expectedFrame) << 13) >> 13)   // signed, modulo 2^19
                        breaks.append(jump)
                        expectedFrame = expectedFrame &+ UInt32(bitPattern: Int32(jump))
                    }
                    for (channel, sample) in row.enumerated() where sample.bitPattern != TestSignal.sample(channel: channel, frame: expectedFrame).bitPattern {
                        wrong += 1
                    }
                    expectedFrame &+= 1
                }
                frames += count
                expectedTime += Double(count)
            }
            #expect(frames >= 30 * 48000)
            // In real time the 2-core VM occasionally makes the server report an xrun; JACK then
            // skips or repeats a cycle's frame time and that cycle may not pass through the graph
            // intact. Without an xrun everything must be exact; with one, only that much may
            // differ, and the recording may part from the player by at most two cycles an xrun.
            let xruns = player.driver.xrunCount
            let allowedBreaks = max(1, xruns)   // one unreported server stall tolerated (seen in CI once)
            if xruns == 0 && breaks.isEmpty && gaps == 0 {
                // Nothing disturbed the run: every sample exact.
                #expect(wrong == 0, "breaks \(breaks)")
            } else {
                #expect(wrong <= allowedBreaks * 128 * 16, "xruns \(xruns), breaks \(breaks)")
            }
            #expect(gaps <= 2 * allowedBreaks, "\(gapNotes) xruns \(xruns)")
            #expect(breaks.count <= 2 * allowedBreaks && breaks.reduce(0) { $0 + abs($1) } <= allowedBreaks * 256,
                    "breaks \(breaks), xruns \(xruns)")
            // The player never ran dry while the signal played: no silent frame in its 30 s (a
            // skipped cycle at an xrun at most), and one underrun, where the signal ended.
            #expect(silentFrames <= (xruns == 0 ? 0 : xruns * 128), "\(silentFrames) silent frames, xruns \(xruns)")
            #expect(player.underrunEventCount <= 1 + xruns, "\(player.underrunEventCount) underruns, xruns \(xruns)")
        }
    }
}
