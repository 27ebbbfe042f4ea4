import AQCodecs
import AQCore
import AQMedia
import AQSession
import AQTestSupport
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization
import Testing

/// The session library on the offline driver: no JACK server, no sleep. Every frame the driver
/// runs is delivered (the run returns once the queue has called back for it), and finishing
/// the session waits for the disk-writer thread, so the test is deterministic.
@Suite("Sessions on the offline driver (no server needed)")
struct OfflineSessionTests {
    /// Frame `frame`'s sample: loud (-6 dBFS and up) in `loud`, else quiet (below -74 dBFS);
    /// every frame's value its own, so a file shows exactly which frames it holds.
    static func sample(_ frame: Int, loud: Range<Int>) -> Float {
        loud.contains(frame) ? 0.5 + Float(frame) * 1e-6 : Float(frame) * 1e-9
    }

    @Test("a take triggered at -40 dBFS with 0.1 s of pre-roll and a 0.25 s hold, split into files of 0.25 s: exactly the frames from 4800 before the first loud frame to 12000 after the last, in files of 12000, 12000 and 4800 frames, each with the device frame of its first frame as TimeReference")
    func triggeredSplitTake() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-offline-session-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let loud = 48_000 ..< 60_000
        let clockStart: UInt64 = 1_000_000

        // What a library user writes (docs/SESSIONS.md shows these lines).
        let driver = OfflineDriver(sampleRate: 48000, bufferSize: 256, startFrame: clockStart)
        let format = CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 1)
        let layout = try LinearPCMLayout(validating: format)
        let takes = try TakeFiles(path: folder + "/take.wav", numbered: true, layout: layout, stream: DiskStream(ringBytes: 1 << 22)) {
            (take: String) throws(AudioFileError) in
            try TimeSplitFiles(path: take, splitFrames: 12_000) { (part: String) throws(AudioFileError) in
                try AudioFile.create(path: part, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true).pcmWriter!
            }
        }
        let trigger = TriggerController(layout: layout, start: .level(0.01), holdSeconds: 0.25, preRollSeconds: 0.1, sampleRate: 48000)
        let session = TakeSession(takes: takes, controller: trigger)
        let queue = try AudioInputQueue(format: format, driver: driver, recordingInto: session, bufferBytes: 4800 * 4)
        try queue.start()
        driver.run(frames: 96_000) { _, first, samples in
            for index in samples.indices { samples[index] = Self.sample(Int(first - clockStart) + index, loud: loud) }
        }
        queue.stop(immediate: true)
        let failure = session.finish()
        queue.dispose()
        // (end of what a library user writes)

        #expect(failure == nil, "\(failure ?? "")")
        let first = loud.lowerBound - 4_800, end = loud.upperBound + 12_000
        let expected = ["/take-001-001.wav", "/take-001-002.wav", "/take-001-003.wav"].map { folder + $0 }
        #expect(session.paths == expected)
        #expect(session.takeCount == 1 && session.summary.frames == Int64(end - first) && session.summary.lost == 0)
        var next = first
        for (path, length) in zip(expected, [12_000, 12_000, 4_800]) {
            let part = try SoundFileContents(path: path)
            #expect(part.frames == length, "\(path): \(part.frames) frames")
            #expect(part.timeReference == Int64(clockStart) + Int64(next), "\(path): TimeReference \(String(describing: part.timeReference))")
            let wrong = (0 ..< min(part.frames, length)).filter { part.samples[$0] != Self.sample(next + $0, loud: loud) }.count
            #expect(wrong == 0, "\(path): \(wrong) frames wrong")
            next += length
        }
        #expect(next == end)
    }
}

extension OfflineSessionTests {
    @Test("a PCM recording across 300 device frames the driver skipped: the queue fills them with silence where they were, the session appends buffer after buffer and counts them lost (300, from the buffers' gap ranges); every other frame bit-exact at file frame = device frame - first")
    func pcmGapFilledByTheQueue() throws {
        let path = NSTemporaryDirectory() + "aqjack-offline-pcm-gap-\(getpid()).wav"
        defer { unlink(path) }
        let driver = OfflineDriver(sampleRate: 48000, bufferSize: 256, startFrame: 5000)
        let format = CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 1)
        let file = try AudioFile.create(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true).pcmWriter!
        let session = RecordSession(writer: DiskBackedFiles(file, stream: try DiskStream(ringBytes: 1 << 22)), targetFrames: nil, deviceRate: 48000)
        let queue = try AudioInputQueue(format: format, driver: driver, recordingInto: session, bufferBytes: 1000 * 4)
        defer { queue.dispose() }
        try queue.start()
        let ramp = { (_: Int, first: UInt64, samples: UnsafeMutableBufferPointer<Float>) in
            for index in samples.indices { samples[index] = 0.1 + Float(Int(first) + index - 5000) * 1e-6 }
        }
        driver.run(frames: 10_240, input: ramp)
        driver.skip(frames: 300)
        driver.run(frames: 5_120, input: ramp)
        queue.stop()
        #expect(session.finish(queue: queue) == nil)
        #expect(session.summary.lost == 300 && session.lostFrames(queue: queue) == 300 && session.summary.start == 5000)
        let contents = try SoundFileContents(path: path)
        #expect(contents.frames == 10_240 + 300 + 5_120)
        let wrong = (0 ..< contents.frames).filter { frame in
            let expected: Float = (10_240 ..< 10_540).contains(frame) ? 0 : 0.1 + Float(frame) * 1e-6
            return contents.samples[frame] != expected
        }
        #expect(wrong.isEmpty, "\(wrong.count) frames wrong, the first at \(wrong.first ?? -1)")
        #expect(contents.timeReference == 5000)
    }

    @Test("a take triggered at -40 dBFS recorded at 44.1 kHz from a 48 kHz driver: the take is 0.1 s of pre-roll, 0.25 s loud and a 0.25 s hold in the file's rate (26,460 frames, within the resampler's edge), no frame lost, its TimeReference in the file's rate")
    func resampledTriggeredTake() throws {
        let path = NSTemporaryDirectory() + "aqjack-offline-resampled-take-\(getpid()).wav"
        defer { unlink(path) }
        let clockStart: UInt64 = 480_000
        let driver = OfflineDriver(sampleRate: 48000, bufferSize: 256, startFrame: clockStart)
        let format = CompressedFormatValues.floatPCM(sampleRate: 44100, channelCount: 1)
        let layout = try LinearPCMLayout(validating: format)
        let takes = try TakeFiles(path: path, numbered: false, layout: layout, stream: DiskStream(ringBytes: 1 << 22)) {
            (take: String) throws(AudioFileError) in
            try AudioFile.create(path: take, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true).pcmWriter!
        }
        let trigger = TriggerController(layout: layout, start: .level(0.01), holdSeconds: 0.25, preRollSeconds: 0.1, sampleRate: 44100)
        let session = TakeSession(takes: takes, controller: trigger, deviceFramesPerFileFrame: 48000.0 / 44100)
        let queue = try AudioInputQueue(format: format, driver: driver, recordingInto: session, bufferBytes: 4410 * 4)
        defer { queue.dispose() }
        try queue.start()
        // Loud (0.5) for device frames 48,000 ..< 60,000 of the run (1 ... 1.25 s), silent around.
        driver.run(frames: 96_000) { _, first, samples in
            for index in samples.indices { samples[index] = (48_000 ..< 60_000).contains(Int(first - clockStart) + index) ? 0.5 : 0 }
        }
        queue.stop(immediate: true)
        #expect(session.finish() == nil)
        let contents = try SoundFileContents(path: path)
        // The level is crossed within a few frames of the edge (the resampler's filter rings).
        let expectedStart = Double(clockStart + 48_000) * 44100 / 48000 - 4410
        #expect(abs(contents.frames - 26_460) <= 8, "\(contents.frames) frames")
        #expect(abs(Double(contents.timeReference ?? 0) - expectedStart) <= 8, "TimeReference \(String(describing: contents.timeReference)), expected about \(expectedStart)")
        #expect(session.summary.lost == 0 && session.lostFrames(queue: queue) == 0)
    }

    @Test("an AAC recording across 300 device frames the driver skipped: the queue fills them with silence and the session's lost frames count them (300), the file holds all 15300 frames after its priming (ffprobe)")
    func compressedGapCounted() throws {
        let path = NSTemporaryDirectory() + "aqjack-offline-aac-gap-\(getpid()).m4a"
        defer { unlink(path) }
        let driver = OfflineDriver(sampleRate: 48000, bufferSize: 256)
        var format = AudioStreamBasicDescription()
        format.mSampleRate = 48000
        format.mFormatID = AudioFormatValues.mpeg4AAC
        format.mFramesPerPacket = 1024
        format.mChannelsPerFrame = 2
        let box = Mutex<PacketRecordSession?>(nil)
        let queue = try AudioInputQueue(format: format, driver: driver) { queue, buffer, time in
            if box.withLock({ $0 })?.handle(buffer, startTime: time, gapSilence: queue.gapSilenceInDeliveredBuffer) == true { try? queue.enqueue(buffer) }
        }
        defer { queue.dispose() }
        let file = try AudioFile.create(path: path, fileType: AudioFileTypeValues.m4a, format: queue.format, eraseExisting: true).packetWriter!
        let writer = DiskBackedPacketFile(file, stream: try DiskStream(ringBytes: 1 << 22))
        try writer.setMagicCookie(queue.magicCookie)
        let session = PacketRecordSession(writer: writer, targetFrames: nil, priming: queue.packetTableInfo?.priming ?? 0,
                                          framesPerPacket: 1024, deviceFramesPerFileFrame: 1)
        box.withLock { $0 = session }
        for _ in 0 ..< 3 { try queue.enqueue(queue.allocateBuffer(byteCapacity: 32_768)) }
        try queue.start()
        let tone = { (_: Int, first: UInt64, samples: UnsafeMutableBufferPointer<Float>) in
            for index in samples.indices { samples[index] = 0.25 * sin(Float(Int(first) + index) * 0.05) }
        }
        driver.run(frames: 10_000, input: tone)
        driver.skip(frames: 300)
        driver.run(frames: 5_000, input: tone)
        queue.stop()
        let failure = session.finish(queue: queue)
        #expect(failure == nil, "\(failure ?? "")")
        #expect(session.summary.lost == 0)
        #expect(session.lostFrames(queue: queue) == 300)
        // Its length after the priming, as the edit list says it (ffprobe).
        let probe = try ExternalTool.run("ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path])
        #expect(probe.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "15300", "\(probe.standardOutput)")
    }
}

/// Playback sessions on the offline driver: files in sequence, looped, every frame exact.
@Suite("Playback sessions on the offline driver (no server needed)")
struct OfflinePlaybackSessionTests {
    /// Writes `frames` frames of `channels` channels of float WAV whose sample is `value(frame, channel)`.
    static func writeFile(_ path: String, frames: Int, channels: Int, value: (Int, Int) -> Float) throws {
        let format = CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: channels)
        let file = try AudioFile.create(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true).pcmWriter!
        let samples = (0 ..< frames * channels).map { value($0 / channels, $0 % channels) }
        try samples.withUnsafeBytes { try file.append($0.baseAddress!, frames: frames) }
        try file.close()
    }

    @Test("a stereo file and a mono file in sequence, looped twice, started at device frame 1000: silence before, then every frame of each file in order (the mono one on both channels), exactly, and silence after; the session ends by itself with 24000 frames played")
    func sequenceLoopedExact() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-offline-play-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let stereo = { (frame: Int, channel: Int) -> Float in Float(frame + 1) * 1e-5 * (channel == 0 ? 1 : -1) }
        let mono = { (frame: Int, _: Int) -> Float in 0.5 - Float(frame) * 1e-5 }
        try Self.writeFile(folder + "/a.wav", frames: 7000, channels: 2, value: stereo)
        try Self.writeFile(folder + "/b.wav", frames: 5000, channels: 1, value: mono)

        let driver = OfflineDriver(sampleRate: 48000, bufferSize: 256)
        let files = try FileSequence(readers: [FrameSource.open(folder + "/a.wav"), FrameSource.open(folder + "/b.wav")],
                                     loops: 2, channelCount: 2, sampleRate: 48000)
        let session = try PlaybackSession(files: files, driver: driver)
        defer { session.queue.dispose() }
        try session.start(atFrame: 1000)
        var played: [[Float]] = [[], []]
        while !session.hasEnded && played[0].count < 48_000 {
            driver.run(frames: 1024, output: { channel, _, samples in played[channel] += samples })
        }

        #expect(session.hasEnded)
        #expect(files.failure == nil)
        #expect(session.framesPlayed == 24_000)
        #expect(session.queue.playbackStartFrame == 1000)
        var expected: [[Float]] = [Array(repeating: 0, count: 1000), Array(repeating: 0, count: 1000)]
        for _ in 0 ..< 2 {
            for channel in 0 ..< 2 {
                expected[channel] += (0 ..< 7000).map { stereo($0, channel) }
                expected[channel] += (0 ..< 5000).map { mono($0, channel) }
            }
        }
        for channel in 0 ..< 2 {
            let wrong = played[channel].indices.filter { played[channel][$0] != ($0 < expected[channel].count ? expected[channel][$0] : 0) }
            #expect(wrong.isEmpty, "channel \(channel): \(wrong.count) samples wrong, the first at frame \(wrong.first ?? -1)")
            #expect(played[channel].count >= expected[channel].count)
        }
    }
}

extension OfflineSessionTests {
    @Test("takes that follow the offline driver's transport (multi): a roll from a locate to 96000, a roll on from where it stopped, a locate while rolling to 500000: three files of exactly the frames that rolled (10000, 3000, 7000), each's TimeReference the transport frame of its first frame")
    func transportTakes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-offline-transport-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let driver = OfflineDriver(sampleRate: 48000, bufferSize: 256)
        let format = CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 1)
        let layout = try LinearPCMLayout(validating: format)
        let takes = try TakeFiles(path: folder + "/song.wav", numbered: true, layout: layout, stream: DiskStream(ringBytes: 1 << 22)) {
            (take: String) throws(AudioFileError) in
            try AudioFile.create(path: take, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true).pcmWriter!
        }
        let session = TakeSession(takes: takes, controller: TransportController(multi: true))
        let queue = try AudioInputQueue(format: format, driver: driver, recordingInto: session, bufferBytes: 1000 * 4)
        defer { queue.dispose() }
        try queue.start()
        // Device frame f holds (f + 1) / 2^20: a sample names its frame.
        let frames = { (_: Int, first: UInt64, samples: UnsafeMutableBufferPointer<Float>) in
            for index in samples.indices { samples[index] = Float(Int(first) + index + 1) / 1_048_576 }
        }
        driver.run(frames: 1_000, input: frames)
        try driver.locateTransport(to: 96_000)
        driver.startTransport()
        driver.run(frames: 10_000, input: frames)
        driver.stopTransport()
        driver.run(frames: 5_000, input: frames)
        driver.startTransport()
        driver.run(frames: 3_000, input: frames)
        try driver.locateTransport(to: 500_000)
        driver.run(frames: 7_000, input: frames)
        driver.stopTransport()
        driver.run(frames: 1_000, input: frames)
        queue.stop()
        #expect(session.finish(queue: queue) == nil)

        let expected: [(device: Int, frames: Int, transport: Int)] = [(1_000, 10_000, 96_000), (16_000, 3_000, 106_000), (19_000, 7_000, 500_000)]
        #expect(session.paths == (1 ... 3).map { folder + "/song-00\($0).wav" })
        #expect(session.summary.frames == 20_000 && session.summary.lost == 0)
        for (path, take) in zip(session.paths, expected) {
            let contents = try SoundFileContents(path: path)
            #expect(contents.frames == take.frames, "\(path): \(contents.frames) frames")
            #expect(contents.timeReference == Int64(take.transport), "\(path): TimeReference \(String(describing: contents.timeReference))")
            let wrong = (0 ..< min(contents.frames, take.frames)).filter { contents.samples[$0] != Float(take.device + $0 + 1) / 1_048_576 }
            #expect(wrong.isEmpty, "\(path): \(wrong.count) frames wrong, the first at \(wrong.first ?? -1)")
        }
    }
}
