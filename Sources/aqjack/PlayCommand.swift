import AQCodecs
import AQJack
import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Glibc
import Synchronization

/// `aqjack play`: plays files through the output queue.
struct PlayCommand {
    var destinations: [String] = []
    var connect = true
    var volume: Float = 1
    var loops: Int? = 1   // nil: forever
    var startFrame: UInt64?
    var json = false
    var paths: [String] = []

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("-p"), .option("--port"):
                destinations.append(try cursor.value(for: "-p", expected: "an input port name or glob, e.g. -p 'system:playback_*'"))
            case .option("--no-connect"): connect = false
            case .option("--volume"):
                let text = try cursor.value(for: "--volume", expected: "a linear volume 0 ... 1")
                guard let value = Float(text), (0 ... 1).contains(value) else {
                    throw UsageError(message: "--volume '\(text)' is not a volume: expected a number from 0 to 1")
                }
                volume = value
            case .option("--loop"):
                let text = try cursor.value(for: "--loop", expected: "a count or inf")
                if text == "inf" {
                    loops = nil
                } else {
                    guard let count = Int(text), count >= 1 else {
                        throw UsageError(message: "--loop '\(text)' is not a loop count: expected a whole number ≥ 1 or inf")
                    }
                    loops = count
                }
            case .option("--start-at"):
                let text = try cursor.value(for: "--start-at", expected: "a JACK frame time")
                guard let value = UInt64(text) else {
                    throw UsageError(message: "--start-at '\(text)' is not a frame: expected a JACK frame time (a whole number)")
                }
                startFrame = value
            case .option("--json"): json = true
            case let .option(option):
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for play: expected -p, --no-connect, --volume, --loop, --start-at, --json, --server or --name")
            case let .operand(path):
                paths.append(path)
            }
        }
        guard !paths.isEmpty else { throw UsageError(message: "play needs at least one FILE, e.g. aqjack play take1.wav") }
    }

    enum ExitReason: String { case end, interrupt, terminate, serverShutdown = "server-shutdown", error }

    func run(globals: GlobalOptions) throws(JackError) -> Int32 {
        let signals = SignalWatcher()
        // Every file first: a bad one is reported before anything plays.
        var readers: [FrameSource] = []
        for path in paths {
            do throws(AudioStatusError) {
                readers.append(try FrameSource.open(path))
            } catch {
                Diagnostics.error(error.message)
                return ExitStatus.failure
            }
        }
        let channels = readers[0].channelCount
        let rate = readers[0].sampleRate
        if let odd = readers.first(where: { $0.channelCount != channels || $0.sampleRate != rate }) {
            Diagnostics.error("'\(odd.path)' has \(odd.channelCount) channels at \(Int(odd.sampleRate)) Hz, but '\(readers[0].path)' has \(channels) at \(Int(rate)) Hz; play files of one shape together")
            return ExitStatus.failure
        }
        let client = try JackClient(name: globals.clientName, server: globals.server)
        let inputs = client.portNames(direction: .input, audioOnly: true)
        var targets: [String] = []
        if connect {
            if destinations.isEmpty {
                targets = client.portNames(direction: .input, physicalOnly: true, audioOnly: true)
            } else {
                let (selected, unmatched) = PortMatching.select(destinations, from: inputs)
                if !unmatched.isEmpty {
                    client.close()
                    Diagnostics.error("no JACK input port matches \(unmatched.map { "'\($0)'" }.joined(separator: ", ")) on server '\(client.serverName)'; `aqjack --ports --input` lists them")
                    return ExitStatus.failure
                }
                targets = selected
            }
        }
        // The queue plays native floats; each file's packets are decoded into them.
        let format = AudioStreamBasicDescription(mSampleRate: rate, mFormatID: AudioFormatValues.linearPCM,
                                                 mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                                 mBytesPerPacket: UInt32(4 * channels), mFramesPerPacket: 1,
                                                 mBytesPerFrame: UInt32(4 * channels), mChannelsPerFrame: UInt32(channels),
                                                 mBitsPerChannel: 32, mReserved: 0)
        let source = PlaySource(readers: readers, loops: loops)
        let stopped = Atomic<Bool>(false)
        let queue: AudioOutputQueue
        do throws(AudioQueueError) {
            queue = try AudioOutputQueue(format: format, client: client) { queue, buffer in
                if source.fill(buffer) {
                    try? queue.enqueue(buffer)
                } else if source.finish() {
                    queue.stop(immediate: false)
                }
            }
            queue.channelDestinations = Array(targets.prefix(channels))
            queue.volumeLevel = volume
            queue.onRunningChange = { running in if !running { stopped.store(true, ordering: .releasing) } }
            for _ in 0 ..< 3 {
                let buffer = try queue.allocateBuffer(byteCapacity: Int(format.mBytesPerFrame) * Int(rate) / 5)
                if source.fill(buffer) { try queue.enqueue(buffer) }
            }
            if source.finish() { queue.stop(immediate: false) }
            queue.prime()
            try queue.start(atFrame: startFrame)
        } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }

        let progress = isatty(STDOUT_FILENO) == 1 && !json
        let total = source.totalFrames.map { Double($0) / rate }
        var reason = ExitReason.end
        while true {
            if stopped.load(ordering: .acquiring) { reason = .end; break }
            if client.notifications.hasShutDown.load(ordering: .acquiring) { reason = .serverShutdown; break }
            let signal = signals.received.load(ordering: .acquiring)
            if signal != 0 { reason = signal == SIGTERM ? .terminate : .interrupt; break }
            if progress {
                let elapsed = queue.currentSampleTime / rate
                let line = String(format: "%7.1f / %@ s  underruns %d frames", elapsed, total.map { String(format: "%.1f", $0) } ?? "inf", queue.underrunFrameCount)
                FileHandle.standardOutput.write(Data(("\r\u{1B}[K" + line).utf8))
            }
            usleep(50_000)
        }
        if progress { FileHandle.standardOutput.write(Data("\n".utf8)) }
        let played = Int64(queue.playedFrameCount)
        let underruns = queue.underrunFrameCount
        let start = queue.playbackStartFrame
        let xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        if reason != .end { queue.stop(immediate: true) }
        queue.dispose()
        if reason == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))")
        }
        let report = PlayReport(files: paths, channels: channels, sampleRate: Int(rate), framesPlayed: played,
                                startFrameTime: start, underrunFrames: underruns, xruns: xruns, ports: Array(targets.prefix(channels)),
                                exitReason: reason.rawValue)
        report.print(json: json)
        switch reason {
        case .end: return ExitStatus.success
        case .interrupt: return 130
        case .terminate: return 143
        case .serverShutdown, .error: return ExitStatus.failure
        }
    }
}

/// Reads the files (looping as asked) into output buffers as native floats: linear PCM, FLAC,
/// ALAC, Ogg, MP3 ... through libsndfile, AAC decoded and trimmed by its packet table. Queue
/// thread and the starting thread, one at a time.
final class PlaySource: @unchecked Sendable {
    private let readers: [FrameSource]
    private let lock = NSLock()
    private var fileIndex = 0
    private var loopsLeft: Int?
    private var exhausted = false
    private var finishReported = false

    init(readers: [FrameSource], loops: Int?) {
        self.readers = readers
        loopsLeft = loops.map { $0 - 1 }
    }

    /// Frames in all, or nil when looping forever.
    var totalFrames: Int64? {
        guard let loops = lock.withLock({ loopsLeft }) else { return nil }
        return readers.reduce(0) { $0 + $1.frameCount } * Int64(loops + 1)
    }

    /// Fills `buffer` with the next frames; false when everything has been read.
    func fill(_ buffer: AudioQueueBufferRef) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let channels = readers[0].channelCount
        let capacity = Int(buffer.pointee.mAudioDataBytesCapacity) / (4 * channels)
        let output = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
        var filled = 0
        while filled < capacity && !exhausted {
            let got = (try? readers[fileIndex].read(into: output + filled * channels, maximumFrames: capacity - filled)) ?? 0
            if got == 0 {
                advance()
                continue
            }
            filled += got
        }
        buffer.pointee.mAudioDataByteSize = UInt32(filled * 4 * channels)
        return filled > 0
    }

    private func advance() {
        readers[fileIndex].rewind()
        fileIndex += 1
        guard fileIndex == readers.count else { return }
        fileIndex = 0
        if let left = loopsLeft {
            if left == 0 { exhausted = true } else { loopsLeft = left - 1 }
        }
    }

    /// True once, when everything has been read and handed out: time to drain.
    func finish() -> Bool {
        lock.withLock {
            guard exhausted, !finishReported else { return false }
            finishReported = true
            return true
        }
    }
}

/// The final summary of `aqjack play`.
struct PlayReport: Encodable {
    let files: [String]
    let channels: Int
    let sampleRate: Int
    let framesPlayed: Int64
    let startFrameTime: UInt64?
    let underrunFrames: Int
    let xruns: Int
    let ports: [String]
    let exitReason: String

    func print(json: Bool) {
        printSummary(self, json: json) {
            """
            played \(files.joined(separator: ", ")): \(channels) ch, \(sampleRate) Hz, \(framesPlayed) frames from JACK frame \(startFrameTime.map(String.init) ?? "-")
              underruns \(underrunFrames) frames, xruns \(xruns), stopped by: \(exitReason)
            """
        }
    }
}
