import AQCodecs
import AQCore
import AQJack
import AQMedia
import AQPlugins
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
    var resampler = Resampler.Engine.soxr
    var paths: [String] = []
    /// `--transport`: the file follows JACK's transport (``TransportPlay``).
    var transport = false
    /// `--lv2` plugins the files play through, on the queue thread (latency compensated).
    var chain = PluginChainOptions()
    /// The session manager, under NSM: answered once the files play.
    var nsm: NSMClient?
    /// The largest `--loop` count (more is `inf`): keeps loops × frames inside Int64.
    static let mostLoops = 1_000_000
    /// File rates `play` accepts, in Hz: the rates JACK servers run at, with room on both sides.
    static let playableRates = 1000.0 ... 768_000.0

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("-p"), .option("--port"):
                destinations.append(try cursor.value(for: "-p", expected: "an input port name or glob, e.g. -p 'system:playback_*'"))
            case .option("--no-connect"): connect = false
            case .option("--volume"):
                volume = Float(try cursor.real(for: "--volume", in: 0 ... 1, meaning: "a linear volume"))
            case .option("--loop"):
                if cursor.peek() == "inf" {
                    _ = cursor.next()
                    loops = nil
                } else {
                    loops = try cursor.integer(for: "--loop", in: 1 ... PlayCommand.mostLoops, meaning: "a loop count (or inf)")
                }
            case .option("--start-at"):
                startFrame = try cursor.integer(for: "--start-at", in: 0 ... latestStartFrame, meaning: "a JACK frame time")
            case .option("--json"): json = true
            case .option("--transport"): transport = true
            case .option("--resampler"): resampler = try cursor.resampler(for: "--resampler")
            case let .option(option):
                if try chain.parse(option, from: &cursor) { continue }
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for play: expected -p, --no-connect, --volume, --loop, --start-at, --transport, --resampler, --lv2, --set, --preset, --json, --server or --name")
            case let .operand(path):
                paths.append(path)
            }
        }
        guard !paths.isEmpty else { throw UsageError(message: "play needs at least one FILE, e.g. aqjack play take1.wav") }
        if transport {
            // The transport says where and when: one file, placed at transport frame 0.
            if paths.count > 1 { throw UsageError(message: "--transport plays one FILE on the transport's timeline, got \(paths.count)") }
            if loops != 1 || startFrame != nil || !chain.isEmpty || volume != 1 {
                throw UsageError(message: "--transport plays the file where the transport is: drop --loop, --start-at, --volume and --lv2")
            }
        }
    }

    /// The ports to play into: the physical playback ports, the `-p` matches in natural order,
    /// or none with --no-connect; nil (the error said, the client closed) when a `-p` matches
    /// nothing.
    func targets(client: JackClient) -> [String]? {
        guard connect else { return [] }
        if destinations.isEmpty { return client.portNames(direction: .input, physicalOnly: true, audioOnly: true) }
        let (selected, unmatched) = PortMatching.select(destinations, from: client.portNames(direction: .input, audioOnly: true))
        if !unmatched.isEmpty {
            client.close()
            Diagnostics.error("no JACK input port matches \(unmatched.map { "'\($0)'" }.joined(separator: ", ")) on server '\(client.serverName)'; `aqjack --ports --input` lists them")
            return nil
        }
        return selected
    }

    /// The queue's buffers: three of 0.1 s (frames at `rate` Hz).
    static let bufferCount = 3
    static func bufferFrames(rate: Double) -> Int { Int(rate) / 10 }
    /// What the first buffer holds before the start: 40 ms (frames at `rate` Hz), 15 periods of
    /// 128 at 48 kHz. The other buffers are filled right after the start, while the ring plays
    /// these: filled before it, their 10 MB at 256 channels were copied while this thread made
    /// its connections, and the server's side of each connect shared the two vCPUs with that
    /// copy (the 256 connects took 3.5 ms longer: an LD_PRELOAD timer around `jack_connect`,
    /// 30 starts each way, alternating).
    static func firstFillFrames(rate: Double) -> Int { Int(rate) / 25 }

    /// The files' source at `sampleRate`, reading ahead the frames the first buffers take; nil
    /// (the error said) when a file cannot be converted to it.
    private func makeSource(_ readers: [FrameSource], channelCount: Int, sampleRate: Double) -> PlaySource? {
        do throws(AudioFileError) {
            let source = try PlaySource(readers: readers, loops: loops, channelCount: channelCount, sampleRate: sampleRate, resampler: resampler)
            source.startReadAhead(frames: PlayCommand.bufferCount * PlayCommand.bufferFrames(rate: sampleRate))
            return source
        } catch {
            Diagnostics.error(error.message)
            return nil
        }
    }

    enum ExitReason: String { case end, interrupt, terminate, serverShutdown = "server-shutdown", fileError = "file-error", error }

    /// Under a session manager (NSM_URL set) the JACK client is named by the session's client
    /// id, and a relative path is a file in the session's folder; then plays.
    func run(globals given: GlobalOptions) throws(JackError) -> Int32 {
        var command = self, globals = given
        do throws(NSMError) {
            if let (manager, session) = try NSMClient.join(as: "aqjack play") {
                command.paths = paths.map { $0.hasPrefix("/") ? $0 : session.path + "/" + $0 }
                globals.clientName = session.clientID
                command.nsm = manager
            }
        } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }
        defer { command.nsm?.stop() }
        return try command.play(globals: globals)
    }

    private func play(globals: GlobalOptions) throws(JackError) -> Int32 {
        StartTrace.mark("main")
        if transport { return try TransportPlay.run(path: paths[0], command: self, globals: globals) }
        let signals = SignalWatcher()
        // Every file first: a bad one is reported before anything plays.
        var readers: [FrameSource] = []
        for path in paths {
            do throws(AudioFileError) {
                readers.append(try FrameSource.open(path))
            } catch {
                Diagnostics.error(error.message)
                return ExitStatus.failure
            }
        }
        // A rate outside what a JACK server runs at cannot be played in real time (a 1 Hz file
        // would take a day a second); refuse it before connecting (issue 9, item 10).
        for reader in readers where !PlayCommand.playableRates.contains(reader.sampleRate) {
            Diagnostics.error("'\(reader.path)' is at \(reader.sampleRate) Hz: aqjack plays files at \(Int(PlayCommand.playableRates.lowerBound)) ... \(Int(PlayCommand.playableRates.upperBound)) Hz (convert it with aqjack convert -r)")
            return ExitStatus.failure
        }
        // Files of different shapes play together: the widest channel count (mono is copied to
        // every channel, others padded with silence), and one rate — the files' own when they
        // share it, else the server's — each file converted on the queue thread.
        let channels = readers.map(\.channelCount).max() ?? 1
        let rates = Set(readers.map(\.sampleRate))
        // With one rate the first buffers are read while JACK opens the client and registers
        // the ports (about 0.1 s at 256 channels); mixed rates wait for the server's rate.
        var source = rates.count == 1 ? makeSource(readers, channelCount: channels, sampleRate: readers[0].sampleRate) : nil
        if rates.count == 1 && source == nil { return ExitStatus.failure }
        StartTrace.mark("files")
        let client = try JackClient(name: globals.clientName, server: globals.server)
        StartTrace.mark("client")
        let rate = rates.count == 1 ? readers[0].sampleRate : Double(client.sampleRate)
        if source == nil { source = makeSource(readers, channelCount: channels, sampleRate: rate) }
        guard let source else {
            client.close()
            return ExitStatus.failure
        }
        guard let targets = targets(client: client) else { return ExitStatus.failure }
        StartTrace.mark("targets")
        // The queue plays native floats; each file's packets are decoded into them.
        let format = AudioStreamBasicDescription(mSampleRate: rate, mFormatID: AudioFormatValues.linearPCM,
                                                 mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                                 mBytesPerPacket: UInt32(4 * channels), mFramesPerPacket: 1,
                                                 mBytesPerFrame: UInt32(4 * channels), mChannelsPerFrame: UInt32(channels),
                                                 mBitsPerChannel: 32, mReserved: 0)
        var stages: [LV2Stage] = []
        if !chain.isEmpty {
            do throws(PluginError) {
                stages = try chain.makeStages(world: LV2World.loadedReporting(), channelCount: channels, sampleRate: rate)
            } catch {
                client.close()
                Diagnostics.error(error.message)
                return exitStatus(for: error)
            }
        }
        let stopped = Atomic<Bool>(false)
        let queue: AudioOutputQueue
        do throws(AudioQueueError) {
            queue = try AudioOutputQueue(format: format, driver: JackDriver(client: client)) { queue, buffer in
                if !source.feed(buffer, to: queue), source.finish() {
                    queue.stop(immediate: false)
                }
            }
            StartTrace.mark("queue")
            if !stages.isEmpty { try queue.setProcessingStages(stages) }
            queue.channelDestinations = Array(targets.prefix(channels))
            queue.volumeLevel = volume
            queue.onRunningChange = { running in if !running { stopped.store(true, ordering: .releasing) } }
            // Three buffers of 0.1 s (with the ring's 0.25 s, 0.55 s between the file and the
            // sound), filled from the read-ahead: copying into their fresh pages is what is left
            // of the file's cost at the start (about 10 ms at 256 channels; reading a cold file's
            // 15 MB took 20 ms more here, now hidden behind the 0.1-0.4 s of port registration).
            // The first, with only `firstFillFrames`, is filled on a helper thread while this one
            // connects the ports (a server round trip each), so the start itself only primes and
            // arms its frame; the other two right after it.
            let byteCapacity = Int(format.mBytesPerFrame) * PlayCommand.bufferFrames(rate: rate)
            let filling = BackgroundValue {
                Result { () throws(AudioQueueError) in
                    let buffer = try queue.allocateBuffer(byteCapacity: byteCapacity)
                    _ = source.feed(buffer, to: queue, maximumFrames: PlayCommand.firstFillFrames(rate: rate))
                }
            }
            let connected = Result { () throws(AudioQueueError) in try queue.connectDevice() }
            StartTrace.mark("connected")
            try filling.take().get()
            StartTrace.mark("filled")
            try connected.get()
            if source.finish() { queue.stop(immediate: false) }
            queue.prime()
            try queue.start(atFrame: startFrame)
            StartTrace.mark("started")
            for _ in 1 ..< PlayCommand.bufferCount {
                let buffer = try queue.allocateBuffer(byteCapacity: byteCapacity)
                if !source.feed(buffer, to: queue), source.finish() { queue.stop(immediate: false) }
            }
            StartTrace.report()
        } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }

        nsm?.confirmOpen(message: "playing \(paths.count) file(s) as '\(client.name)'")
        let progress = isatty(STDOUT_FILENO) == 1 && !json
        let total = source.totalFrames.map { Double($0) / rate }
        let cause = SessionLoop.run(client: client, signals: signals, finished: { stopped.load(ordering: .acquiring) }) {
            guard progress else { return }
            let elapsed = queue.currentSampleTime / rate
            let line = String(format: "%7.1f / %@ s  underruns %d frames", elapsed, total.map { String(format: "%.1f", $0) } ?? "inf", queue.underrunFrameCount)
            FileHandle.standardOutput.write(Data(("\r\u{1B}[K" + line).utf8))
        }
        var reason: ExitReason = switch cause {
        case .finished: .end
        case .serverShutdown: .serverShutdown
        case .interrupt: .interrupt
        case .terminate: .terminate
        }
        if progress { FileHandle.standardOutput.write(Data("\n".utf8)) }
        // A file that could not be read to its end (an error, or fewer frames than its header
        // promised: truncated while playing) is a failure, not an end (issue 9, item 11).
        let readFailure = source.failure
        if reason == .end, readFailure != nil { reason = .fileError }
        let deviceRate = Double(client.sampleRate)
        let deviceFrames = Int64(queue.playedFrameCount)
        let played = Int64((Double(deviceFrames) * rate / deviceRate).rounded())
        let underruns = queue.underrunFrameCount
        let start = queue.playbackStartFrame
        let xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        let timing = client.processTiming
        if reason != .end { queue.stop(immediate: true) }
        SessionLoop.waitForFreewheelEnd(client: client, signals: signals)
        SessionLoop.leaving(client, afterward: "playback had ended") { queue.dispose() }
        if let readFailure {
            Diagnostics.error("\(readFailure); played \(played) of \(source.totalFrames.map(String.init) ?? "inf") frames")
        }
        if reason == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))")
        }
        let report = PlayReport(files: paths, channels: channels, sampleRate: Int(rate), framesPlayed: played,
                                expectedFrames: source.totalFrames, deviceSampleRate: Int(deviceRate), deviceFrames: deviceFrames,
                                startFrameTime: start, underrunFrames: underruns, xruns: xruns, ports: Array(targets.prefix(channels)),
                                exitReason: reason.rawValue, processTiming: timing)
        report.print(json: json)
        // One convention for every subcommand (README, "Exit status"): stopping by Ctrl-C or
        // SIGTERM is a normal end, like a recording's; the summary's exitReason tells them apart.
        switch reason {
        case .end, .interrupt, .terminate: return ExitStatus.success
        case .serverShutdown, .fileError, .error: return ExitStatus.failure
        }
    }
}

/// Reads the files (looping as asked) into output buffers as native floats: linear PCM, FLAC,
/// ALAC, Ogg, MP3 ... through libsndfile, AAC decoded and trimmed by its packet table; a file
/// of another rate or channel count than the output goes through a ``FormatConverter``
/// (libsamplerate, channel mapping). Queue thread and the starting thread, one at a time; the
/// read-ahead's helper thread before them.
final class PlaySource: @unchecked Sendable {
    private let readers: [FrameSource]
    /// Per file: the converter to the output's shape, or nil when it already has it.
    private let converters: [FormatConverter?]
    private let channelCount: Int
    private let sampleRate: Double
    private let lock = NSLock()
    private var fileIndex = 0
    private var loopsLeft: Int?
    private var exhausted = false
    private var finishReported = false
    private var scratch: [Float] = []
    private var converterFinished = false
    /// Frames read from the current file in this pass, against what its header promised.
    private var framesFromFile: Int64 = 0
    private var readFailure: String?
    /// Frames read ahead by ``startReadAhead(frames:)`` (interleaved, `channelCount` wide),
    /// handed out by ``fill(_:)`` before anything newer; released once used up.
    private var readAhead: UnsafeMutableBufferPointer<Float>?
    private var readAheadFrames = 0
    private var readAheadUsed = 0
    /// The read-ahead's thread until the first ``fill(_:)`` has waited for it.
    private var readAheadTask: BackgroundValue<Void>?

    init(readers: [FrameSource], loops: Int?, channelCount: Int, sampleRate: Double, resampler: Resampler.Engine) throws(AudioFileError) {
        self.readers = readers
        self.channelCount = channelCount
        self.sampleRate = sampleRate
        var converters: [FormatConverter?] = []
        for reader in readers {
            if reader.channelCount == channelCount && reader.sampleRate == sampleRate {
                converters.append(nil)
            } else {
                let converter = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in
                    try FormatConverter(from: CompressedFormatValues.floatPCM(sampleRate: reader.sampleRate, channelCount: reader.channelCount),
                                        to: CompressedFormatValues.floatPCM(sampleRate: sampleRate, channelCount: channelCount))
                }
                converter.sampleRateConverterQuality = 0x7F
                converter.resamplerEngine = resampler
                converters.append(converter)
            }
        }
        self.converters = converters
        loopsLeft = loops.map { $0 - 1 }
        let frames = readers.reduce(0.0) { $0 + Double($1.frameCount) * sampleRate / $1.sampleRate }
        totalFrames = loops.map { Int64(frames.rounded()) * Int64($0) }
    }

    /// Frames in all, every loop counted (at the output rate), or nil when looping forever.
    /// Fixed at creation: it does not shrink as loops are played.
    let totalFrames: Int64?

    /// Why a file could not be played to its end (read error, or shorter than its header
    /// said), or nil.
    var failure: String? { lock.withLock { readFailure } }

    /// Reads from file `index` into `output`; 0 at its end. A read error, or an end before the
    /// frames its header promised, is kept in `readFailure` and ends playback.
    private func readFile(_ index: Int, into output: UnsafeMutablePointer<Float>, maximumFrames: Int) -> Int {
        let reader = readers[index]
        let got: Int
        do throws(AudioFileError) {
            got = try reader.read(into: output, maximumFrames: maximumFrames)
        } catch {
            readFailure = "reading \(reader.path) failed after \(framesFromFile) of its \(reader.frameCount) frames: \(error.message)"
            exhausted = true
            return 0
        }
        framesFromFile += Int64(got)
        if got == 0 && reader.frameCountIsExact && framesFromFile < reader.frameCount {
            readFailure = "\(reader.path) ended after \(framesFromFile) of the \(reader.frameCount) frames its header gives (was it truncated while playing?)"
            exhausted = true
        }
        return got
    }

    /// Reads up to `maximumFrames` output frames of file `index`, converted; 0 at its end.
    private func read(file index: Int, into output: UnsafeMutablePointer<Float>, maximumFrames: Int) -> Int {
        guard let converter = converters[index] else {
            return readFile(index, into: output, maximumFrames: maximumFrames)
        }
        let reader = readers[index]
        while converter.availableFrames == 0 && !converterFinished {
            let chunk = 4096
            if scratch.count < chunk * reader.channelCount { scratch = [Float](repeating: 0, count: chunk * reader.channelCount) }
            let got = scratch.withUnsafeMutableBufferPointer { readFile(index, into: $0.baseAddress!, maximumFrames: chunk) }
            if exhausted { return 0 }
            if got == 0 {
                try? converter.finish()
                converterFinished = true
            } else {
                try? scratch.withUnsafeBufferPointer { (floats) throws(AudioConverterError) in
                    try converter.push(frames: UnsafeRawPointer(floats.baseAddress!), frameCount: got)
                }
            }
        }
        return converter.pullFrames(into: UnsafeMutableRawPointer(output), maximumFrames: maximumFrames)
    }

    /// Starts reading the first `frames` output frames on a helper thread, so that the file
    /// is read while JACK opens the client and registers its ports (a cold file's first
    /// buffers come off the disk then, not after). Call once, before the first ``fill(_:)``,
    /// which waits for it.
    func startReadAhead(frames: Int) {
        readAheadTask = BackgroundValue { [self] in
            lock.withLock {
                let staging = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, frames * channelCount))
                readAhead = staging
                readAheadFrames = read(into: staging.baseAddress!, capacity: frames)
            }
        }
    }

    deinit {
        readAheadTask?.take()
        readAhead?.deallocate()
    }

    /// Fills `buffer` with the next frames (at most `maximumFrames`) and enqueues it; false when
    /// everything had been read (or the queue refused it: it is stopping). One buffer at a
    /// time, so the frames are enqueued in the order they were read whichever thread feeds:
    /// the starting thread and the queue's callback both do.
    func feed(_ buffer: AudioQueueBufferRef, to queue: AudioOutputQueue, maximumFrames: Int = .max) -> Bool {
        if let task = readAheadTask {
            task.take()
            readAheadTask = nil
        }
        lock.lock()
        defer { lock.unlock() }
        // The queue's lock is taken inside, never the other way round: the queue calls back
        // without holding it.
        return fill(buffer, maximumFrames: maximumFrames) && (try? queue.enqueue(buffer)) != nil
    }

    /// Fills `buffer` with the next frames; false when everything has been read. The lock is
    /// held.
    private func fill(_ buffer: AudioQueueBufferRef, maximumFrames: Int) -> Bool {
        let capacity = min(maximumFrames, Int(buffer.pointee.mAudioDataBytesCapacity) / (4 * channelCount))
        let output = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
        var filled = 0
        if let staging = readAhead {
            filled = min(capacity, readAheadFrames - readAheadUsed)
            output.update(from: staging.baseAddress! + readAheadUsed * channelCount, count: filled * channelCount)
            readAheadUsed += filled
            if readAheadUsed == readAheadFrames {
                staging.deallocate()
                readAhead = nil
            }
        }
        filled += read(into: output + filled * channelCount, capacity: capacity - filled)
        buffer.pointee.mAudioDataByteSize = UInt32(filled * 4 * channelCount)
        return filled > 0
    }

    /// Reads up to `capacity` output frames into `output` across files and loops; the lock is
    /// held. Fewer only at the end.
    private func read(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        let channels = channelCount
        var filled = 0
        while filled < capacity && !exhausted {
            let got = read(file: fileIndex, into: output + filled * channels, maximumFrames: capacity - filled)
            if got == 0 {
                if !exhausted { advance() }
                continue
            }
            filled += got
        }
        return filled
    }

    private func advance() {
        framesFromFile = 0
        readers[fileIndex].rewind()
        converters[fileIndex]?.reset()
        converterFinished = false
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
    /// Frames played, at the files' (output) rate.
    let framesPlayed: Int64
    /// Frames the files hold in all (nil when looping forever).
    let expectedFrames: Int64?
    /// The JACK server's rate and the device frames played at it.
    let deviceSampleRate: Int
    let deviceFrames: Int64
    let startFrameTime: UInt64?
    let underrunFrames: Int
    let xruns: Int
    let ports: [String]
    let exitReason: String
    /// How the process callback kept time (its slow cycles are the xruns aqjack caused).
    let processTiming: ProcessTiming

    func print(json: Bool) {
        printSummary(self, json: json) {
            """
            played \(files.joined(separator: ", ")): \(channels) ch, \(framesPlayed)\(expectedFrames.map { " of \($0)" } ?? "") frames at \(sampleRate) Hz (\(deviceFrames) JACK frames at \(deviceSampleRate) Hz) from JACK frame \(startFrameTime.map(String.init) ?? "-")
              underruns \(underrunFrames) frames, xruns \(xruns), stopped by: \(exitReason)
            """
        }
    }
}


