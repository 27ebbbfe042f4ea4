import AQCodecs
import AQControl
import AQJack
import AQMedia
import AQSession
import AQWeb
import AudioQueue
import CAudioTypes
import Foundation
import Glibc

/// Lets the queue's callback find the session created after the queue.
final class SessionBox: @unchecked Sendable {
    var session: (any RecordingSession)?
}

/// The session `aqjack record` runs on its queue, made from the options: one file (PCM, or
/// packets the queue encodes), parts split in time, or takes a ``TakeController`` decides
/// (the transport; a level, SIGUSR1 or OSC). Every file is written on the disk-writer thread.
struct RecordingSetup {
    let session: any RecordingSession
    /// The files named before the recording starts.
    var files: [String]
    var split: TimeSplitFiles?
    var takes: TakeSession?
    var transport: TransportController?
    var osc: OSCControl?
    /// The files written so far (any thread: for the web page).
    var currentFiles: @Sendable () -> [String] = { [] }
    /// Where the session's events go (--http, --events), if anywhere.
    let events: EventLog?
    /// What starts, stops and splits takes on command (--armed, --trigger, --osc), if anything.
    var trigger: TriggerController?
    /// `-m`: the MIDI recorded beside the audio, a `.mid` written as each audio file is finalized.
    let midi: MIDIRecording?
    /// The wall clock of device frames.
    let clock: FrameClock

    /// Makes the session for `queue` (whose callback reaches it through `box`). An existing file
    /// without --force is refused here, before anything is recorded.
    init(options: RecordOptions, plan: RecordPlan, queue: AudioInputQueue, client: JackClient, hook: FileHook?,
         signals: SignalWatcher, events: EventLog?, midi: MIDIRecording? = nil) throws {
        self.events = events
        self.midi = midi
        // The wall clock of device frames: each file's OriginationDate/-Time, the summary's start.
        let clock = FrameClock(frame: Double(client.estimatedFrameTime), date: Date(), sampleRate: Double(client.sampleRate))
        self.clock = clock
        let format = plan.format, fileFormat = plan.fileFormat, force = options.force, fileType = options.fileType!
        let targetFrames = options.seconds.map { Int64(($0 * format.mSampleRate).rounded()) }
        let deviceFramesPerFileFrame = Double(client.sampleRate) / format.mSampleRate
        // Every session appends buffer after buffer: the queue fills the gaps, where they were.
        queue.gapPolicy = .silence
        // The file of a recording in one part (or one take): named now with --name-format.
        let path = options.nameFormat == nil ? options.path : options.naming.path(base: options.path, index: 1, date: nil)
        files = [path]
        currentFiles = { [path] }
        // What each file says about itself (bext and iXML, CAF's 'info', MPEG-4's tags): the
        // options' names, a track per channel.
        var metadata = options.metadata
        metadata.trackNames = (0 ..< plan.channelCount).map { $0 < plan.sources.count ? plan.sources[$0] : "\(client.name):in_\($0 + 1)" }
        if options.isCompressed && !options.encodesPerFile {
            if options.isAAC { try queue.configureEncoder(bitRate: options.bitRate, quality: options.quality) }
            let file = try AudioFile.create(path: path, fileType: fileType, format: queue.format, eraseExisting: force).packetWriter!
            let writer = DiskBackedPacketFile(file, stream: try DiskStream(ringBytes: DiskBackedPacketFile.ringBytes(
                maximumPacketSize: queue.maximumOutputPacketSize, framesPerPacket: Int(queue.format.mFramesPerPacket), sampleRate: queue.format.mSampleRate)))
            try writer.setMagicCookie(queue.magicCookie)
            let packets = PacketRecordSession(writer: writer, targetFrames: targetFrames, priming: queue.packetTableInfo?.priming ?? 0,
                                              framesPerPacket: Int(queue.format.mFramesPerPacket),
                                              deviceFramesPerFileFrame: deviceFramesPerFileFrame)
            packets.metadata = metadata
            packets.clock = clock
            session = packets
            return
        }
        let bitRate = options.bitRate, quality = options.quality, encodes = options.encodesPerFile, channelCount = plan.channelCount
        // --stems: each channel's file is named after its source port's pretty-name, or its name.
        let stemNames = options.stems ? (0 ..< channelCount).map { index in
            index < plan.sources.count ? client.portInfo(named: plan.sources[index])?.prettyName ?? plan.sources[index] : "\(client.name):in_\(index + 1)"
        } : nil
        let make = { [metadata] (path: String) throws(AudioFileError) -> any RecordingFiles in
            // Stems: a mono file per channel, named after its source (each encoded by itself when
            // compressed); -m's .mid is named after the recording (`take.mid` beside `take.NAME.wav` ...).
            if let stemNames {
                let stems = encodes
                    ? try SplitRecordingFiles(encodedStemsOf: path, names: stemNames, fileType: fileType, format: fileFormat, bitRate: bitRate,
                                              quality: quality, eraseExisting: force, metadata: metadata)
                    : try SplitRecordingFiles(stemsOf: path, names: stemNames, fileType: fileType, format: format, eraseExisting: force, metadata: metadata)
                if let first = stems.paths.first { midi?.name(first, after: path) }
                return stems
            }
            if encodes {
                return try EncodedFiles(path: path, fileType: fileType, format: fileFormat, bitRate: bitRate, quality: quality, eraseExisting: force,
                                        metadata: metadata)
            }
            // More channels than libsndfile puts in one file: one file per 1024 channels.
            if channelCount > SplitRecordingFiles.channelsPerFile {
                return try SplitRecordingFiles(path: path, fileType: fileType, format: format, eraseExisting: force, metadata: metadata)
            }
            let writer = try AudioFile.create(path: path, fileType: fileType, format: format, eraseExisting: force).pcmWriter!
            writer.metadata = metadata
            return writer
        }
        // Files are written, finalized and handed to --on-file on the disk-writer thread.
        let finalized: @Sendable ([String], Int64) -> Void = { paths, frames in
            if let first = paths.first { midi?.fileFinished(path: first, frames: frames) }
            paths.forEach { hook?.run(path: $0, frames: frames) }
            paths.forEach { events?.post("file-closed", [("path", JSONText.string($0)), ("frames", "\(frames)")]) }
        }
        let layout = try LinearPCMLayout(validating: format)
        let stream = try DiskStream(ringBytes: DiskBackedFiles.ringBytes(layout: layout, sampleRate: format.mSampleRate))
        if options.transport != nil || options.isArmedRecording {
            let multi = options.transport == .multi || options.isArmedRecording
            let takes = try TakeFiles(path: multi ? options.path : path, numbered: multi, layout: layout, stream: stream, make: make, finalized: finalized)
            takes.clock = { clock.date(ofFrame: $0 * deviceFramesPerFileFrame) }
            takes.naming = options.naming
            takes.onBegin = { paths, timeReference, sampleTime in
                // -m: the take's MIDI from its first frame on the JACK timeline (a transport
                // take's TimeReference is the transport's position instead).
                if let first = paths.first { midi?.fileBegan(path: first, frame: UInt64(max(0, (sampleTime * deviceFramesPerFileFrame).rounded()))) }
                events?.post("take-started", [("files", "[" + paths.map(JSONText.string).joined(separator: ",") + "]"), ("timeReference", "\(timeReference)")])
            }
            if let events { takes.onEnd = { frames in events.post("take-finished", [("frames", "\(frames)")]) } }
            let controller: any TakeController
            if options.transport != nil {
                let transport = TransportController(multi: multi, takeChanges: { [unowned queue] in queue.takeTransportChanges(before: $0) },
                                                    relocatedThrough: { position in
                    Diagnostics.note("the transport moved to frame \(position) while recording; recorded through (the file goes on without a gap)")
                })
                self.transport = transport
                controller = transport
            } else {
                let trigger = TriggerController(layout: layout, start: options.triggerLevel.map { .level(Float(pow(10, $0 / 20))) } ?? .signal,
                                                holdSeconds: options.holdSeconds ?? 1, preRollSeconds: options.preRollSeconds ?? 0, sampleRate: format.mSampleRate)
                if options.triggerLevel == nil { trigger.listenForToggleSignal() }
                controller = trigger
                self.trigger = trigger
                let session = TakeSession(takes: takes, controller: trigger, deviceFramesPerFileFrame: deviceFramesPerFileFrame)
                if let port = options.osc.port {
                    osc = try Self.oscControl(options: options, port: port, trigger: trigger, session: session, queue: queue, client: client, signals: signals, events: events)
                }
                self.takes = session
                self.session = session
                currentFiles = { session.paths }
                files = []
                return
            }
            let session = TakeSession(takes: takes, controller: controller, deviceFramesPerFileFrame: deviceFramesPerFileFrame)
            self.takes = session
            self.session = session
            currentFiles = { session.paths }
            files = session.paths
            return
        }
        // --split-size: whole frames of audio data per file (the header comes on top).
        let splitFrames = (options.splitSeconds ?? options.splitAtSeconds).map { Int64(($0 * format.mSampleRate).rounded()) }
            ?? options.splitBytes.map { $0 / Int64(format.mBytesPerFrame) }
        let writer: DiskBackedFiles
        if let splitFrames {
            // Consecutive files, each finalized (and handed to --on-file) when full.
            // -m: each part's .mid is checkpointed while the part is written.
            let makePart = { (path: String) throws(AudioFileError) -> any RecordingFiles in
                let part = try make(path)
                midi?.partBegan(path: part.paths.first ?? path)
                return part
            }
            let parts = try TimeSplitFiles(path: options.path, splitFrames: max(1, splitFrames), make: makePart, finalized: finalized,
                                           naming: options.naming, wallClockSplit: options.splitAtSeconds.map(WallClockSplit.init(seconds:)))
            split = parts
            writer = DiskBackedFiles(parts, stream: stream)
        } else {
            writer = DiskBackedFiles(try make(path), stream: stream)
            // -m: the .mid is checkpointed while the one file is written.
            midi?.recording(into: path)
        }
        files = writer.paths
        currentFiles = { writer.paths }
        let single = RecordSession(writer: writer, targetFrames: targetFrames, deviceRate: Double(client.sampleRate))
        single.clock = clock
        session = single
    }

    /// `--osc PORT`: start, stop and split the takes, quit, and the status a control surface reads.
    private static func oscControl(options: RecordOptions, port: Int, trigger: TriggerController, session: TakeSession,
                                   queue: AudioInputQueue, client: JackClient, signals: SignalWatcher, events: EventLog?) throws -> OSCControl {
        let osc = try OSCControl(host: options.osc.host, port: port, token: options.osc.token, responder: RecordOSC(
            command: { trigger.request($0) },
            quit: { signals.received.store(SIGTERM, ordering: .releasing) },
            status: { [weak queue] in
                let summary = session.summary
                var fields: [OSCMessage.Argument] = [
                    .string(session.isRecording ? "recording" : "waiting"),
                    .int32(Int32(clamping: summary.frames)), .string(session.paths.last ?? ""),
                    .int32(Int32(clamping: queue.map { session.lostFrames(queue: $0) } ?? summary.lost)),
                    .int32(Int32(clamping: client.notifications.xrunCount.load(ordering: .relaxed)))]
                for level in queue?.currentLevels ?? [] {
                    fields.append(.float32(level.mPeakPower > 1e-6 ? 20 * log10(level.mPeakPower) : -120))
                }
                return fields
            }, events: events))
        Diagnostics.note("listening for OSC on \(options.osc.host):\(osc.port) (/aqjack/start, /stop, /split, /status, /quit, /subscribe)")
        return osc
    }

    /// Every file the recording made, once it has finished; a single file is handed to
    /// --on-file now (parts and takes were, as each was finalized).
    func finalFiles(hook: FileHook?) -> [String] {
        if let split { return split.paths }
        if let takes { return takes.paths }
        if let first = files.first { midi?.fileFinished(path: first, frames: session.summary.frames) }
        files.forEach { hook?.run(path: $0, frames: session.summary.frames) }
        files.forEach { events?.post("file-closed", [("path", JSONText.string($0)), ("frames", "\(session.summary.frames)")]) }
        return files
    }
}
