import AQCodecs
import AQCore
import AQJack
import AQMedia
import AQSession
import AQWeb
import Foundation

/// `aqjack play --transport FILE`: a ``TransportPlaybackSession`` on a JACK client (the file on
/// JACK's transport timeline, sample-accurate through locates), connected to the `-p` ports, until
/// Ctrl-C, SIGTERM (or `stop` from the web page: `--http`) or the server's shutdown; then the
/// summary. A short read past a damaged part plays as silence and is reported. `--events` adds a
/// `transport` event each time the transport starts or stops rolling.
enum TransportPlay {
    static func run(path: String, command: PlayCommand, globals: GlobalOptions) throws(JackError) -> Int32 {
        let signals = SignalWatcher()
        let source: FrameSource
        do throws(AudioFileError) { source = try FrameSource.open(path) } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }
        let driver = try JackDriver(name: globals.clientName, server: globals.server)
        let client = driver.client
        let session: TransportPlaybackSession
        do throws(AudioDriverError) { session = try TransportPlaybackSession(source: source, driver: driver) } catch {
            client.close()
            Diagnostics.error(error.description)
            return ExitStatus.failure
        }
        guard let targets = command.targets(client: client) else { return ExitStatus.failure }
        do throws(AudioDriverError) {
            try session.start()
            for (channel, target) in zip(session.channels, targets) { try driver.connect(channel, to: target) }
        } catch {
            session.stop()
            client.close()
            Diagnostics.error(error.description)
            return ExitStatus.failure
        }
        var events: SessionEvents?
        var web: SessionWeb?
        do {
            events = try SessionEvents.make(command.http)
            if command.http.port != nil {
                web = try SessionWeb(options: command.http, initial: liveStatus(session: session, path: path, client: client, finished: false),
                                     events: events?.log) { verb, _ in
                    guard verb == "stop" else { return .refused("play takes stop") }
                    signals.received.store(SIGTERM, ordering: .releasing)
                    return .ok()
                }
            }
        } catch {
            session.stop()
            client.close()
            Diagnostics.error((error as? UsageError)?.message ?? "\(error)")
            return ExitStatus.failure
        }
        events?.log.post("started", [("files", "[" + JSONText.string(path) + "]"), ("sampleRate", "\(client.sampleRate)"),
                                     ("channels", "\(source.channelCount)")])
        command.nsm?.confirmOpen(message: "playing '\(path)' with the transport as '\(client.name)'")
        var rolling = false
        let cause = SessionLoop.run(client: client, signals: signals, finished: { session.failure != nil }) {
            guard web != nil || events != nil else { return }
            let status = liveStatus(session: session, path: path, client: client, finished: false)
            web?.update(status)
            events?.look(at: status)
            if session.isRolling != rolling {
                rolling.toggle()
                events?.log.post("transport", [("rolling", "\(rolling)"), ("frame", "\(client.transport.frame)")])
            }
        }
        let xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        let timing = client.processTiming
        let (played, missed, seeks) = (session.framesPlayed, session.missedFrames, session.seeks)
        SessionLoop.waitForFreewheelEnd(client: client, signals: signals)
        SessionLoop.leaving(client, afterward: "playback had stopped") {
            session.stop()
            client.close()
        }
        let failure = session.failure
        if let failure { Diagnostics.error(failure) }
        if cause == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))")
        }
        let reason = failure != nil ? "file-error" : cause == .serverShutdown ? "server-shutdown" : cause == .terminate ? "terminate" : "interrupt"
        let report = TransportPlayReport(file: path, channels: source.channelCount, sampleRate: client.sampleRate, fileFrames: source.frameCount,
                                         framesPlayed: played, missedFrames: missed, seeks: seeks, xruns: xruns,
                                         ports: Array(targets.prefix(source.channelCount)), exitReason: reason, processTiming: timing)
        if cause == .serverShutdown {
            events?.log.post("server-shutdown", [("reason", JSONText.string(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))])
        }
        events?.log.post("finished", [("exitReason", JSONText.string(reason)), ("frames", "\(played)"), ("lostFrames", "\(missed)")])
        events?.log.close()
        web?.update(liveStatus(session: session, path: path, client: client, finished: true))
        web?.stop()
        report.print(json: command.json)
        return failure != nil || cause == .serverShutdown ? ExitStatus.failure : ExitStatus.success
    }

    /// What the web page shows now: `playing` while the transport rolls, else `waiting`; frames
    /// played from the file; the frames missed (rolled over before the file's were ready) as lost;
    /// the outputs' levels.
    private static func liveStatus(session: TransportPlaybackSession, path: String, client: JackClient, finished: Bool) -> LiveStatus {
        var status = LiveStatus(command: "play", state: finished ? "stopped" : session.isRolling ? "playing" : "waiting",
                                sampleRate: Double(client.sampleRate))
        status.frames = Int64(session.framesPlayed)
        status.lostFrames = Int64(session.missedFrames)
        status.xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        status.files = [path]
        status.levels = finished ? [] : session.outputLevels.levels.map { LiveStatus.Level(peak: $0.peak, rms: $0.rms) }
        status.controls = finished ? [] : ["stop"]
        return status
    }
}

/// The final summary of `aqjack play --transport`.
struct TransportPlayReport: Encodable {
    let file: String
    let channels: Int
    let sampleRate: Int
    /// Frames the file holds.
    let fileFrames: Int64
    /// Frames played from the file while the transport rolled.
    let framesPlayed: Int
    /// Frames the transport rolled over while the file's were not ready (silence).
    let missedFrames: Int
    /// Seeks the transport asked for (locates, the first roll).
    let seeks: Int
    let xruns: Int
    let ports: [String]
    let exitReason: String
    let processTiming: ProcessTiming

    func print(json: Bool) {
        printSummary(self, json: json) {
            """
            played \(file) on the transport: \(channels) ch, \(framesPlayed) frames rolled of \(fileFrames), missed \(missedFrames), seeks \(seeks), xruns \(xruns), stopped by: \(exitReason)
            """
        }
    }
}
