import AQCodecs
import AQControl
import AQCore
import AQJack
import AQMedia
import AQSession
import AQPlugins
import AQWeb
import AudioQueue
import CAudioTypes
import Foundation
import Glibc

/// `aqjack record`: records JACK ports to a file through the input queue. The options become a
/// plan (``RecordPlan``) and a session (``RecordingSetup``); this runs them and reports.
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
        // --follow, --auto-connect: told of every port registration (only before activation), so
        // that a source coming back is connected at once.
        let portChanges = options.follow || options.autoConnect ? try SourceFollower.watchRegistrations(of: client) : nil
        let plan: RecordPlan
        do throws(RecordPlan.Refusal) { plan = try RecordPlan(options: options, client: client) } catch {
            client.close()
            Diagnostics.error(error.message)
            return error.status
        }
        // --min-free: a disk that cannot hold that long is refused before any file exists.
        if let minutes = options.minimumFreeMinutes,
           let refusal = DiskSpace.refusal(minimumMinutes: minutes, path: options.path, bytesPerSecond: plan.bytesPerSecond(options: options)) {
            client.close()
            Diagnostics.error(refusal)
            return ExitStatus.failure
        }
        // -m: the MIDI ports, recorded by a client of their own (CLIENT-midi), at the server's rate.
        var midi: MIDIRecording?
        if !options.midiPorts.isEmpty {
            let (selected, unmatched) = PortMatching.select(options.midiPorts, from: client.portNames(direction: .output, midiOnly: true))
            if !unmatched.isEmpty || (options.rate != nil && options.rate != client.sampleRate) {
                client.close()
                Diagnostics.error(unmatched.isEmpty ? "-m records MIDI frame for frame with the audio: record at the server's rate (\(client.sampleRate) Hz), drop -r"
                                  : "no JACK MIDI output port matches \(unmatched.map { "'\($0)'" }.joined(separator: ", ")); `aqjack --ports --output` lists them")
                return ExitStatus.failure
            }
            do throws(JackError) {
                midi = try MIDIRecording(name: client.name + "-midi", server: globals.server, sources: selected, sampleRate: client.sampleRate)
            } catch {
                client.close()
                Diagnostics.error(error.message)
                return ExitStatus.failure
            }
        }
        // Plugins next: a URI, control or value that does not fit is reported before any file exists.
        var stages: [LV2Stage] = []
        if !options.chain.isEmpty {
            do throws(PluginError) {
                stages = try options.chain.makeStages(world: LV2World.loadedReporting(), channelCount: plan.channelCount, sampleRate: plan.format.mSampleRate)
            } catch {
                client.close()
                Diagnostics.error(error.message)
                return exitStatus(for: error)
            }
        }
        var events: SessionEvents?
        do throws(UsageError) {
            events = try SessionEvents.make(options.http, always: true,
                                            diskLowSeconds: options.minimumFreeMinutes.map { $0 * 60 } ?? SessionEvents.defaultDiskLowSeconds)
        } catch {
            client.close()
            Diagnostics.error(error.message)
            return ExitStatus.failure
        }
        let hook = options.onFileCommand.map(FileHook.init(command:))
        var queue: AudioInputQueue!
        let setup: RecordingSetup
        var latencyCompensation = 0
        var web: SessionWeb?
        var silenceWatch: SilenceWatch?
        var follower: SourceFollower?
        do {   // queue errors and file errors: both carry an OSStatus and a message
            // The queue's callback reaches the session through this box (the session needs the
            // encoder's priming, known once the queue exists).
            let box = SessionBox()
            let silence = options.silenceAlarm.map { SilenceWatch(decibels: $0.decibels, seconds: $0.seconds, sampleRate: Double(client.sampleRate), log: events?.log) }
            silenceWatch = silence
            let midiRecording = midi
            queue = try AudioInputQueue(format: plan.format, driver: JackDriver(client: client)) { queue, buffer, startTime in
                silence?.observe(queue: queue, buffer: buffer, startTime: startTime)
                // The first buffer's frame is a plain recording's first (-m: the .mid's tick 0).
                midiRecording?.recordingBegan(frame: UInt64(max(0, startTime.mSampleTime.rounded())))
                if box.session?.handle(buffer, startTime: startTime, gapSilence: queue.gapSilenceInDeliveredBuffer) ?? false { try? queue.enqueue(buffer) }
            }
            setup = try RecordingSetup(options: options, plan: plan, queue: queue, client: client, hook: hook, signals: signals, events: events?.log, midi: midi)
            box.session = setup.session
            if !stages.isEmpty { try queue.setProcessingStages(stages) }
            // What feeds the recording may already be late: a hosted plugin's look-ahead is the
            // capture latency of its outputs. Taking it out of the frame times makes the file's
            // first frame the source's frame (BWF TimeReference included), as a DAW aligns it.
            // --latency-offset: what a source (a network bridge) does not report, on top.
            if options.compensatesLatency {
                latencyCompensation = plan.sources.compactMap { client.portInfo(named: $0)?.captureLatency.max }.max() ?? 0
            }
            latencyCompensation += options.latencyOffset
            queue.latencyCompensationFrames = latencyCompensation
            queue.channelSources = plan.sources
            queue.isLevelMeteringEnabled = true
            queue.resamplerEngine = options.resampler
            queue.sampleRateConverterQuality = options.sourceQuality == "best" ? .best : options.sourceQuality == "medium" ? .medium : .fastest
            let bufferBytes = plan.bufferBytes(queue: queue, encodedByQueue: options.isCompressed && !options.encodesPerFile)
            for _ in 0 ..< 4 { try queue.enqueue(queue.allocateBuffer(byteCapacity: bufferBytes)) }
            if options.http.port != nil {
                // Before the queue starts: an address that cannot be served ends this with nothing recorded.
                web = try Self.web(options: options, setup: setup, queue: queue, plan: plan, client: client, signals: signals, events: events?.log)
            }
            if options.follow || options.autoConnect {
                follower = SourceFollower(client: client, inputs: (1 ... plan.channelCount).map { "\(client.name):in_\($0)" },
                                          initial: plan.sources, patterns: options.autoConnect ? options.ports : nil,
                                          wakeups: portChanges ?? DispatchSemaphore(value: 0))
            }
            midi?.start()
            try queue.start(atFrame: options.startFrame)
            follower?.start()
            events?.log.post("started", [("files", "[" + setup.files.map(JSONText.string).joined(separator: ",") + "]"),
                                         ("sampleRate", JSONText.number(plan.fileFormat.mSampleRate)), ("channels", "\(plan.channelCount)")])
            // A single recording (one file, or parts in time) is one take from its first frame.
            if setup.takes == nil {
                events?.log.post("take-started", [("files", "[" + setup.files.map(JSONText.string).joined(separator: ",") + "]")])
            }
            setup.osc?.start()
            nsm?.confirmOpen(message: "recording \(plan.channelCount) channel(s) to \(options.path)")
        } catch {
            web?.stop()
            queue?.dispose()
            if queue == nil { client.close() }
            Diagnostics.error((error as? any AudioStatusCarrying)?.message ?? "\(error)")
            return ExitStatus.failure
        }
        if !queue.isRingLocked {
            Diagnostics.note("the \(queue.ringBytes >> 20) MiB capture ring could not be locked in memory (mlock refused: raise the limit with `ulimit -l`, or grant CAP_IPC_LOCK); if the system pages it out, the process thread waits for it")
        }
        if plan.sources.isEmpty {
            Diagnostics.note("recording \(plan.channelCount) unconnected channel(s): connect them to \(client.name):in_1 ... with a patchbay or jack_connect")
        }
        let session = setup.session
        let meter = MeterLine(enabled: options.meter ?? (isatty(STDOUT_FILENO) == 1 && !options.json))
        let cause = SessionLoop.run(client: client, signals: signals, finished: { session.isFinished.load(ordering: .acquiring) }) {
            let status = Self.liveStatus(queue: queue, setup: setup, plan: plan, options: options, client: client, finished: false)
            meter.show(queue: queue, session: session, xruns: status.xruns, secondsLeft: status.secondsLeft)
            web?.update(status)
            events?.look(at: status)
        }
        var reason: ExitReason = switch cause {
        case .finished: session.summary.failure != nil ? .error : options.transport != nil ? .transportStop : .duration
        case .serverShutdown: .serverShutdown
        case .interrupt: .interrupt
        case .terminate: .terminate
        }
        meter.finish()
        follower?.stop()
        setup.osc?.stop()
        nsm?.stop()
        // Not under SessionLoop.leaving: stopping drains the ring into the file (no JACK call),
        // which may rightly take long on a slow disk.
        queue.stop(immediate: true)
        var report = RecordReport(options: options, plan: plan, queue: queue, client: client)
        Diagnostics.writeStalls(of: client)
        let failure = session.finish(queue: queue)
        SessionLoop.waitForFreewheelEnd(client: client, signals: signals)
        SessionLoop.leaving(client, afterward: "the recording is complete") { queue.dispose() }
        report.files = setup.finalFiles(hook: hook)
        hook?.waitForAll()
        // The disk writer has finalized every file, each .mid with it.
        if let midi {
            midi.stop()
            report.midiFiles = midi.files
            report.midiEvents = midi.eventCount
            report.midiLostEvents = midi.lostEvents
        }
        if let failure, reason != .serverShutdown { reason = .error; Diagnostics.error(failure) }
        if reason == .serverShutdown {
            Diagnostics.error("the JACK server '\(client.serverName)' shut down (\(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given")); the file holds everything recorded until then")
        }
        if reason == .serverShutdown {
            events?.log.post("server-shutdown", [("reason", JSONText.string(client.notifications.shutdownReason.withLock { $0 } ?? "no reason given"))])
        }
        if setup.takes == nil { events?.log.post("take-finished", [("frames", "\(session.summary.frames)")]) }
        events?.log.post("finished", [("exitReason", JSONText.string(reason.rawValue)), ("frames", "\(session.summary.frames)"),
                                      ("lostFrames", "\(session.summary.lost)")])
        events?.log.close()
        let final = Self.liveStatus(queue: queue, setup: setup, plan: plan, options: options, client: client, finished: true)
        web?.update(final)
        web?.stop()
        report.finish(setup: setup, queue: queue, latencyCompensation: latencyCompensation, exitReason: reason.rawValue)
        report.silenceAlarms = silenceWatch?.alarms.load(ordering: .relaxed)
        report.reconnections = follower?.reconnections.load(ordering: .relaxed)
        report.sourcelessFrames = follower?.sourcelessFrames.load(ordering: .relaxed)
        report.diskFreeBytes = final.diskFreeBytes
        report.diskSecondsLeft = final.secondsLeft
        report.print(json: options.json)
        return reason == .serverShutdown || reason == .error ? ExitStatus.failure : ExitStatus.success
    }

    /// `--http`: the session's web surface. Takes (--armed, --trigger, --osc) start, stop and
    /// split on command; a single recording only stops (as SIGTERM stops it).
    private static func web(options: RecordOptions, setup: RecordingSetup, queue: AudioInputQueue, plan: RecordPlan,
                            client: JackClient, signals: SignalWatcher, events: EventLog?) throws -> SessionWeb {
        let trigger = setup.trigger
        return try SessionWeb(options: options.http, initial: liveStatus(queue: queue, setup: setup, plan: plan, options: options, client: client, finished: false),
                              events: events) { verb, _ in
            switch (verb, trigger) {
            case ("start", let trigger?): trigger.request(.start)
            case ("split", let trigger?): trigger.request(.split)
            case ("stop", let trigger?): trigger.request(.stop)
            case ("stop", nil): signals.received.store(SIGTERM, ordering: .releasing)
            default: return .refused("'\(verb)' needs takes: record with --armed, --trigger or --osc to start, stop and split them")
            }
            return .ok()
        }
    }

    /// What the web page shows now.
    private static func liveStatus(queue: AudioInputQueue, setup: RecordingSetup, plan: RecordPlan, options: RecordOptions,
                                   client: JackClient, finished: Bool) -> LiveStatus {
        let session = setup.session
        let recording = setup.takes?.isRecording ?? true
        var status = LiveStatus(command: "record", state: finished ? "stopped" : recording ? "recording" : "waiting", sampleRate: plan.fileFormat.mSampleRate)
        status.frames = session.framesWritten
        status.lostFrames = session.lostFrames(queue: queue)
        status.xruns = client.notifications.xrunCount.load(ordering: .relaxed)
        status.files = setup.currentFiles()
        status.diskFreeBytes = LiveStatus.freeBytes(at: options.path)
        status.bytesPerSecond = plan.bytesPerSecond(options: options)
        status.levels = finished ? [] : queue.currentLevels.map { LiveStatus.Level(peak: $0.mPeakPower, rms: $0.mAveragePower) }
        status.controls = finished ? [] : setup.trigger == nil ? ["stop"] : ["start", "stop", "split"]
        return status
    }
}
