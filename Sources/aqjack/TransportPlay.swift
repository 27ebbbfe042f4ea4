import AQCodecs
import AQCore
import AQJack
import AQMedia
import Foundation
import Glibc
import Synchronization

/// `aqjack play --transport FILE`: the file on JACK's transport timeline, as a DAW track would
/// be: while the transport rolls at transport frame `p`, the outputs play the file's frame `p`
/// (file frame 0 at transport frame 0; silence before and past its end, and while stopped). A
/// locate, stopped or rolling, seeks the file sample-accurately: aqjack is a slow-sync client
/// and holds the transport in `Starting` until its ring holds the new position (JACK waits up to
/// its sync timeout, 2 s by default). Runs until Ctrl-C, SIGTERM or the server's shutdown.
///
/// A feeder thread reads the file into the planar ring from the position the process thread
/// asks for (``TransportPlaybackProcessor``); a short read past a damaged part plays as silence
/// and is reported.
enum TransportPlay {
    static func run(path: String, command: PlayCommand, globals: GlobalOptions) throws(JackError) -> Int32 {
        let signals = SignalWatcher()
        let source: FrameSource
        do throws(AudioFileError) { source = try FrameSource.open(path) } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }
        let client = try JackClient(name: globals.clientName, server: globals.server)
        guard source.sampleRate == Double(client.sampleRate) else {
            client.close()
            Diagnostics.error("--transport plays a file frame for frame on the transport: '\(path)' is at \(source.sampleRate) Hz, the server at \(client.sampleRate) Hz (convert it with aqjack convert -r \(client.sampleRate))")
            return ExitStatus.failure
        }
        guard let targets = command.targets(client: client) else { return ExitStatus.failure }
        let channels = source.channelCount
        let ports = try client.registerPorts(prefix: "out_", count: channels, direction: .output)
        // One second of ring; a start waits for a quarter of it at the new position.
        let (processor, feeder) = TransportPlaybackProcessor.make(channelCount: channels, capacityFrames: client.sampleRate,
                                                                  readyFrames: client.sampleRate / 4)
        try client.activate(processor: processor, outputs: ports)
        for (port, target) in zip(ports, targets) { _ = try client.connect(port.name, to: target) }

        let feeding = FeedingThread(source: source, feeder: feeder)
        let thread = Thread { feeding.run() }
        thread.start()
        command.nsm?.confirmOpen(message: "playing '\(path)' with the transport as '\(client.name)'")
        let cause = SessionLoop.run(client: client, signals: signals, finished: { feeding.failure.withLock { $0 != nil } }) {}
        feeding.done.store(true, ordering: .releasing)
        while !thread.isFinished { usleep(1000) }
        let xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        let timing = client.processTiming
        SessionLoop.waitForFreewheelEnd(client: client, signals: signals)
        SessionLoop.leaving(client, afterward: "playback had stopped") { client.close() }
        let failure = feeding.failure.withLock { $0 }
        if let failure { Diagnostics.error(failure) }
        if cause == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))")
        }
        let reason = failure != nil ? "file-error" : cause == .serverShutdown ? "server-shutdown" : cause == .terminate ? "terminate" : "interrupt"
        let report = TransportPlayReport(file: path, channels: channels, sampleRate: client.sampleRate, fileFrames: source.frameCount,
                                         framesPlayed: processor.playedFrameCount.load(ordering: .relaxed),
                                         missedFrames: processor.missedFrameCount.load(ordering: .relaxed),
                                         seeks: processor.seekCount.load(ordering: .relaxed), xruns: xruns,
                                         ports: Array(targets.prefix(channels)), exitReason: reason, processTiming: timing)
        report.print(json: command.json)
        return failure != nil || cause == .serverShutdown ? ExitStatus.failure : ExitStatus.success
    }

}

/// The feeder thread of `play --transport`: services the process thread's seeks and keeps the
/// ring full of the file from the position asked for (silence past its end), until ``done``.
/// The source and feeder are used by that thread only.
final class FeedingThread: @unchecked Sendable {
    let source: FrameSource
    let feeder: TransportPlaybackFeeder
    let done = Atomic<Bool>(false)
    /// Why reading stopped, when the file failed.
    let failure = Mutex<String?>(nil)

    init(source: FrameSource, feeder: TransportPlaybackFeeder) {
        self.source = source
        self.feeder = feeder
    }

    func run() {
        do throws(AudioFileError) { try feed() } catch { failure.withLock { $0 = error.message } }
    }

    private func feed() throws(AudioFileError) {
        let channels = source.channelCount
        let chunk = 4096
        var scratch = [Float](repeating: 0, count: chunk * channels)
        var position: Int64?
        while !done.load(ordering: .acquiring) {
            if let asked = feeder.serviceSeek() {
                position = Int64(asked)
                if asked < source.frameCount { try source.seek(toFrame: Int64(asked)) }
            }
            if feeder.hasPendingSeek { continue }
            let room = min(feeder.writableFrameCount, chunk)
            guard let current = position, room > 0 else {
                feeder.waitForCycle(milliseconds: 5)
                continue
            }
            let got = try scratch.withUnsafeMutableBufferPointer { (buffer) throws(AudioFileError) -> Int in
                let wanted = Int(max(0, min(Int64(room), source.frameCount - current)))
                var read = 0
                while read < wanted {
                    let count = try source.read(into: buffer.baseAddress! + read * channels, maximumFrames: wanted - read)
                    if count == 0 { break }
                    read += count
                }
                buffer.baseAddress!.advanced(by: read * channels).update(repeating: 0, count: (room - read) * channels)
                feeder.write(buffer.baseAddress!, frameCount: room)
                return read
            }
            if current + Int64(got) < source.frameCount, got < room {
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "'\(source.path)' ended at frame \(current + Int64(got)) of \(source.frameCount)")
            }
            position = current + Int64(room)
        }
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
