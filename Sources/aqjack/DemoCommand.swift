import AQCodecs
import AQJack
import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// `aqjack demo`: plays a test signal through an output queue, records it back through an input
/// queue connected by JACK, writes the recording to a WAV file, checks it and reports.
struct DemoCommand {
    var seconds = 3.0
    var path = "aqjack-demo.wav"
    /// FILE given: an existing file there is refused without `--force`. The default
    /// `aqjack-demo.wav` is the demo's own output and is replaced on every run, so the README's
    /// main command can run again.
    var pathGiven = false
    var force = false

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("-d"), .option("--duration"):
                seconds = try cursor.real(for: "-d", in: 0 ... 600, excludingLowerBound: true, meaning: "a duration in seconds")
            case .option("--force"): force = true
            case let .option(option):
                if try globals.parse(option, from: &cursor) { continue }
                if option == "-o" || option == "--output" {
                    throw UsageError(message: "demo takes its output file as its operand, not '\(option)': aqjack demo [-d SECONDS] [--force] [FILE]")
                }
                throw UsageError(message: "unknown option '\(option)' for demo: expected -d, --force, --server or --name, then FILE")
            case let .operand(word):
                guard !pathGiven else {
                    throw UsageError(message: "demo takes one FILE, got '\(path)' and '\(word)'")
                }
                path = word
                pathGiven = true
            }
        }
    }

    /// Channel 1: 1 kHz at -6 dBFS; channel 2: 440 Hz at -12 dBFS; frame `n` from the start.
    static func signal(channel: Int, frame: Int, rate: Double) -> Float {
        let (frequency, amplitude) = channel == 0 ? (1000.0, 0.5) : (440.0, 0.25)
        return Float(amplitude * sin(2 * Double.pi * frequency * Double(frame) / rate))
    }

    func run(globals: GlobalOptions) throws(JackError) -> Int32 {
        // The output first: a file that cannot be written is refused before any server starts.
        do throws(AudioFileError) {
            try OutputPath.checkCreatable(path, eraseExisting: force || !pathGiven)
        } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }
        let server: DemoServer
        do {
            server = try DemoServer(requested: globals.server)
        } catch {
            Diagnostics.error("could not start a private JACK server: is jackd installed (Scripts/setup.sh)? \(error)")
            return ExitStatus.failure
        }
        defer { server.stop() }
        do {
            return try runDemo(server: server.name, clientName: globals.clientName)
        } catch {
            Diagnostics.error("\(error)")
            return ExitStatus.failure
        }
    }

    private func runDemo(server: String, clientName: String) throws -> Int32 {
        let channels = 2
        let player = try AudioOutputQueueFactory.make(channels: channels, clientName: clientName + "-play", server: server)
        let rate = player.format.mSampleRate
        let total = Int(seconds * rate)
        let next = Mutex(0)
        player.onBufferReturned = { buffer in
            let start = next.withLock { value -> Int in
                defer { value += Int(buffer.pointee.mAudioDataBytesCapacity) / (4 * channels) }
                return value
            }
            let count = min(Int(buffer.pointee.mAudioDataBytesCapacity) / (4 * channels), total - start)
            guard count > 0 else { return false }
            let samples = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
            for frame in 0 ..< count {
                for channel in 0 ..< channels { samples[frame * channels + channel] = Self.signal(channel: channel, frame: start + frame, rate: rate) }
            }
            buffer.pointee.mAudioDataByteSize = UInt32(count * 4 * channels)
            return true
        }
        let recorded = DemoRecording()
        let recorder = try AudioInputQueue(format: player.format, driver: JackDriver(name: clientName + "-rec", server: server)) { queue, buffer, startTime in
            recorded.append(buffer, startTime: startTime, channels: channels)
            try? queue.enqueue(buffer)
        }
        defer { recorder.dispose(); player.queue.dispose() }
        recorder.currentDevice = player.queue.driver.name
        for _ in 0 ..< 4 { try recorder.enqueue(recorder.allocateBuffer(byteCapacity: 4800 * 4 * channels)) }
        try player.enqueueFirstBuffers(count: 3, byteCapacity: 4096 * 4 * channels)
        player.queue.channelDestinations = []
        player.queue.prime()
        try recorder.start()   // connects the recorder to the player's ports
        let startFrame = player.queue.nearestStartFrame() + UInt64(rate / 10)
        try recorder.start(atFrame: startFrame)
        try player.queue.start(atFrame: startFrame)
        print("aqjack demo: playing \(seconds) s of two sines on \(player.queue.driver.name):out_1..2, recording them on \(recorder.driver.name):in_1..2 (server '\(server)', \(Int(rate)) Hz, period \(recorder.driver.bufferSize))")
        let stopped = Atomic<Bool>(false)
        player.queue.onRunningChange = { running in if !running { stopped.store(true, ordering: .releasing) } }
        let deadline = Date().addingTimeInterval(seconds + 10)
        while !stopped.load(ordering: .acquiring) && Date() < deadline { usleep(20_000) }
        usleep(UInt32(4 * recorder.driver.bufferSize) * 1_000_000 / UInt32(rate) + 50_000)
        recorder.stop()

        // Write what was recorded, from the scheduled start frame, as float WAV with BWF.
        let (samples, firstTime, gaps) = recorded.contents(from: Double(startFrame))
        let frames = min(samples.count / channels, total)
        let writer = try AudioFile.create(path: path, fileType: AudioFileTypeValues.wave, format: recorder.format, eraseExisting: true).pcmWriter!
        try writer.setTimeReference(startFrame)
        _ = try samples.withUnsafeBytes { try writer.writePackets($0.baseAddress!, byteCount: frames * 4 * channels, startPacket: 0, packetCount: frames) }
        try writer.close()

        // Check it: every frame the one played, at the scheduled frame, nothing lost.
        var wrong = 0
        for frame in 0 ..< frames {
            for channel in 0 ..< channels where samples[frame * channels + channel] != Self.signal(channel: channel, frame: frame, rate: rate) { wrong += 1 }
        }
        // jackd2 1.9.21 skips or repeats a cycle's frame time around an xrun (docs/JACK.md, "Known
        // behaviour of JACK") while the audio itself runs on: with every sample exact, breaks in
        // the time stamps are the server's, up to two per reported xrun.
        let xruns = recorder.driver.xrunCount
        let timelineExplained = gaps == 0 || (xruns > 0 && gaps <= 2 * xruns)
        let ok = frames == total && wrong == 0 && timelineExplained && firstTime == Double(startFrame)
        // Meters over the whole recording (peak and RMS per channel; expected -6/-9 and -12/-15 dBFS).
        let meters = (0 ..< channels).map { channel -> String in
            var peak: Float = 0
            var sum = 0.0
            for frame in 0 ..< frames {
                let sample = samples[frame * channels + channel]
                peak = max(peak, abs(sample))
                sum += Double(sample) * Double(sample)
            }
            let rms = frames > 0 ? (sum / Double(frames)).squareRoot() : 0
            return String(format: "ch%d peak %.1f dBFS, RMS %.1f dBFS", channel + 1, 20 * log10(max(Double(peak), 1e-9)), 20 * log10(max(rms, 1e-9)))
        }
        print("""
        aqjack demo: wrote \(path): \(frames) frames × \(channels) ch, float WAV, BWF TimeReference \(startFrame)
          check: \(ok ? "OK" : "FAILED") — frames \(frames)/\(total), wrong samples \(wrong), timeline gaps \(gaps)\(gaps > 0 && timelineExplained ? " (JACK re-stamped cycles during \(xruns) xruns; the audio is exact)" : ""), first frame at \(firstTime.map { String(Int($0)) } ?? "-") (scheduled \(startFrame))
          meters: \(meters.joined(separator: "; "))
          playback underruns \(player.queue.underrunFrameCount) frames, recording overruns \(recorder.overrunFrameCount), xruns \(xruns)
        """)
        return ok ? ExitStatus.success : ExitStatus.failure
    }
}

/// An output queue whose used-up buffers are refilled by a closure (false: nothing left, drain).
final class AudioOutputQueueFactory: @unchecked Sendable {
    let queue: AudioOutputQueue
    var onBufferReturned: (AudioQueueBufferRef) -> Bool = { _ in false }
    var format: AudioStreamBasicDescription { queue.format }

    private init(queue: AudioOutputQueue) { self.queue = queue }

    static func make(channels: Int, clientName: String, server: String) throws -> AudioOutputQueueFactory {
        let format = AudioStreamBasicDescription(mSampleRate: 0, mFormatID: AudioFormatValues.linearPCM,
                                                 mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                                 mBytesPerPacket: UInt32(4 * channels), mFramesPerPacket: 1,
                                                 mBytesPerFrame: UInt32(4 * channels), mChannelsPerFrame: UInt32(channels),
                                                 mBitsPerChannel: 32, mReserved: 0)
        var box: AudioOutputQueueFactory?
        let queue = try AudioOutputQueue(format: format, driver: JackDriver(name: clientName, server: server)) { queue, buffer in
            guard let box else { return }
            if box.onBufferReturned(buffer) { try? queue.enqueue(buffer) } else { queue.stop(immediate: false) }
        }
        box = AudioOutputQueueFactory(queue: queue)
        return box!
    }

    func enqueueFirstBuffers(count: Int, byteCapacity: Int) throws {
        for _ in 0 ..< count {
            let buffer = try queue.allocateBuffer(byteCapacity: byteCapacity)
            if onBufferReturned(buffer) { try queue.enqueue(buffer) } else { queue.stop(immediate: false) }
        }
    }
}

/// The demo's recording, kept in memory with each buffer's start time.
final class DemoRecording: @unchecked Sendable {
    private let lock = NSLock()
    private var pieces: [(time: Double, samples: [Float])] = []

    func append(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp, channels: Int) {
        let count = Int(buffer.pointee.mAudioDataByteSize) / 4
        let samples = Array(UnsafeBufferPointer(start: buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self), count: count))
        lock.withLock { pieces.append((startTime.mSampleTime, samples)) }
    }

    /// The samples from device frame `start` on, the time of the first, and the gaps between pieces.
    func contents(from start: Double) -> (samples: [Float], firstTime: Double?, gaps: Int) {
        lock.withLock {
            var samples: [Float] = []
            var gaps = 0
            var expected: Double?
            for piece in pieces {
                if let expected, expected != piece.time { gaps += 1 }
                expected = piece.time + Double(piece.samples.count / 2)
                samples += piece.samples
            }
            guard let first = pieces.first else { return ([], nil, gaps) }
            let skip = max(0, Int(start - first.time)) * 2
            return (Array(samples.dropFirst(skip)), first.time + Double(skip / 2), gaps)
        }
    }
}
