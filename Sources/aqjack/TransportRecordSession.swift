import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// `aqjack record --transport` and `--transport-multi`: records exactly the frames during which
/// JACK's transport rolls, on the queue thread.
///
/// The queue notes the transport state of every captured cycle
/// (``AudioInputQueue/takeTransportChanges(before:)``); each buffer is cut where the state
/// changed, so a take's first frame is the first frame of the first rolling cycle and its last
/// is the last frame of the last one. A take's BWF TimeReference is the transport frame of its
/// first frame (where a DAW's timeline has it), not the JACK frame time.
///
/// - Single (`--transport`): one take into the path given, from the first roll to the next stop;
///   then the recording ends. A relocation while rolling is recorded through and counted.
/// - Multi (`--transport-multi`): a new file per roll (`take-001.wav`, `take-002.wav` ...), and
///   per relocation while rolling; the recording goes on until interrupted.
///
/// (jack_capture's `--jack-transport` measured here wrote 98,560 frames while the transport
/// rolled 98,304: one period too many. Here the cut is at the cycle the state changed in.)
final class TransportRecordSession: RecordingSession, @unchecked Sendable {
    let isFinished = Atomic<Bool>(false)
    private let lock = NSLock()
    private let multi: Bool
    private let path: String
    private let layout: LinearPCMLayout
    /// Opens the files of a take at a path.
    private let make: (String) throws(AudioFileError) -> any RecordingFiles
    /// The transport changes before a device frame (the queue's, taken as buffers come).
    private let takeChanges: (Double) -> [TransportChange]
    /// Called with the paths and length of each take as it is finalized (--on-file).
    private let finalized: ([String], Int64) -> Void

    /// The take being written: its files, the device frame of its first frame, where it is on
    /// the device timeline (gaps are filled with silence), the transport frame expected next.
    private var take: (files: any RecordingFiles, timeline: TimelineAligner, start: Double)?
    /// The single-mode file, opened before the transport rolls (so a refusal comes first).
    private var waitingFiles: (any RecordingFiles)?
    private var rolling = false
    private var takeCount = 0
    private var closedPaths: [String] = []
    private var closedFrames: Int64 = 0
    private(set) var relocations = 0
    private var startFrame: UInt64?
    private var lostFrames: Int64 = 0
    private var failure: String?

    /// - Parameters:
    ///   - path: the file (single), or the name the takes are numbered from (multi).
    init(path: String, multi: Bool, layout: LinearPCMLayout,
         make: @escaping (String) throws(AudioFileError) -> any RecordingFiles,
         takeChanges: @escaping (Double) -> [TransportChange],
         finalized: @escaping ([String], Int64) -> Void) throws(AudioFileError) {
        self.path = path
        self.multi = multi
        self.layout = layout
        self.make = make
        self.takeChanges = takeChanges
        self.finalized = finalized
        if !multi { waitingFiles = try make(path) }
    }

    /// Every file written, in order (takes, then channel groups).
    var paths: [String] {
        lock.withLock { closedPaths + (take?.files.paths ?? waitingFiles?.paths ?? []) }
    }
    /// Takes begun so far.
    var takes: Int { lock.withLock { takeCount } }

    var framesWritten: Int64 { lock.withLock { closedFrames + (take?.files.packetCount ?? 0) } }
    var summary: (start: UInt64?, frames: Int64, lost: Int64, failure: String?) {
        lock.withLock { (startFrame, closedFrames + (take?.files.packetCount ?? 0), lostFrames, failure) }
    }

    func handle(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil, !isFinished.load(ordering: .relaxed) else { return false }
        let frames = Int(buffer.pointee.mAudioDataByteSize) / layout.bytesPerFrame
        guard frames > 0 else { return true }
        let first = startTime.mSampleTime
        do throws(AudioFileError) {
            var done = 0
            for change in takeChanges(first + Double(frames)) {
                let at = min(frames, max(0, Int((change.sampleTime - first).rounded())))
                try write(buffer, from: done, to: at, startingAt: first)
                done = at
                try apply(change)
                if isFinished.load(ordering: .relaxed) { return false }
            }
            try write(buffer, from: done, to: frames, startingAt: first)
        } catch {
            failure = error.message
            isFinished.store(true, ordering: .releasing)
            return false
        }
        return true
    }

    /// Writes frames `from ..< to` of `buffer` (first frame at device frame `first`) to the take,
    /// when the transport rolls; silence for a gap since the take's previous frames.
    private func write(_ buffer: AudioQueueBufferRef, from: Int, to: Int, startingAt first: Double) throws(AudioFileError) {
        guard rolling, to > from, var current = take else { return }
        let position = Int64((first + Double(from) - current.start).rounded())
        let placement = current.timeline.place(position: position, count: Int64(to - from))
        take = current
        if placement.silence > 0 {
            try appendSilence(Int(placement.silence), to: current.files)
            lostFrames += placement.silence
        }
        let skip = Int(placement.skip)
        if to - from > skip {
            try current.files.append(buffer.pointee.mAudioData + (from + skip) * layout.bytesPerFrame, frames: to - from - skip)
        }
    }

    private func apply(_ change: TransportChange) throws(AudioFileError) {
        if change.isRolling {
            if !rolling {
                try begin(at: change)
            } else if change.isRelocation {
                relocations += 1
                if multi {
                    try end()
                    try begin(at: change)
                } else {
                    Diagnostics.note("the transport moved to frame \(change.position) while recording; recorded through (the file goes on without a gap)")
                }
            }
            rolling = true
        } else if rolling {
            rolling = false
            try end()
            if !multi { isFinished.store(true, ordering: .releasing) }
        }
    }

    /// Starts a take whose first frame is device frame `change.sampleTime`, transport frame
    /// `change.position`.
    private func begin(at change: TransportChange) throws(AudioFileError) {
        takeCount += 1
        let files: any RecordingFiles
        if let waiting = waitingFiles {
            files = waiting
            waitingFiles = nil
        } else {
            files = try make(TimeSplitFiles.partPath(path, index: takeCount))
        }
        if files.canCarryTimeReference { try files.markStart(frame: change.position) }
        take = (files, TimelineAligner(longestFilledGap: 10 * Int64(files.sampleRate)), change.sampleTime)
        if startFrame == nil { startFrame = UInt64(max(0, change.sampleTime)) }
    }

    /// Finalizes the take being written.
    private func end() throws(AudioFileError) {
        guard let current = take else { return }
        take = nil
        try current.files.close()
        closedPaths += current.files.paths
        closedFrames += current.files.packetCount
        finalized(current.files.paths, current.files.packetCount)
    }

    private func appendSilence(_ frames: Int, to files: any RecordingFiles) throws(AudioFileError) {
        let chunk = min(frames, 8192)
        let zeros = UnsafeMutableRawPointer.allocate(byteCount: chunk * layout.bytesPerFrame, alignment: 16)
        defer { zeros.deallocate() }
        zeros.initializeMemory(as: UInt8.self, repeating: 0, count: chunk * layout.bytesPerFrame)
        var left = frames
        while left > 0 {
            let count = min(left, chunk)
            try files.append(zeros, frames: count)
            left -= count
        }
    }

    func finish(queue: AudioInputQueue) -> String? {
        lock.lock()
        defer { lock.unlock() }
        do throws(AudioFileError) {
            try end()
            // Single mode, never rolled: the empty file opened up front is still valid.
            if let waiting = waitingFiles {
                try waiting.close()
                closedPaths += waiting.paths
                waitingFiles = nil
            }
        } catch {
            failure = failure ?? error.message
        }
        return failure
    }
}
