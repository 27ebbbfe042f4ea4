import AQCore
import AQJack
import AQMedia
import Foundation
import Glibc

/// `aqjack play FILE.mid`: a Standard MIDI File (format 0 or 1, its tracks merged) played to a
/// JACK MIDI output, `CLIENT:midi_out`, connected to the `-p` MIDI inputs (default the physical
/// ones). Every event goes out at its frame: the start frame (`--start-at`, else two periods
/// after the ports are connected) plus its time in the file at the server's rate, rounded to the
/// frame (exact for `record -m`'s files, one tick a frame). Ctrl-C or SIGTERM turn off the
/// notes sounding before the client closes; the summary counts events sent and late.
enum MIDIPlay {
    /// Whether `path` names a MIDI file (by its extension, as the file types are chosen).
    static func isMIDIFile(_ path: String) -> Bool {
        ["mid", "midi", "smf"].contains((path as NSString).pathExtension.lowercased())
    }

    static func run(path: String, command: PlayCommand, globals: GlobalOptions) throws(JackError) -> Int32 {
        let signals = SignalWatcher()
        let contents: StandardMIDIFileContents
        do {
            contents = try read(path)
        } catch {
            Diagnostics.error("cannot play '\(path)': \(error)")
            return ExitStatus.failure
        }
        let client = try JackClient(name: globals.clientName, server: globals.server)
        let rate = Double(client.sampleRate)
        let events = contents.events.map { (offset: UInt64(max(0, ($0.seconds * rate).rounded())), bytes: $0.bytes) }
        let durationFrames = Int64((contents.duration * rate).rounded())
        let processor = MIDISequenceProcessor(events: events)
        guard let targets = command.targets(client: client, midi: true) else { return ExitStatus.failure }
        let port = try client.registerPort("midi_out", direction: .output, isMIDI: true)
        try client.activate(processor: processor, midiOutputs: [port])
        for target in targets { try client.connect(port.name, to: target) }
        // Two periods ahead: the connections are in place by the first event's cycle.
        let start = command.startFrame.map { UInt32(truncatingIfNeeded: $0) }
            ?? client.estimatedFrameTime &+ 2 * UInt32(client.bufferSize)
        processor.start(atFrame: start)
        command.nsm?.confirmOpen(message: "playing '\(path)' as '\(client.name)'")
        let cause = SessionLoop.run(client: client, signals: signals, finished: {
            processor.isDone.load(ordering: .acquiring) && processor.position.load(ordering: .relaxed) >= durationFrames
        }) {}
        if cause != .finished && cause != .serverShutdown {
            // The notes sounding are turned off at the next cycle (waited for at most 0.5 s).
            processor.stop()
            for _ in 0 ..< 50 where !processor.isDone.load(ordering: .acquiring) { usleep(10_000) }
        }
        let xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        let timing = client.processTiming
        SessionLoop.leaving(client, afterward: "playback had ended") { client.close() }
        if cause == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))")
        }
        let reason = switch cause {
        case .finished: "end"
        case .serverShutdown: "server-shutdown"
        case .interrupt: "interrupt"
        case .terminate: "terminate"
        }
        let report = MIDIPlayReport(file: path, format: contents.format, tracks: contents.trackCount, events: events.count,
                                    sentEvents: processor.sentEvents.load(ordering: .relaxed), lateEvents: processor.lateEvents.load(ordering: .relaxed),
                                    lostEvents: Int(timing.midiEventsLost),
                                    sampleRate: client.sampleRate, startFrameTime: UInt64(start), durationFrames: durationFrames,
                                    xruns: xruns, ports: targets, exitReason: reason, processTiming: timing)
        report.print(json: command.json)
        return cause == .serverShutdown ? ExitStatus.failure : ExitStatus.success
    }

    /// The file's events, read whole (at most ``StandardMIDIFileContents/largestFile`` bytes).
    private static func read(_ path: String) throws -> StandardMIDIFileContents {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StandardMIDIFileContents.ReadError(message: String(cString: strerror(errno)))
        }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: StandardMIDIFileContents.largestFile + 1) ?? Data()
        return try StandardMIDIFileContents(bytes: [UInt8](data))
    }
}

/// The final summary of `aqjack play FILE.mid`.
struct MIDIPlayReport: Encodable {
    let file: String
    /// The file's format (0 or 1) and its tracks, merged into one output.
    let format: Int
    let tracks: Int
    /// Events in the file, sent, of those sent, sent after their frame (skipped cycles), and
    /// those the port could not carry (``ProcessTiming/midiEventsLost``).
    let events: Int
    let sentEvents: Int
    let lateEvents: Int
    let lostEvents: Int
    let sampleRate: Int
    /// The JACK frame of the file's time 0, and the file's length in frames from there.
    let startFrameTime: UInt64
    let durationFrames: Int64
    let xruns: Int
    let ports: [String]
    let exitReason: String
    let processTiming: ProcessTiming

    func print(json: Bool) {
        printSummary(self, json: json) {
            """
            played \(file): \(sentEvents) of \(events) MIDI events (format \(format), \(tracks) track\(tracks == 1 ? "" : "s")) over \(durationFrames) frames at \(sampleRate) Hz from JACK frame \(startFrameTime) to \(ports.isEmpty ? "no port" : ports.joined(separator: ", "))
              late \(lateEvents) events, lost \(lostEvents), xruns \(xruns), stopped by: \(exitReason)
            """
        }
    }
}
