import AQCodecs
import AQJack
import AQMedia
import AQServerSuite
import AQSession
import AQTestSupport
import AudioQueue
import AudioToolbox
import CAudioTypes
import Foundation
import Synchronization
import Testing

/// Recording files whose writes can be made to block on demand: a disk that stalls, the one
/// fault the real disk cannot produce when a test asks. Everything else is the real file.
private final class StallingFiles: RecordingFiles, @unchecked Sendable {
    let file: any RecordingFiles
    private let condition = NSCondition()
    private var stallUntil: Date?
    /// Frames written when the stall was asked for (the disk stalls at its next write).
    let stallAfterFrames: Int64
    let stallSeconds: Double
    private(set) var stalledSeconds = 0.0

    init(_ file: any RecordingFiles, stallAfterFrames: Int64, stallSeconds: Double) {
        self.file = file
        self.stallAfterFrames = stallAfterFrames
        self.stallSeconds = stallSeconds
    }

    var layout: LinearPCMLayout { file.layout }
    var sampleRate: Double { file.sampleRate }
    var packetCount: Int64 { file.packetCount }
    var paths: [String] { file.paths }
    var canCarryTimeReference: Bool { file.canCarryTimeReference }
    func markStart(frame: UInt64, originated: Date?) throws(AudioFileError) { try file.markStart(frame: frame, originated: originated) }
    func close() throws(AudioFileError) { try file.close() }

    func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
        if stalledSeconds == 0 && file.packetCount >= stallAfterFrames {
            let start = Date()
            Thread.sleep(forTimeInterval: stallSeconds)
            stalledSeconds = Date().timeIntervalSince(start)
        }
        try file.append(bytes, frames: frames)
    }
}

/// What a file of ``TestSignal`` frames holds: frames that carry the signal continuously from the
/// first, frames of silence, and frames that are neither.
private struct SignalFileCheck: CustomStringConvertible {
    var frames = 0
    var silentFrames = 0
    var silentRuns = 0
    var wrongFrames = 0
    /// Silent runs after which the signal resumed at another frame than the one the timeline
    /// puts there (a silent run must stand for exactly the frames missing).
    var misplacedResumes = 0
    var description: String { "\(frames) frames, \(silentFrames) silent in \(silentRuns) runs, \(wrongFrames) wrong, \(misplacedResumes) misplaced" }

    init(path: String, channels: Int) throws {
        let contents = try SoundFileContents(path: path)
        frames = contents.frames
        let samples = contents.samples
        guard frames > 0, let first = TestSignal.decode(samples[0]) else { wrongFrames = frames; return }
        var inSilence = false
        for i in 0 ..< frames {
            let row = samples[(i * channels) ..< ((i + 1) * channels)]
            if row.allSatisfy({ $0 == 0 }) {
                silentFrames += 1
                if !inSilence { silentRuns += 1 }
                inSilence = true
                continue
            }
            let expected = (first.frame &+ UInt32(i)) % TestSignal.framePeriod
            let exact = row.enumerated().allSatisfy { $0.element.bitPattern == TestSignal.sample(channel: $0.offset, frame: expected).bitPattern }
            if !exact {
                if inSilence && TestSignal.decode(row.first!)?.frame != expected { misplacedResumes += 1 }
                wrongFrames += 1
            }
            inSilence = false
        }
    }
}

extension JackServerSuite {
    @Suite("The disk-writer thread")
    struct DiskWriterTests {
        /// Records 4 s of 256 float channels from the generator through RecordSession over
        /// DiskBackedFiles over files that stall `stallSeconds` after 1 s; returns the session's
        /// summary, the frames the disk writer dropped, the longest callback, the timestamp jumps
        /// and the server's xruns.
        private func record(path: String, ringSeconds: Double, stallSeconds: Double) throws
            -> (lost: Int64, dropped: Int64, stalled: Double, longestCallback: Double, jumps: Int, xruns: Int, frames: Int64) {
            let channels = 256
            // A private server with room for 2 × 256 ports (the suite's has 64).
            let server = try PrivateJackServer(period: 256, portMaximum: 1024, realtime: true)
            defer { server.stop() }
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("dwgen"), channelCount: channels, server: server.name)
            var format = AudioStreamBasicDescription()
            format.mSampleRate = Double(generator.client.sampleRate)
            format.mFormatID = kAudioFormatLinearPCM
            format.mFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked
            format.mChannelsPerFrame = UInt32(channels)
            format.mBitsPerChannel = 32
            format.mBytesPerFrame = UInt32(4 * channels)
            format.mBytesPerPacket = format.mBytesPerFrame
            format.mFramesPerPacket = 1
            let rate = format.mSampleRate
            let file = try AudioFile.create(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true).pcmWriter!
            let stalling = StallingFiles(file, stallAfterFrames: Int64(rate), stallSeconds: stallSeconds)
            let stream = try DiskStream(ringBytes: DiskBackedFiles.ringBytes(layout: stalling.layout, sampleRate: rate, seconds: ringSeconds))
            let files = DiskBackedFiles(stalling, stream: stream)
            let session = RecordSession(writer: files, targetFrames: Int64(4 * rate), deviceRate: rate)
            let longest = Mutex<Double>(0)
            let jumps = Atomic<Int>(0)
            let expected = Mutex<Double?>(nil)
            let queue = try AudioInputQueue(format: format, driver: JackDriver(name: TestServer.uniqueClientName("dwrec"), server: server.name)) { queue, buffer, startTime in
                let frames = Double(buffer.pointee.mAudioDataByteSize) / Double(format.mBytesPerFrame)
                expected.withLock { next in
                    if let next, next != startTime.mSampleTime { jumps.add(1, ordering: .relaxed) }
                    next = startTime.mSampleTime + frames
                }
                let begin = Date()
                let keep = session.handle(buffer, startTime: startTime, gapSilence: queue.gapSilenceInDeliveredBuffer)
                let took = Date().timeIntervalSince(begin)
                longest.withLock { $0 = max($0, took) }
                if keep { try? queue.enqueue(buffer) }
            }
            queue.currentDevice = generator.client.name
            queue.gapPolicy = .silence
            for _ in 0 ..< 4 { try queue.enqueue(queue.allocateBuffer(byteCapacity: Int(format.mBytesPerFrame) * Int(rate) / 10)) }
            try queue.start()
            let deadline = Date().addingTimeInterval(20)
            while !session.isFinished.load(ordering: .acquiring) && Date() < deadline { usleep(20_000) }
            queue.stop(immediate: true)
            let failure = session.close()
            #expect(failure == nil, "\(failure ?? "")")
            let lost = session.lostFrames(queue: queue)
            queue.dispose()
            let summary = session.summary
            return (lost, files.droppedFrames, stalling.stalledSeconds, longest.withLock { $0 }, jumps.load(ordering: .relaxed),
                    generator.client.notifications.xrunCount.load(ordering: .relaxed), summary.frames)
        }

        @Test("a disk that stalls 1.5 s during a 256-channel recording: nothing lost, no callback delayed, timestamps without a jump, the file bit-exact")
        func stallShorterThanTheRing() throws {
            let path = NSTemporaryDirectory() + "aqjack-diskwriter-\(getpid()).wav"
            defer { unlink(path) }
            let result = try record(path: path, ringSeconds: 3, stallSeconds: 1.5)
            #expect(result.stalled >= 1.5, "the disk did not stall: \(result)")
            #expect(result.dropped == 0, "\(result)")
            #expect(result.frames == 4 * 48000, "\(result)")
            // The queue thread never waited on the disk: no callback near the stall's length.
            #expect(result.longestCallback < 0.25, "\(result)")
            let check = try SignalFileCheck(path: path, channels: 256)
            #expect(check.frames == 4 * 48000, "\(check)")
            #expect(check.wrongFrames <= result.xruns * 2 * 1024, "\(check), \(result)")
            if result.xruns == 0 {
                #expect(check.wrongFrames == 0, "\(check)")
                #expect(result.lost == 0, "\(result)")
                #expect(result.jumps == 0, "\(result)")
                #expect(check.silentFrames == 0, "\(check)")
            } else {
                // A server xrun skips frames for every client: the queue's timestamps jump by
                // them and the file keeps them as silence, counted as lost; the disk lost none.
                // (Around an xrun JACK can also label a cycle one cycle off for one client and
                // not the other: the signal resumes a cycle off after such a gap, misplaced, and
                // its frames are wrong until the labels agree again, within the bound above.)
                #expect(Int64(check.silentFrames) == result.lost, "\(check), \(result)")
            }
        }

        @Test("a disk that stalls longer than the ring holds: the frames lost are reported exactly, kept as silence where they belong")
        func stallLongerThanTheRing() throws {
            let path = NSTemporaryDirectory() + "aqjack-diskwriter-long-\(getpid()).wav"
            defer { unlink(path) }
            let result = try record(path: path, ringSeconds: 0.5, stallSeconds: 1.5)
            #expect(result.dropped > 0, "\(result)")
            #expect(result.longestCallback < 0.25, "\(result)")
            #expect(result.frames == 4 * 48000, "\(result)")
            let check = try SignalFileCheck(path: path, channels: 256)
            #expect(check.frames == 4 * 48000, "\(check)")
            // A server xrun can leave a stale generator cycle (wrong frames, not silence).
            #expect(check.wrongFrames <= result.xruns * 2 * 1024, "\(check), \(result)")
            if result.xruns == 0 { #expect(check.wrongFrames == 0, "\(check)") }
            // Every silent frame is a counted loss (the disk's, or a server xrun's), and the
            // disk's are all of them when the server skipped nothing.
            #expect(Int64(check.silentFrames) == result.lost, "\(check), \(result)")
            if result.xruns == 0 { #expect(result.lost == result.dropped, "\(result)") }
        }
    }
}
