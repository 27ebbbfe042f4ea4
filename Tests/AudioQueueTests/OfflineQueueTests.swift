import AQCodecs
import AQCore
import AQMedia
import AQTestSupport
import AudioQueue
import AudioToolbox
import Foundation
import Synchronization
import Testing

/// Whether Scripts/test.sh runs this part with no JACK server at all (it sets AQJACK_NO_SERVER=1
/// and a server name nobody uses): then a device start must fail, which proves no server helped.
private let runsWithoutServer = ProcessInfo.processInfo.environment["AQJACK_NO_SERVER"] == "1"

private func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-offline-\(getpid())-\(name)").path
}

/// Queues on the offline driver and AudioQueueOfflineRender: no server, no sleeps; each driver
/// run returns once the queue has called back for it.
@Suite("Queues offline (no server needed)")
struct OfflineQueueTests {
    /// A started 16-bit recording queue on `driver` (three 1000-frame buffers, each re-enqueued
    /// from the callback; `channels` channels, stereo by default) and the log of what it
    /// delivered. `stages` go into its processing chain before the start.
    static func startedRecorder(on driver: OfflineDriver, channels: Int = 2, bits: Int = 16, float: Bool = false,
                                stages: [any QueueProcessingStage] = [], bufferFrames: Int = 1000, bufferCount: Int = 3,
                                gapPolicy: RecordingGapPolicy = .timestamps) throws -> (AudioInputQueue, DeliveryLog) {
        let format = pcmFormat(rate: 48000, channels: channels, bits: bits, float: float)
        let layout = try LinearPCMLayout(validating: format)
        let log = DeliveryLog()
        let queue = try AudioInputQueue(format: format, driver: driver) { queue, buffer, startTime in
            let samples = (0 ..< Int(buffer.pointee.mAudioDataByteSize) / layout.bytesPerSample).map {
                layout.decode(from: buffer.pointee.mAudioData + $0 * layout.bytesPerSample)
            }
            log.append(.init(startTime: startTime, samples: samples))
            try? queue.enqueue(buffer)
        }
        try queue.setProcessingStages(stages)
        queue.gapPolicy = gapPolicy
        for _ in 0 ..< bufferCount { try queue.enqueue(queue.allocateBuffer(byteCapacity: bufferFrames * layout.bytesPerFrame)) }
        try queue.start()
        return (queue, log)
    }

    /// The 16-bit integer test signal at the driver's true frames (the offline driver's input).
    static func integerSignal(channel: Int, first: UInt64, samples: UnsafeMutableBufferPointer<Float>) {
        for index in samples.indices {
            samples[index] = TestSignal.integerSample(channel: channel, frame: UInt32(truncatingIfNeeded: first + UInt64(index)), bits: 16)
        }
    }

    /// A 16-bit stereo 48 kHz playback queue made by `AudioQueueNewOutput`, its callback a no-op.
    static func newOutputQueue() throws -> AudioQueueRef {
        var format = pcmFormat(rate: 48000, channels: 2, bits: 16)
        var queue: AudioQueueRef?
        let callback: AudioQueueOutputCallback = { _, _, _ in }
        #expect(AudioQueueNewOutput(&format, callback, nil, nil, nil, 0, &queue) == noErr)
        return try #require(queue)
    }

    @Test("AudioQueueOfflineRender (Apple's AQOfflineRenderTest, transcribed) renders a 16-bit AIFF to float: every frame bit-exact, nothing more")
    func rendersAIFF() throws {
        let frames = 72000
        let path = temporaryPath("render.aiff")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try writeSignalFile(path: path, fileType: kAudioFileAIFFType, format: pcmFormat(rate: 48000, channels: 2, bits: 16, bigEndian: true), frames: frames)
        let (statuses, samples, renders) = offlineRenderWithListing(path: path)
        #expect(statuses.allSatisfy { $0 == noErr }, "\(statuses)")
        #expect(samples.count == 2 * frames, "renders \(renders)")
        var wrong = 0
        for frame in 0 ..< min(frames, samples.count / 2) {
            for channel in 0 ..< 2 where samples[2 * frame + channel] != TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16) {
                wrong += 1
            }
        }
        #expect(wrong == 0)
        // The listing's 64 KiB input buffer (16384 frames) and half-size capture buffer (32 KiB:
        // 4096 frames of float stereo): every render came back full until the file ran out.
        #expect(renders.dropLast().allSatisfy { $0 == 4096 }, "\(renders)")
        #expect(renders.count == (frames + 4095) / 4096)
        print("offline render of a 16-bit AIFF: \(samples.count / 2) frames in \(renders.count) calls, \(wrong) wrong")
    }

    @Test("AudioQueueOfflineRender renders an AAC M4A: exactly libavcodec's decode of its packets, priming included (the listing sets no trims)")
    func rendersAAC() throws {
        let path = temporaryPath("render.m4a")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reference = try writeAACFile(path: path, fileType: kAudioFileM4AType)
        let (statuses, samples, _) = offlineRenderWithListing(path: path)
        #expect(statuses.allSatisfy { $0 == noErr }, "\(statuses)")
        #expect(samples.count == reference.count)
        let mismatches = zip(samples, reference).filter { $0 != $1 }.count
        #expect(mismatches == 0)
        print("offline render of an AAC M4A: \(samples.count / 2) frames, \(mismatches) samples differ from libavcodec's decode")
    }

    @Test("a queue made with no server renders offline but cannot start on a device: kAudioQueueErr_InvalidDevice naming the server")
    func noServerMeansOfflineOnly() throws {
        let made = try Self.newOutputQueue()
        defer { AudioQueueDispose(made, true) }
        if runsWithoutServer {
            #expect(AudioQueueStart(made, nil) == kAudioQueueErr_InvalidDevice)
        }
        #expect(AudioQueueSetOfflineRenderFormat(made, nil, nil) == noErr)   // already on the device: no change
        var render = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
        #expect(AudioQueueSetOfflineRenderFormat(made, &render, nil) == noErr)
        #expect(AudioQueueStart(made, nil) == noErr)
    }

    @Test("offline render errors: not in offline mode, no sample time, a format it cannot render, changing it while running, more frames than the buffer holds")
    func renderErrors() throws {
        let made = try Self.newOutputQueue()
        defer { AudioQueueDispose(made, true) }
        var buffer: AudioQueueBufferRef?
        #expect(AudioQueueAllocateBuffer(made, 4096, &buffer) == noErr)
        var time = AudioTimeStamp()
        time.mFlags = .sampleTimeValid
        #expect(AudioQueueOfflineRender(made, &time, buffer!, 16) == kAudioQueueErr_InvalidOfflineMode)
        var threeChannels = pcmFormat(rate: 48000, channels: 3, bits: 32, float: true)
        #expect(AudioQueueSetOfflineRenderFormat(made, &threeChannels, nil) == kAudioFormatUnsupportedDataFormatError)
        var planar = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
        planar.mFormatFlags |= kAudioFormatFlagIsNonInterleaved
        #expect(AudioQueueSetOfflineRenderFormat(made, &planar, nil) == kAudioFormatUnsupportedDataFormatError)
        var float = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
        #expect(AudioQueueSetOfflineRenderFormat(made, &float, nil) == noErr)
        #expect(AudioQueueStart(made, nil) == noErr)
        #expect(AudioQueueSetOfflineRenderFormat(made, nil, nil) == kAudioQueueErr_InvalidOfflineMode)
        var noTime = AudioTimeStamp()
        #expect(AudioQueueOfflineRender(made, &noTime, buffer!, 16) == kAudio_ParamError)
        #expect(AudioQueueOfflineRender(made, &time, buffer!, 513) == kAudio_ParamError)   // 512 frames of 8 bytes fit
        #expect(AudioQueueOfflineRender(made, &time, buffer!, 512) == noErr)
        #expect(buffer!.pointee.mAudioDataByteSize == 0)   // nothing enqueued: nothing rendered
    }

    @Test("a recording queue on the offline driver: buffers bit-exact with timestamps on the driver's frame clock; skipped frames are one gap of exactly their length")
    func recordingOnOfflineDriver() throws {
        let driver = OfflineDriver(name: "offline-rec", sampleRate: 48000, bufferSize: 256, startFrame: 1_000_000)
        let (queue, log) = try Self.startedRecorder(on: driver)
        defer { queue.dispose() }
        #expect(queue.channelNames == ["offline-rec:in_1", "offline-rec:in_2"])
        driver.run(frames: 10_000, input: Self.integerSignal)
        #expect(log.deliveries.count == 10)   // 10 full buffers of 1000 frames, delivered before run returned
        driver.skip(frames: 300)
        driver.run(frames: 5_000, input: Self.integerSignal)
        queue.stop()
        let deliveries = log.deliveries
        let check = verifyIntegerSignal(deliveries, channels: 2, bits: 16)
        #expect(check.frames == 15_000 && check.wrong == 0)
        #expect(check.gaps == 1)
        #expect(deliveries.first?.startTime.mSampleTime == 1_000_000)
        // The gap is the 300 skipped frames exactly, the timeline the driver's.
        let gapIndex = try #require(deliveries.indices.dropFirst().first {
            deliveries[$0].startTime.mSampleTime != deliveries[$0 - 1].startTime.mSampleTime + Double(deliveries[$0 - 1].samples.count / 2)
        })
        let before = deliveries[gapIndex - 1]
        #expect(deliveries[gapIndex].startTime.mSampleTime == before.startTime.mSampleTime + Double(before.samples.count / 2) + 300)
        #expect(queue.discontinuityCount == 1)
        #expect(driver.xrunCount == 1)
    }

    @Test("gap policy .silence: 300 skipped device frames become exactly 300 frames of silence where they were, every buffer contiguous with the one before, every other frame bit-exact at its timestamp, counted in insertedSilenceFrameCount")
    func recordingGapAsSilence() throws {
        let driver = OfflineDriver(name: "offline-gap", sampleRate: 48000, bufferSize: 256, startFrame: 1_000_000)
        let (queue, log) = try Self.startedRecorder(on: driver, gapPolicy: .silence)
        defer { queue.dispose() }
        driver.run(frames: 10_000, input: Self.integerSignal)
        driver.skip(frames: 300)
        driver.run(frames: 5_000, input: Self.integerSignal)
        queue.stop()
        let deliveries = log.deliveries
        #expect(deliveries.first?.startTime.mSampleTime == 1_000_000)
        var next = 1_000_000.0, wrong = 0, silent = 0
        for delivery in deliveries {
            #expect(delivery.startTime.mSampleTime == next, "a buffer at \(delivery.startTime.mSampleTime), expected \(next)")
            for frame in 0 ..< delivery.samples.count / 2 {
                let device = UInt64(delivery.startTime.mSampleTime) + UInt64(frame)
                let gap = (1_010_000 ..< 1_010_300).contains(device)
                for channel in 0 ..< 2 {
                    let expected: Float = gap ? 0 : TestSignal.integerSample(channel: channel, frame: UInt32(device), bits: 16)
                    if delivery.samples[2 * frame + channel] != expected { wrong += 1 }
                }
                if gap { silent += 1 }
            }
            next += Double(delivery.samples.count / 2)
        }
        #expect(next == 1_015_300 && wrong == 0 && silent == 300)
        #expect(queue.insertedSilenceFrameCount == 300 && queue.discontinuityCount == 1)
    }

    /// The ring holds 2 s (96,000 frames of 3 samples) rounded up to 524,288 samples, which 3 does
    /// not divide: each wrap (every 174,762.67 frames) splits a frame and cuts one cycle in two.
    /// Cycles of 1000 frames into buffers of 1000 (boundaries on cycle starts); cycles of 256
    /// into buffers of 100, so that some buffer begins inside a cut cycle, after its split frame
    /// (its timestamp must count the frames of the cycle before it).
    @Test("3 channels past the ring's wrap (a frame split between its end and its start), read in place: every frame bit-exact at its timestamp, no gap, also for buffers that begin inside a cycle the wrap cut",
          arguments: [(1000, 1000, 3, 400), (256, 100, 12, 1400)])
    func threeChannelsAcrossTheRingWrap(cycleFrames: Int, bufferFrames: Int, bufferCount: Int, cycles: Int) throws {
        let driver = OfflineDriver(name: "offline-wrap-\(cycleFrames)", sampleRate: 48000, bufferSize: cycleFrames)
        let (queue, log) = try Self.startedRecorder(on: driver, channels: 3, bufferFrames: bufferFrames, bufferCount: bufferCount)
        defer { queue.dispose() }
        for _ in 0 ..< cycles { driver.run(frames: cycleFrames, input: Self.integerSignal) }
        queue.stop()
        let check = verifyIntegerSignal(log.deliveries, channels: 3, bits: 16)
        #expect(check.frames == cycles * cycleFrames && check.wrong == 0)
        #expect(check.gaps == 0)
        #expect(queue.discontinuityCount == 0)
    }

    /// Delays the signal by `latencyFrames` frames (zeros first) and says so, as a look-ahead
    /// limiter or a plugin reporting `lv2:latency` does.
    final class DelayStage: QueueProcessingStage {
        let latencyFrames: Int
        private var line: [Float] = []
        init(frames: Int) { latencyFrames = frames }
        func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int) {
            if line.isEmpty { line = [Float](repeating: 0, count: latencyFrames * channelCount) }
            line.append(contentsOf: UnsafeBufferPointer(start: frames, count: frameCount * channelCount))
            frames.update(from: line, count: frameCount * channelCount)
            line.removeFirst(frameCount * channelCount)
        }
        func reset() { line = [] }
    }

    @Test("a stage that delays by 240 frames and reports it: the recording still starts on the first device frame, every frame bit-exact at its timestamp, and the stop brings out the last 240 frames")
    func recordingLatencyCompensated() throws {
        let driver = OfflineDriver(name: "offline-latency", sampleRate: 48000, bufferSize: 128)
        let (queue, log) = try Self.startedRecorder(on: driver, bits: 32, float: true, stages: [DelayStage(frames: 240)])
        defer { queue.dispose() }
        let start = driver.currentFrame
        for _ in 0 ..< 100 { driver.run(frames: 128, input: Self.integerSignal) }
        queue.stop()

        let check = verifyIntegerSignal(log.deliveries, channels: 2, bits: 16)
        #expect(log.deliveries.first?.startTime.mSampleTime == Double(start))
        #expect(check.frames == 12_800 && check.wrong == 0 && check.gaps == 0)
    }

    /// Multiplies every sample by `gain` and counts the frames it saw.
    final class GainStage: QueueProcessingStage {
        let gain: Float
        private(set) var frames = 0
        init(gain: Float) { self.gain = gain }
        func process(_ frames: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int) {
            for index in 0 ..< frameCount * channelCount { frames[index] *= gain }
            self.frames += frameCount
        }
    }

    @Test("processing stages in a recording queue run in order on every frame, after the ring and before the buffers (x0.5 then x0.25: each sample exactly 1/8 of the signal); none can be added while it runs")
    func recordingProcessingStages() throws {
        let driver = OfflineDriver(name: "offline-stage", sampleRate: 48000, bufferSize: 256)
        let first = GainStage(gain: 0.5), second = GainStage(gain: 0.25)
        let (queue, log) = try Self.startedRecorder(on: driver, bits: 32, float: true, stages: [first, second])
        defer { queue.dispose() }
        #expect(throws: AudioQueueError.self) { try queue.setProcessingStages([GainStage(gain: 2)]) }
        driver.run(frames: 4096, input: Self.integerSignal)
        queue.stop()
        #expect(first.frames == 4096 && second.frames == 4096)
        var wrong = 0
        var frames = 0
        for delivery in log.deliveries {
            let start = Int(delivery.startTime.mSampleTime)
            for (index, sample) in delivery.samples.enumerated() {
                let expected = TestSignal.integerSample(channel: index % 2, frame: UInt32(start + index / 2), bits: 16) / 8
                if sample != expected { wrong += 1 }
            }
            frames += delivery.samples.count / 2
        }
        #expect(frames == 4096 && wrong == 0)
    }

    /// What a 16-bit stereo playback queue on an offline driver at `deviceRate` plays of 4,800
    /// frames of the integer test signal, through `stage` if given.
    static func playedSignal(deviceRate: Int, stage: (any QueueProcessingStage)?) throws -> [[Float]] {
        let driver = OfflineDriver(name: "offline-play-stage", sampleRate: deviceRate, bufferSize: 256)
        let queue = try AudioOutputQueue(format: pcmFormat(rate: 48000, channels: 2, bits: 16), driver: driver) { _, _ in }
        defer { queue.dispose() }
        if let stage { try queue.setProcessingStages([stage]) }
        let frames = 4800
        let buffer = try queue.allocateBuffer(byteCapacity: frames * 4)
        let samples = buffer.pointee.mAudioData.assumingMemoryBound(to: Int16.self)
        for frame in 0 ..< frames {
            for channel in 0 ..< 2 {
                samples[2 * frame + channel] = Int16(TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16) * 32768)
            }
        }
        buffer.pointee.mAudioDataByteSize = UInt32(frames * 4)
        try queue.enqueue(buffer)
        queue.prime()
        try queue.start(atFrame: 0)
        #expect(throws: AudioQueueError.self) { try queue.setProcessingStages([GainStage(gain: 2)]) }
        var played = [[Float]](repeating: [], count: 2)
        // Flushed before it plays: the stages' and the resampler's tails reach the ring too.
        queue.flush()
        driver.run(frames: frames * deviceRate / 48000 + 512, output: { channel, _, samples in played[channel] += samples })
        if let stage = stage as? GainStage { #expect(stage.frames == frames) }
        return played
    }

    @Test("processing stages in a playback queue run on every frame after decoding, before the ring: x0.5 makes every played sample exactly half of what plays without it, at the device rate (the signal itself) and resampled to 96 kHz; a stage's reported latency is compensated (a 240-frame delay plays exactly what plays without it)")
    func playbackProcessingStages() throws {
        for deviceRate in [48000, 96000] {
            let plain = try Self.playedSignal(deviceRate: deviceRate, stage: nil)
            let halved = try Self.playedSignal(deviceRate: deviceRate, stage: GainStage(gain: 0.5))
            // A stage that delays by 240 frames and reports it plays exactly what plays without it.
            let delayed = try Self.playedSignal(deviceRate: deviceRate, stage: DelayStage(frames: 240))
            #expect(delayed == plain, "a compensated 240-frame delay at \(deviceRate) Hz")
            var wrong = 0
            for channel in 0 ..< 2 {
                for frame in plain[channel].indices where halved[channel][frame] != plain[channel][frame] / 2 { wrong += 1 }
                if deviceRate == 48000 {
                    for frame in 0 ..< 4800 where plain[channel][frame] != TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16) {
                        wrong += 1
                    }
                }
            }
            #expect(wrong == 0, "at \(deviceRate) Hz")
            #expect(plain[0].count == 4800 * deviceRate / 48000 + 512)
            // Sound, not silence halved: most of the signal's span plays.
            #expect(plain[0].filter { $0 != 0 }.count > 4000 * deviceRate / 48000, "at \(deviceRate) Hz")
        }
    }

    @Test("a cycle the device reports one cycle ahead, then repeats (JACK around an xrun), is put back where its frames belong: no gap, no frame lost; a real one-cycle skip stays a gap")
    func relabelledCycleIsPutBack() throws {
        let driver = OfflineDriver(name: "offline-relabel", sampleRate: 48000, bufferSize: 128, startFrame: 4_985_088 - 128 * 40)
        let (queue, log) = try Self.startedRecorder(on: driver)
        defer { queue.dispose() }
        driver.run(frames: 128 * 40, input: Self.integerSignal)
        driver.mislabelNextCycle()
        driver.run(frames: 128 * 40, input: Self.integerSignal)
        #expect(queue.relabelledCycleCount == 1)
        #expect(queue.discontinuityCount == 0)
        // Control: a cycle really skipped (the next label jumps by one cycle, no repeat) is a gap.
        driver.skip(frames: 128)
        driver.run(frames: 128 * 10, input: Self.integerSignal)
        queue.stop()
        let check = verifyIntegerSignal(log.deliveries, channels: 2, bits: 16)
        #expect(check.frames == 128 * 90 && check.wrong == 0)
        #expect(check.gaps == 1)
        #expect(queue.relabelledCycleCount == 1)
        #expect(queue.discontinuityCount == 1)
    }

    @Test("a playback queue on the offline driver: silence until the start frame, then every frame at the volume set, each buffer back once played")
    func playbackOnOfflineDriver() throws {
        let driver = OfflineDriver(name: "offline-play", sampleRate: 48000, bufferSize: 128)
        let format = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
        let returned = Atomic<Int>(0)
        let queue = try AudioOutputQueue(format: format, driver: driver) { _, _ in returned.add(1, ordering: .relaxed) }
        defer { queue.dispose() }
        let frames = 2400
        for part in 0 ..< 4 {
            let buffer = try queue.allocateBuffer(byteCapacity: frames * 8)
            let floats = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
            for frame in 0 ..< frames {
                for channel in 0 ..< 2 {
                    floats[2 * frame + channel] = TestSignal.integerSample(channel: channel, frame: UInt32(part * frames + frame), bits: 16)
                }
            }
            buffer.pointee.mAudioDataByteSize = UInt32(frames * 8)
            try queue.enqueue(buffer)
        }
        queue.volumeLevel = 0.5
        #expect(queue.prime() == 4 * frames)
        try queue.start(atFrame: 1000)
        var played = [[Float]](repeating: [], count: 2)
        driver.run(frames: 12_000, output: { channel, _, samples in played[channel] += samples })
        #expect(queue.playbackStartFrame == 1000)
        #expect(returned.load(ordering: .relaxed) == 4)
        var wrong = 0
        for channel in 0 ..< 2 {
            for frame in 0 ..< 12_000 {
                let expected: Float = frame < 1000 || frame >= 1000 + 4 * frames
                    ? 0 : 0.5 * TestSignal.integerSample(channel: channel, frame: UInt32(frame - 1000), bits: 16)
                if played[channel][frame] != expected { wrong += 1 }
            }
        }
        #expect(wrong == 0)
        #expect(queue.underrunFrameCount == 12_000 - 1000 - 4 * frames)
    }
}

@Suite("Scheduled buffer starts (AudioQueueEnqueueBufferWithParameters' inStartTime), rendered offline (no server needed)")
struct ScheduledStartTests {
    @Test("A buffer scheduled at sample 5000 plays there after silence; one asked for 2000 behind it starts at 6000, and outActualStartTime says so")
    func scheduledStarts() throws {
        let queue = try OfflineQueueTests.newOutputQueue()
        defer { AudioQueueDispose(queue, true) }
        var render = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
        #expect(AudioQueueSetOfflineRenderFormat(queue, &render, nil) == noErr)
        // Three 1000-frame 16-bit buffers of constant values 0.25, 0.5, 0.75.
        var buffers: [AudioQueueBufferRef] = []
        for value: Float in [0.25, 0.5, 0.75] {
            var buffer: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 4000, &buffer) == noErr)
            let samples = buffer!.pointee.mAudioData.assumingMemoryBound(to: Int16.self)
            for index in 0 ..< 2000 { samples[index] = Int16(value * 32768) }
            buffer!.pointee.mAudioDataByteSize = 4000
            buffers.append(buffer!)
        }
        var actual = AudioTimeStamp()
        #expect(AudioQueueEnqueueBufferWithParameters(queue, buffers[0], 0, nil, 0, 0, 0, nil, nil, &actual) == noErr)
        #expect(actual.mSampleTime == 0 && actual.mFlags.contains(.sampleTimeValid))
        var at5000 = AudioTimeStamp()
        at5000.mSampleTime = 5000
        at5000.mFlags = .sampleTimeValid
        #expect(AudioQueueEnqueueBufferWithParameters(queue, buffers[1], 0, nil, 0, 0, 0, nil, &at5000, &actual) == noErr)
        #expect(actual.mSampleTime == 5000)
        var at2000 = AudioTimeStamp()
        at2000.mSampleTime = 2000
        at2000.mFlags = .sampleTimeValid
        #expect(AudioQueueEnqueueBufferWithParameters(queue, buffers[2], 0, nil, 0, 0, 0, nil, &at2000, &actual) == noErr)
        #expect(actual.mSampleTime == 6000)
        var noFlags = AudioTimeStamp()
        #expect(AudioQueueEnqueueBufferWithParameters(queue, buffers[0], 0, nil, 0, 0, 0, nil, &noFlags, nil) == kAudioQueueErr_InvalidParameter)

        #expect(AudioQueueStart(queue, nil) == noErr)
        var capture: AudioQueueBufferRef?
        #expect(AudioQueueAllocateBuffer(queue, 8 * 1000, &capture) == noErr)
        var time = AudioTimeStamp()
        time.mFlags = .sampleTimeValid
        var rendered: [Float] = []
        for _ in 0 ..< 7 {
            #expect(AudioQueueOfflineRender(queue, &time, capture!, 1000) == noErr)
            let count = Int(capture!.pointee.mAudioDataByteSize) / 4
            rendered += UnsafeBufferPointer(start: capture!.pointee.mAudioData.assumingMemoryBound(to: Float.self), count: count)
            time.mSampleTime += Double(count / 2)
        }
        let left = stride(from: 0, to: rendered.count, by: 2).map { rendered[$0] }
        #expect(left.count == 7000)
        #expect(left[0 ..< 1000].allSatisfy { $0 == 0.25 })
        #expect(left[1000 ..< 5000].allSatisfy { $0 == 0 })
        #expect(left[5000 ..< 6000].allSatisfy { $0 == 0.5 })
        #expect(left[6000 ..< 7000].allSatisfy { $0 == 0.75 })
    }
}

@Suite("Level meters on a playback queue, rendered offline (no server needed)")
struct OutputLevelMeterTests {
    @Test("CurrentLevelMeter and CurrentLevelMeterDB report the frames being played: a 0.5 block then a 0.25 block, RMS and peak per channel")
    func meters() throws {
        let queue = try OfflineQueueTests.newOutputQueue()
        defer { AudioQueueDispose(queue, true) }
        var render = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
        #expect(AudioQueueSetOfflineRenderFormat(queue, &render, nil) == noErr)
        var enable: UInt32 = 1
        #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_EnableLevelMetering, &enable, 4) == noErr)
        // 4096 frames at 0.5 (left) / -0.5 (right), then 4096 at 0.25 / -0.25.
        for value: Float in [0.5, 0.25] {
            var buffer: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 4096 * 4, &buffer) == noErr)
            let samples = buffer!.pointee.mAudioData.assumingMemoryBound(to: Int16.self)
            for frame in 0 ..< 4096 {
                samples[2 * frame] = Int16(value * 32768)
                samples[2 * frame + 1] = -Int16(value * 32768)
            }
            buffer!.pointee.mAudioDataByteSize = 4096 * 4
            #expect(AudioQueueEnqueueBuffer(queue, buffer!, 0, nil) == noErr)
        }
        #expect(AudioQueueStart(queue, nil) == noErr)
        var capture: AudioQueueBufferRef?
        #expect(AudioQueueAllocateBuffer(queue, 8 * 2048, &capture) == noErr)
        var time = AudioTimeStamp()
        time.mFlags = .sampleTimeValid
        func levels(_ property: AudioQueuePropertyID) -> [AudioQueueLevelMeterState] {
            var states = [AudioQueueLevelMeterState](repeating: AudioQueueLevelMeterState(), count: 2)
            var size = UInt32(2 * MemoryLayout<AudioQueueLevelMeterState>.size)
            #expect(AudioQueueGetProperty(queue, property, &states, &size) == noErr)
            return states
        }
        // After 2048 frames: the first (0.5) block is playing.
        #expect(AudioQueueOfflineRender(queue, &time, capture!, 2048) == noErr)
        var now = levels(kAudioQueueProperty_CurrentLevelMeter)
        #expect(now.allSatisfy { $0.mPeakPower == 0.5 && abs($0.mAveragePower - 0.5) < 1e-6 }, "\(now)")
        let decibels = levels(kAudioQueueProperty_CurrentLevelMeterDB)
        #expect(decibels.allSatisfy { abs($0.mPeakPower - 20 * log10(0.5)) < 1e-3 }, "\(decibels)")
        // After 6144 frames: the 0.25 block.
        time.mSampleTime += 2048
        #expect(AudioQueueOfflineRender(queue, &time, capture!, 2048) == noErr)
        time.mSampleTime += 2048
        #expect(AudioQueueOfflineRender(queue, &time, capture!, 2048) == noErr)
        now = levels(kAudioQueueProperty_CurrentLevelMeter)
        #expect(now.allSatisfy { $0.mPeakPower == 0.25 && abs($0.mAveragePower - 0.25) < 1e-6 }, "\(now)")
    }
}

@Suite("kAudioQueueProperty_ChannelLayout (no server needed)")
struct QueueChannelLayoutTests {
    @Test("A stereo queue reports the stereo layout, takes a 2-channel layout back, and refuses a 6-channel one")
    func channelLayout() throws {
        let queue = try OfflineQueueTests.newOutputQueue()
        defer { AudioQueueDispose(queue, true) }
        var size: UInt32 = 0
        #expect(AudioQueueGetPropertySize(queue, kAudioQueueProperty_ChannelLayout, &size) == noErr && Int(size) == MemoryLayout<AudioChannelLayout>.size)
        var layout = AudioChannelLayout()
        #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_ChannelLayout, &layout, &size) == noErr)
        #expect(layout.mChannelLayoutTag == kAudioChannelLayoutTag_Stereo)
        var discrete = AudioChannelLayout()
        discrete.mChannelLayoutTag = kAudioChannelLayoutTag_DiscreteInOrder | 2
        #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_ChannelLayout, &discrete, size) == noErr)
        #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_ChannelLayout, &layout, &size) == noErr)
        #expect(layout.mChannelLayoutTag == kAudioChannelLayoutTag_DiscreteInOrder | 2)
        var surround = AudioChannelLayout()
        surround.mChannelLayoutTag = (121 << 16) | 6   // kAudioChannelLayoutTag_MPEG_5_1_A
        #expect(AudioQueueSetProperty(queue, kAudioQueueProperty_ChannelLayout, &surround, size) == kAudioQueueErr_InvalidPropertyValue)
    }
}

@Suite("Run-loop mode spellings (no server needed)")
struct RunLoopModeSpellingTests {
    @Test("kCFRunLoopCommonModes passes where AudioQueueNewOutput takes a CFString?, as does CFRunLoopMode.commonModes.rawValue; CFRunLoopRunInMode takes both spellings")
    func spellings() {
        var format = pcmFormat(rate: 48000, channels: 2, bits: 16)
        let callback: AudioQueueOutputCallback = { _, _, _ in }
        for mode in [kCFRunLoopCommonModes, CFRunLoopMode.commonModes.rawValue] {
            var queue: AudioQueueRef?
            #expect(AudioQueueNewOutput(&format, callback, nil, CFRunLoopGetCurrent(), mode, 0, &queue) == noErr)
            if let queue { AudioQueueDispose(queue, true) }
        }
        #expect(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.01, false) == .timedOut)
        #expect(CFRunLoopRunInMode(CFRunLoopMode.defaultMode, 0.01, false) == .timedOut)
    }
}
