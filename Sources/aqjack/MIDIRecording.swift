import AQCore
import AQJack
import AQMedia
import AQSession
import Foundation
import Synchronization

/// `record -m PORT_OR_GLOB`: JACK MIDI recorded beside the audio, a Standard MIDI File per audio
/// file (its name with `.mid`, a recording's name for stems; format 1, a track per port named after it, one tick a frame, the
/// first tick the audio file's first frame). A client of its own (`CLIENT-midi`, ports
/// `midi_in_1 ...`) captures every event with its JACK frame (``MIDIRecordingProcessor``); a
/// reader thread keeps them in memory; each audio file's `.mid` is written as the file is
/// finalized, with the notes sounding across its start turned on at tick 0 and those sounding
/// at its end turned off there (so a split closes and reopens them). While a plain recording's,
/// a `--split` part's or a take's file is open, its `.mid` is rewritten (a whole file, renamed
/// into place) every ``checkpointInterval`` when events came (less often once a rewrite takes
/// long: ``nextCheckpoint(after:)``), up to the last event, notes still on turned off there: a
/// recorder killed outright leaves a valid `.mid` missing at most that interval's events.
///
/// Threads: ``fileBegan(path:frame:)`` and ``fileFinished(path:frames:)`` from any thread (the
/// disk writer's); the rest from the session's.
final class MIDIRecording: @unchecked Sendable {
    let client: JackClient
    /// The MIDI output ports recorded, one per track, in order.
    let sources: [String]
    private let processor: MIDIRecordingProcessor
    private let sampleRate: Int
    /// The events, in arrival order per port: 64-bit JACK frame and bytes.
    private struct Store {
        var events: [[(frame: UInt64, bytes: [UInt8])]]
        var count = 0
        /// Frame-time extension to 64 bits.
        var lastFrame: UInt32?
        var high: UInt64 = 0
        /// Takes' first frames by audio path; the parts of a take split in time follow each
        /// other from its first, and the files of a plain recording from its first frame.
        var starts: [String: UInt64] = [:]
        /// Where the file after the last one finalized begins, when it follows on.
        var nextStart: UInt64?
        /// The recording a file belongs to, by the file's path, where its `.mid` is named after
        /// that instead (stems: `take.mid` beside `take.NAME.wav`).
        var midiNames: [String: String] = [:]
        /// The recording's first device frame (its first buffer's), once known.
        var firstFrame: UInt64?
        var written: [String] = []
        var lostEvents = 0
        /// The audio file being recorded now and its first device frame: a plain recording's
        /// (``recording(into:)``, from ``recordingBegan(frame:)``) or a take's (``fileBegan(path:frame:)``).
        var open: (path: String, start: UInt64)?
        var plainPath: String?
        /// The event count at the last checkpoint of `open`.
        var checkpointed = 0
    }
    private let store: Mutex<Store>
    /// Held while a `.mid` is written: a checkpoint never lands after the file's final write.
    private let writing = Mutex(())
    private let running = Atomic<Bool>(true)
    /// How often an open file's `.mid` is rewritten when events came, at most.
    static let checkpointInterval: Duration = .milliseconds(250)

    /// How long after a rewrite that took `took` the next may come: ``checkpointInterval``, or ten
    /// times the rewrite's own time when that is longer. A rewrite is a whole file, its time grows
    /// with the events of the take (about a microsecond each): a take of millions of events is
    /// rewritten every few seconds, at a tenth of a core at most, not four times a second.
    static func nextCheckpoint(after took: Duration) -> Duration { max(checkpointInterval, took * 10) }
    private var thread: Thread?
    /// Events kept at most: past it, events are counted lost.
    static let eventLimit = 4_000_000

    /// Opens `CLIENT-midi` with a MIDI input per source and connects them.
    init(name: String, server: String?, sources: [String], sampleRate: Int) throws(JackError) {
        self.sources = sources
        self.sampleRate = sampleRate
        processor = MIDIRecordingProcessor()
        store = Mutex(Store(events: Array(repeating: [], count: sources.count)))
        client = try JackClient(name: name, server: server)
        var ports: [JackPort] = []
        for index in sources.indices { ports.append(try client.registerPort("midi_in_\(index + 1)", direction: .input, isMIDI: true)) }
        try client.activate(processor: processor, midiInputs: ports)
        for (source, port) in zip(sources, ports) { try client.connect(source, to: port.name) }
    }

    /// Takes events off the ring every 10 ms until ``stop()``.
    func start() {
        let thread = Thread { [self] in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: processor.readBufferBytes, alignment: 16)
            defer { buffer.deallocate() }
            var lastCheckpoint = ContinuousClock.now
            var wait = Self.checkpointInterval
            while running.load(ordering: .acquiring) {
                drain(buffer)
                if ContinuousClock.now - lastCheckpoint >= wait {
                    let began = ContinuousClock.now
                    checkpoint()
                    lastCheckpoint = .now
                    wait = Self.nextCheckpoint(after: lastCheckpoint - began)
                }
                usleep(10_000)
            }
            drain(buffer)
        }
        thread.name = "aqjack-midi"
        self.thread = thread
        thread.start()
    }

    private func drain(_ buffer: UnsafeMutableRawBufferPointer) {
        store.withLock { store in
            while let event = processor.read(into: buffer) {
                if let last = store.lastFrame, event.frame < last, last &- event.frame > 1 << 31 { store.high += 1 << 32 }
                store.lastFrame = event.frame
                guard store.count < Self.eventLimit else {
                    store.lostEvents += 1
                    continue
                }
                store.events[event.port].append((store.high | UInt64(event.frame), Array(event.bytes)))
                store.count += 1
            }
        }
    }

    /// Stops capturing (after the audio) and closes the client.
    func stop() {
        running.store(false, ordering: .releasing)
        while let thread, !thread.isFinished { usleep(1000) }
        portLostEvents.store(Int(client.processTiming.midiEventsLost), ordering: .relaxed)
        client.close()
    }

    /// Events the ports lost (``ProcessTiming/midiEventsLost``), as of ``stop()``.
    private let portLostEvents = Atomic<Int>(0)

    /// Events lost: lost by JACK on the ports, no room in the ring, too long, or past ``eventLimit``.
    var lostEvents: Int {
        portLostEvents.load(ordering: .relaxed) + processor.droppedEvents.load(ordering: .relaxed) + store.withLock { $0.lostEvents }
    }
    var eventCount: Int { store.withLock { $0.count } }
    var files: [String] { store.withLock { $0.written } }

    /// The recording's first buffer began at device frame `frame` (later calls are ignored).
    /// Called on the queue thread, outside the session's lock: the disk writer finalizes files
    /// while the session holds it, so ``fileFinished(path:frames:)`` must not ask the session.
    func recordingBegan(frame: UInt64) {
        store.withLock { store in
            guard store.firstFrame == nil else { return }
            store.firstFrame = frame
            if let path = store.plainPath { store.open = (path, frame) }
        }
    }

    /// A plain recording (one file, not split, no takes) goes into `path`: its `.mid` is
    /// checkpointed from the recording's first frame on.
    func recording(into path: String) { store.withLock { $0.plainPath = path } }

    /// A `--split` part's audio file `path` was made: the first at the start (checkpointed from
    /// the recording's first frame on), each next one just after the one before it was finalized
    /// (``fileFinished(path:frames:)``), from where that one ended. The disk writer's thread.
    func partBegan(path: String) {
        store.withLock { store in
            if let start = store.nextStart {
                store.open = (path, start)
                store.checkpointed = -1
            } else {
                store.plainPath = path
                if let first = store.firstFrame { store.open = (path, first) }
            }
        }
    }

    /// A take's audio file began at device frame `frame`.
    func fileBegan(path: String, frame: UInt64) {
        store.withLock { store in
            store.starts[path] = frame
            store.open = (path, frame)
            store.checkpointed = -1
        }
    }

    /// Rewrites the open file's `.mid` with the events so far, when more came since the last
    /// time. On the reader thread.
    private func checkpoint() {
        writing.withLock { _ in
            let snapshot: (path: String, start: UInt64, end: UInt64, tracks: [StandardMIDIFile.Track])? = store.withLock { store in
                guard let open = store.open, store.count != store.checkpointed else { return nil }
                store.checkpointed = store.count
                let last = store.events.compactMap { $0.last?.frame }.max() ?? open.start
                let end = max(open.start, last + 1)
                let tracks = store.events.enumerated().map { port, events in
                    StandardMIDIFile.Track(name: sources[port], events: Self.events(events, from: open.start, frames: end - open.start))
                }
                return (store.midiNames[open.path] ?? open.path, open.start, end, tracks)
            }
            guard let snapshot else { return }
            write(StandardMIDIFile.data(tracks: snapshot.tracks, sampleRate: sampleRate, lengthTicks: snapshot.end - snapshot.start),
                  to: Self.midiPath(snapshot.path), record: false)
        }
    }

    /// The `.mid` beside the audio file (or recording) `path`.
    static func midiPath(_ path: String) -> String { (path as NSString).deletingPathExtension + ".mid" }

    /// Writes `bytes` to a temporary file beside `path` and renames it into place, so `path` is
    /// always a whole file; `record` lists it in ``files``.
    private func write(_ bytes: [UInt8], to path: String, record: Bool) {
        let temporary = path + ".part"
        if FileManager.default.createFile(atPath: temporary, contents: Data(bytes)), rename(temporary, path) == 0 {
            if record { store.withLock { $0.written.append(path) } }
        } else {
            Diagnostics.error("could not write \(path): \(String(cString: strerror(errno)))")
            unlink(temporary)
        }
    }

    /// The `.mid` of the audio file `path` takes its name from `recording` instead.
    func name(_ path: String, after recording: String) { store.withLock { $0.midiNames[path] = recording } }

    /// The audio file `path` was finalized holding `frames` frames: writes its `.mid`.
    func fileFinished(path: String, frames: Int64) {
        let placed: (start: UInt64, name: String)? = store.withLock { store in
            guard let start = store.starts.removeValue(forKey: path) ?? store.nextStart ?? store.firstFrame else { return nil }
            store.nextStart = start + UInt64(max(0, frames))
            return (start, store.midiNames.removeValue(forKey: path) ?? path)
        }
        guard let (start, name) = placed else { return }
        // Events up to the file's end must be in: they come within a few cycles.
        Thread.sleep(forTimeInterval: 0.05)
        writing.withLock { _ in
            let tracks = store.withLock { store in
                // The open file is named by its first path, or by its recording (stems).
                if let open = store.open, open.path == path || open.path == name { store.open = nil }
                return store.events.enumerated().map { port, events in
                    StandardMIDIFile.Track(name: sources[port], events: Self.events(events, from: start, frames: UInt64(max(0, frames))))
                }
            }
            write(StandardMIDIFile.data(tracks: tracks, sampleRate: sampleRate, lengthTicks: UInt64(max(0, frames))), to: Self.midiPath(name), record: true)
        }
    }

    /// One port's events of the frames `start ..< start + frames` at ticks from `start`: the
    /// notes on at `start` turned on at tick 0 (their velocity), those still on at the end
    /// turned off at tick `frames`.
    static func events(_ all: [(frame: UInt64, bytes: [UInt8])], from start: UInt64, frames: UInt64) -> [(tick: UInt64, bytes: [UInt8])] {
        var sounding: [UInt16: UInt8] = [:]   // channel << 8 | key → velocity
        func track(_ bytes: [UInt8]) {
            guard bytes.count >= 3 else { return }
            let kind = bytes[0] & 0xF0, key = UInt16(bytes[0] & 0x0F) << 8 | UInt16(bytes[1])
            if kind == 0x90 && bytes[2] > 0 { sounding[key] = bytes[2] } else if kind == 0x80 || kind == 0x90 { sounding[key] = nil }
        }
        var result: [(tick: UInt64, bytes: [UInt8])] = []
        for event in all where event.frame < start { track(event.bytes) }
        for (key, velocity) in sounding.sorted(by: { $0.key < $1.key }) {
            result.append((0, [0x90 | UInt8(key >> 8), UInt8(key & 0xFF), velocity]))
        }
        for event in all where event.frame >= start && event.frame < start + frames {
            result.append((event.frame - start, event.bytes))
            track(event.bytes)
        }
        for key in sounding.keys.sorted() { result.append((frames, [0x80 | UInt8(key >> 8), UInt8(key & 0xFF), 0])) }
        return result
    }
}
