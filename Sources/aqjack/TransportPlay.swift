import AQCodecs
import AQCore
import AQJack
import AQMedia
import AQSession
import Foundation

/// `aqjack play --transport FILE`: a ``TransportPlaybackSession`` on a JACK client (the file on
/// JACK's transport timeline, sample-accurate through locates), connected to the `-p` ports, until
/// Ctrl-C, SIGTERM or the server's shutdown; then the summary. A short read past a damaged part
/// plays as silence and is reported.
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
        command.nsm?.confirmOpen(message: "playing '\(path)' with the transport as '\(client.name)'")
        let cause = SessionLoop.run(client: client, signals: signals, finished: { session.failure != nil }) {}
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
        report.print(json: command.json)
        return failure != nil || cause == .serverShutdown ? ExitStatus.failure : ExitStatus.success
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
