import AQCodecs
import AQCore
import AQJack
import AQMedia
import AQSession
import AQWeb
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
    /// `--http [ADDRESS:]PORT` and `--events FILE|-` (docs/WEB.md).
    var http = HTTPOptions()
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
                if try http.parse(option, from: &cursor) { continue }
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for play: expected -p, --no-connect, --volume, --loop, --start-at, --transport, --resampler, --plugin, --lv2, --set, --preset, --http, --http-token, --http-token-file, --events, --json, --server or --name")
            case let .operand(path):
                paths.append(path)
            }
        }
        guard !paths.isEmpty else { throw UsageError(message: "play needs at least one FILE, e.g. aqjack play take1.wav") }
        try http.validate()
        if paths.contains(where: MIDIPlay.isMIDIFile) {
            // A MIDI file plays alone, to MIDI ports, as it is.
            guard paths.count == 1 else { throw UsageError(message: "play takes one MIDI FILE at a time, alone (got \(paths.count) files)") }
            if transport || loops != 1 || !chain.isEmpty || volume != 1 || http.port != nil || http.events != nil {
                throw UsageError(message: "a MIDI file plays to MIDI ports with -p, --no-connect, --start-at and --json: drop --transport, --loop, --volume, --lv2 and --http")
            }
        }
        if transport {
            // The transport says where and when: one file, placed at transport frame 0.
            if paths.count > 1 { throw UsageError(message: "--transport plays one FILE on the transport's timeline, got \(paths.count)") }
            if loops != 1 || startFrame != nil || !chain.isEmpty || volume != 1 {
                throw UsageError(message: "--transport plays the file where the transport is: drop --loop, --start-at, --volume and --lv2")
            }
        }
    }

    /// The ports to play into (audio, or MIDI for a MIDI file): the physical ones, the `-p`
    /// matches in natural order, or none with --no-connect; nil (the error said, the client
    /// closed) when a `-p` matches nothing.
    func targets(client: JackClient, midi: Bool = false) -> [String]? {
        guard connect else { return [] }
        if destinations.isEmpty { return client.portNames(direction: .input, physicalOnly: true, audioOnly: !midi, midiOnly: midi) }
        let (selected, unmatched) = PortMatching.select(destinations, from: client.portNames(direction: .input, audioOnly: !midi, midiOnly: midi))
        if !unmatched.isEmpty {
            client.close()
            Diagnostics.error("no JACK \(midi ? "MIDI " : "")input port matches \(unmatched.map { "'\($0)'" }.joined(separator: ", ")) on server '\(client.serverName)'; `aqjack --ports --input` lists them")
            return nil
        }
        return selected
    }

    /// The files' source at `sampleRate`, reading ahead the frames the first buffers take; nil
    /// (the error said) when a file cannot be converted to it.
    private func makeSource(_ readers: [FrameSource], channelCount: Int, sampleRate: Double) -> FileSequence? {
        do throws(AudioFileError) {
            let source = try FileSequence(readers: readers, loops: loops, channelCount: channelCount, sampleRate: sampleRate, resampler: resampler)
            source.startReadAhead(frames: PlaybackSession.readAheadFrames(sampleRate: sampleRate))
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
        if MIDIPlay.isMIDIFile(paths[0]) { return try MIDIPlay.run(path: paths[0], command: self, globals: globals) }
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
        let session: PlaybackSession
        do throws(AudioQueueError) {
            // The queue plays native floats; each file's packets are decoded into them.
            session = try PlaybackSession(files: source, driver: JackDriver(client: client))
            StartTrace.mark("queue")
            if !stages.isEmpty { try session.queue.setProcessingStages(stages) }
            session.queue.channelDestinations = Array(targets.prefix(channels))
            session.queue.volumeLevel = volume
            // Three buffers of 0.1 s (with the ring's 0.25 s, 0.55 s between the file and the
            // sound), filled from the read-ahead; the ports are connected while the first fills.
            try session.start(atFrame: startFrame) { () throws(AudioQueueError) in
                try session.queue.connectDevice()
                StartTrace.mark("connected")
            }
            StartTrace.mark("started")
            StartTrace.report()
        } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }
        let queue = session.queue
        var events: SessionEvents?
        var web: SessionWeb?
        do {
            events = try SessionEvents.make(http)
            if http.port != nil {
                queue.isLevelMeteringEnabled = true
                web = try SessionWeb(options: http, initial: liveStatus(session: session, rate: rate, client: client, finished: false), events: events?.log) { verb, _ in
                    guard verb == "stop" else { return .refused("play takes stop") }
                    signals.received.store(SIGTERM, ordering: .releasing)
                    return .ok()
                }
            }
        } catch {
            queue.stop(immediate: true)
            SessionLoop.leaving(client, afterward: "nothing was played") { queue.dispose() }
            Diagnostics.error((error as? UsageError)?.message ?? "\(error)")
            return ExitStatus.failure
        }
        events?.log.post("started", [("files", "[" + paths.map(JSONText.string).joined(separator: ",") + "]"),
                                     ("sampleRate", JSONText.number(rate)), ("channels", "\(channels)")])

        nsm?.confirmOpen(message: "playing \(paths.count) file(s) as '\(client.name)'")
        let progress = isatty(STDOUT_FILENO) == 1 && !json
        let total = source.totalFrames.map { Double($0) / rate }
        let cause = SessionLoop.run(client: client, signals: signals, finished: { session.hasEnded }) {
            if web != nil || events != nil {
                let status = liveStatus(session: session, rate: rate, client: client, finished: false)
                web?.update(status)
                events?.look(at: status)
            }
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
        let played = session.framesPlayed
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
        if reason == .serverShutdown {
            events?.log.post("server-shutdown", [("reason", JSONText.string(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))])
        }
        events?.log.post("finished", [("exitReason", JSONText.string(reason.rawValue)), ("frames", "\(played)"), ("lostFrames", "\(underruns)")])
        events?.log.close()
        web?.update(liveStatus(session: session, rate: rate, client: client, finished: true))
        web?.stop()
        report.print(json: json)
        // One convention for every subcommand (README, "Exit status"): stopping by Ctrl-C or
        // SIGTERM is a normal end, like a recording's; the summary's exitReason tells them apart.
        switch reason {
        case .end, .interrupt, .terminate: return ExitStatus.success
        case .serverShutdown, .fileError, .error: return ExitStatus.failure
        }
    }

    /// What the web page shows now: frames played, underrun frames as lost, the levels playing.
    private func liveStatus(session: PlaybackSession, rate: Double, client: JackClient, finished: Bool) -> LiveStatus {
        var status = LiveStatus(command: "play", state: finished ? "stopped" : "playing", sampleRate: rate)
        status.frames = session.framesPlayed
        status.lostFrames = Int64(session.queue.underrunFrameCount)
        status.xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        status.files = paths
        status.levels = finished ? [] : (session.queue.currentLevels ?? []).map { LiveStatus.Level(peak: $0.mPeakPower, rms: $0.mAveragePower) }
        status.controls = finished ? [] : ["stop"]
        return status
    }
}
