import AQCodecs
import AQControl
import AQCore
import AQJack
import AQMedia
import AQSession
import AQPlugins
import AudioQueue
import CAudioTypes
import Foundation
import Glibc

/// Lets the queue's callback find the session created after the queue.
final class SessionBox: @unchecked Sendable {
    var session: (any RecordingSession)?
}

/// `aqjack record`: records JACK ports to a file through the input queue.
struct RecordCommand {
    let options: RecordOptions

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        options = try RecordOptions(arguments: &cursor, globals: &globals)
    }

    enum ExitReason: String { case duration, transportStop = "transport-stop", interrupt, terminate, serverShutdown = "server-shutdown", error }

    func run(globals given: GlobalOptions) throws(JackError) -> Int32 {
        let signals = SignalWatcher()
        // Under a session manager (NSM_URL set): announce, and take the JACK client name and the
        // folder for the file from its /nsm/client/open before anything else.
        var options = self.options, globals = given
        var nsm: NSMClient?
        do throws(NSMError) {
            if let (manager, session) = try NSMClient.join(as: "aqjack record") {
                options.path = session.path + "/" + (options.path as NSString).lastPathComponent
                globals.clientName = session.clientID
                nsm = manager
            }
        } catch {
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }
        let client = try JackClient(name: globals.clientName, server: globals.server, stallLogCapacity: Diagnostics.stallLogCapacity)

        // Which ports feed which channel.
        let outputs = client.portNames(direction: .output, audioOnly: true)
        var sources: [String]
        if options.ports.isEmpty {
            let physical = client.portNames(direction: .output, physicalOnly: true, audioOnly: true)
            sources = Array(physical.prefix(options.channels ?? min(2, max(physical.count, 1))))
        } else {
            let (selected, unmatched) = PortMatching.select(options.ports, from: outputs)
            if !unmatched.isEmpty {
                client.close()
                Diagnostics.error("no JACK output port matches \(unmatched.map { "'\($0)'" }.joined(separator: ", ")) on server '\(client.serverName)'; `aqjack --ports --output` lists them")
                return ExitStatus.failure
            }
            sources = selected
        }
        let channelCount = options.channels ?? max(sources.count, options.ports.isEmpty ? 2 : 1)
        if sources.count > channelCount { sources = Array(sources.prefix(channelCount)) }
        // Another rate than the server's is resampled by the queue (soxr, or --resampler's choice).
        let fileFormat = options.format(channelCount: channelCount, sampleRate: options.rate ?? client.sampleRate)
        // What the queue delivers: the file's format, or Float frames each file encodes.
        let format = options.encodesPerFile ? CompressedFormatValues.floatPCM(sampleRate: fileFormat.mSampleRate, channelCount: channelCount) : fileFormat
        if options.transport != nil, let rate = options.rate, rate != client.sampleRate {
            client.close()
            Diagnostics.error("--transport records at the server's rate (\(client.sampleRate) Hz), frame for frame with the transport; drop -r \(rate) and convert the takes")
            return ExitStatus.failure
        }

        // What the format makes of the sizes given: refused before anything is allocated.
        if let problem = options.sizeProblem(format: format) {
            client.close()
            Diagnostics.error(problem)
            return ExitStatus.usage
        }

        // Plugins next: a URI, control or value that does not fit is reported before any file exists.
        var stages: [LV2Stage] = []
        if !options.chain.isEmpty {
            do throws(PluginError) {
                stages = try options.chain.makeStages(world: LV2World.loadedReporting(), channelCount: channelCount, sampleRate: format.mSampleRate)
            } catch {
                client.close()
                Diagnostics.error(error.message)
                return exitStatus(for: error)
            }
        }
        // The file first: an existing file without --force is refused before anything is recorded.
        let targetFrames = options.seconds.map { Int64(($0 * format.mSampleRate).rounded()) }
        let session: any RecordingSession
        var files = [options.path]
        let hook = options.onFileCommand.map(FileHook.init(command:))
        /// The files of a recording split in time (--split), as they are finalized.
        var split: TimeSplitFiles?
        /// The takes of a transport-synced recording (--transport, --transport-multi).
        var transportTakes: TransportRecordSession?
        /// The takes of a triggered, SIGUSR1-armed or OSC-controlled recording.
        var armedTakes: ArmedRecordSession?
        var osc: OSCControl?
        var queue: AudioInputQueue!
        var latencyCompensation = 0
        do {   // queue errors and file errors: both carry an OSStatus and a message
            // The queue's callback reaches the session through this box (the session needs the
            // encoder's priming, known once the queue exists).
            let box = SessionBox()
            queue = try AudioInputQueue(format: format, driver: JackDriver(client: client)) { queue, buffer, startTime in
                if box.session?.handle(buffer, startTime: startTime) ?? false { try? queue.enqueue(buffer) }
            }
            if options.isCompressed && !options.encodesPerFile {
                if options.isAAC {
                    try queue.configureEncoder(bitRate: options.bitRate, quality: options.quality)
                }
                // Packets are written on the disk-writer thread.
                let file = try AudioFile.create(path: options.path, fileType: options.fileType!, format: queue.format, eraseExisting: options.force).packetWriter!
                let writer = DiskBackedPacketFile(file, stream: try DiskStream(ringBytes: DiskBackedPacketFile.ringBytes(
                    maximumPacketSize: queue.maximumOutputPacketSize, framesPerPacket: Int(queue.format.mFramesPerPacket), sampleRate: queue.format.mSampleRate)))
                try writer.setMagicCookie(queue.magicCookie)
                session = PacketRecordSession(writer: writer, targetFrames: targetFrames, priming: queue.packetTableInfo?.priming ?? 0,
                                              framesPerPacket: Int(queue.format.mFramesPerPacket),
                                              deviceFramesPerFileFrame: Double(client.sampleRate) / format.mSampleRate)
            } else {
                // More channels than libsndfile puts in one file: one file per 1024 channels.
                let fileType = options.fileType!, force = options.force
                let bitRate = options.bitRate, quality = options.quality, encodes = options.encodesPerFile
                let make = { (path: String) throws(AudioFileError) -> any RecordingFiles in
                    if encodes {
                        return try EncodedFiles(path: path, fileType: fileType, format: fileFormat, bitRate: bitRate, quality: quality, eraseExisting: force)
                    }
                    if channelCount > SplitRecordingFiles.channelsPerFile {
                        return try SplitRecordingFiles(path: path, fileType: fileType, format: format, eraseExisting: force)
                    }
                    return try AudioFile.create(path: path, fileType: fileType, format: format, eraseExisting: force).pcmWriter!
                }
                // Files are written, finalized and handed to --on-file on the disk-writer thread.
                let finalized: @Sendable ([String], Int64) -> Void = { paths, frames in paths.forEach { hook?.run(path: $0, frames: frames) } }
                let layout = try LinearPCMLayout(validating: format)
                let stream = try DiskStream(ringBytes: DiskBackedFiles.ringBytes(layout: layout, sampleRate: format.mSampleRate))
                if let mode = options.transport {
                    let takes = try TakeFiles(path: options.path, numbered: mode == .multi, layout: layout, stream: stream,
                                              make: make, finalized: finalized)
                    let transport = TransportRecordSession(takes: takes, multi: mode == .multi,
                                                           takeChanges: { [unowned queue] in queue!.takeTransportChanges(before: $0) })
                    transportTakes = transport
                    session = transport
                    files = transport.paths
                } else if options.isArmedRecording {
                    let takes = try TakeFiles(path: options.path, numbered: true, layout: layout, stream: stream,
                                              make: make, finalized: finalized)
                    let start: ArmedRecordSession.Start = options.triggerLevel.map { .level(Float(pow(10, $0 / 20))) } ?? .signal
                    let armed = ArmedRecordSession(takes: takes, start: start, holdSeconds: options.holdSeconds ?? 1,
                                                   preRollSeconds: options.preRollSeconds ?? 0, sampleRate: format.mSampleRate)
                    if case .signal = start { armed.listenForToggleSignal() }
                    if let port = options.oscPort {
                            osc = try OSCControl(host: options.oscHost, port: port, token: options.oscToken, handlers: OSCControl.Handlers(
                                command: { armed.request($0) },
                                quit: { signals.received.store(SIGTERM, ordering: .releasing) },
                                status: { [weak queue] in
                                    let summary = armed.summary
                                    var fields: [OSCMessage.Argument] = [
                                        .string(armed.isRecording ? "recording" : "waiting"),
                                        .int32(Int32(clamping: summary.frames)), .string(armed.paths.last ?? ""),
                                        .int32(Int32(clamping: summary.lost)),
                                        .int32(Int32(clamping: client.notifications.xrunCount.load(ordering: .relaxed)))]
                                    for level in queue?.currentLevels ?? [] {
                                        fields.append(.float32(level.mPeakPower > 1e-6 ? 20 * log10(level.mPeakPower) : -120))
                                    }
                                    return fields
                                }))
                        Diagnostics.note("listening for OSC on \(options.oscHost):\(osc!.port) (/aqjack/start, /stop, /split, /status, /quit)")
                    }
                    armedTakes = armed
                    session = armed
                    files = []
                } else {
                let writer: any RecordingFiles
                // --split-size: whole frames of audio data per file (the header comes on top).
                let splitFrames = options.splitSeconds.map { Int64(($0 * format.mSampleRate).rounded()) }
                    ?? options.splitBytes.map { $0 / Int64(format.mBytesPerFrame) }
                if let splitFrames {
                    // Consecutive files, each finalized (and handed to --on-file) when full.
                    let parts = try TimeSplitFiles(path: options.path, splitFrames: max(1, splitFrames), make: make, finalized: finalized)
                    split = parts
                    writer = DiskBackedFiles(parts, stream: stream)
                } else {
                    writer = DiskBackedFiles(try make(options.path), stream: stream)
                }
                files = writer.paths
                session = RecordSession(writer: writer, targetFrames: targetFrames, deviceRate: Double(client.sampleRate))
                }
            }
            box.session = session
            if !stages.isEmpty { try queue.setProcessingStages(stages) }
            // What feeds the recording may already be late: a hosted plugin's look-ahead is the
            // capture latency of its outputs. Taking it out of the frame times makes the file's
            // first frame the source's frame (BWF TimeReference included), as a DAW aligns it.
            if options.compensatesLatency {
                latencyCompensation = sources.compactMap { client.portInfo(named: $0)?.captureLatency.max }.max() ?? 0
                queue.latencyCompensationFrames = latencyCompensation
            }
            queue.channelSources = sources
            queue.isLevelMeteringEnabled = true
            queue.resamplerEngine = options.resampler
            queue.sampleRateConverterQuality = options.sourceQuality == "best" ? .best : options.sourceQuality == "medium" ? .medium : .fastest
            // Four buffers of 0.1 s (compressed: room for 0.1 s of the largest packets, at least two).
            let bufferBytes = options.isCompressed && !options.encodesPerFile ? queue.maximumOutputPacketSize * max(2, Int(format.mSampleRate / 10) / Int(queue.format.mFramesPerPacket) + 1)
                                            : Int(max(format.mBytesPerFrame, format.mBytesPerFrame * UInt32(format.mSampleRate / 10)))
            for _ in 0 ..< 4 { try queue.enqueue(queue.allocateBuffer(byteCapacity: bufferBytes)) }
            try queue.start(atFrame: options.startFrame)
            osc?.start()
            nsm?.confirmOpen(message: "recording \(channelCount) channel(s) to \(options.path)")
        } catch {
            queue?.dispose()
            if queue == nil { client.close() }
            Diagnostics.error((error as? any AudioStatusCarrying)?.message ?? "\(error)")
            return ExitStatus.failure
        }
        if !queue.isRingLocked {
            Diagnostics.note("the \(queue.ringBytes >> 20) MiB capture ring could not be locked in memory (mlock refused: raise the limit with `ulimit -l`, or grant CAP_IPC_LOCK); if the system pages it out, the process thread waits for it")
        }
        if sources.isEmpty {
            Diagnostics.note("recording \(channelCount) unconnected channel(s): connect them to \(client.name):in_1 ... with a patchbay or jack_connect")
        }

        let meter = MeterLine(enabled: options.meter ?? (isatty(STDOUT_FILENO) == 1 && !options.json))
        let cause = SessionLoop.run(client: client, signals: signals, finished: { session.isFinished.load(ordering: .acquiring) }) {
            meter.show(queue: queue, session: session, xruns: client.notifications.xrunCount.load(ordering: .relaxed))
        }
        var reason: ExitReason = switch cause {
        case .finished: session.summary.failure != nil ? .error : options.transport != nil ? .transportStop : .duration
        case .serverShutdown: .serverShutdown
        case .interrupt: .interrupt
        case .terminate: .terminate
        }
        meter.finish()
        osc?.stop()
        nsm?.stop()
        // Not under SessionLoop.leaving: stopping drains the ring into the file (no JACK call),
        // which may rightly take long on a slow disk.
        queue.stop(immediate: true)
        let xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        let timing = client.processTiming
        Diagnostics.writeStalls(of: client)
        let overruns = queue.overrunFrameCount
        let serverSkipped = queue.serverSkippedFrameCount
        let underruns = queue.underrunFrameCount
        let failure = session.finish(queue: queue)
        SessionLoop.waitForFreewheelEnd(client: client, signals: signals)
        SessionLoop.leaving(client, afterward: "the recording is complete") { queue.dispose() }
        if let split {
            files = split.paths
        } else if let transportTakes {
            files = transportTakes.paths
        } else if let armedTakes {
            files = armedTakes.paths
        } else {
            files.forEach { hook?.run(path: $0, frames: session.summary.frames) }
        }
        hook?.waitForAll()
        if let failure, reason != .serverShutdown { reason = .error; Diagnostics.error(failure) }
        if reason == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given")); the file holds everything recorded until then")
        }
        let summary = session.summary
        var report = RecordReport(files: files, fileType: fourCharacterCode(options.fileType!), format: options.encodesPerFile ? fileFormat : queue.format,
                                  frames: summary.frames, startFrame: summary.start, lostFrames: summary.lost,
                                  overrunFrames: overruns, underrunFrames: underruns, xruns: xruns,
                                  ports: sources, exitReason: reason.rawValue)
        report.processTiming = timing
        report.serverSkippedFrames = serverSkipped
        report.latencyCompensationFrames = latencyCompensation
        report.splitSeconds = options.splitSeconds ?? options.splitBytes.map { Double($0 / Int64(format.mBytesPerFrame)) / format.mSampleRate }
        if let transportTakes {
            report.takes = transportTakes.takeCount
            report.transportRelocations = transportTakes.relocationCount
        }
        if let armedTakes { report.takes = armedTakes.takeCount }
        report.print(json: options.json)
        return reason == .serverShutdown || reason == .error ? ExitStatus.failure : ExitStatus.success
    }
}
