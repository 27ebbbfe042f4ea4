import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// Takes that follow the transport, JACK's or the offline driver's (`aqjack record --transport`
/// and `--transport-multi`):
/// exactly the frames during which it rolls, decided on the queue thread.
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
/// The takes are at the device's rate (``TakeSession/deviceFramesPerFileFrame`` 1): the
/// transport counts device frames, and a take is cut frame for frame with it.
///
/// (jack_capture's `--jack-transport` measured here wrote 98,560 frames while the transport
/// rolled 98,304: one period too many. Here the cut is at the cycle the state changed in.)
public final class TransportController: TakeController, @unchecked Sendable {
    private let multi: Bool
    /// The transport changes before a device frame (the queue's, taken as buffers come).
    private var takeChanges: (Double) -> [TransportChange]
    /// Whether ``attach(to:)`` sets ``takeChanges`` (none were given).
    private let followsAttachedQueue: Bool
    /// Told of a relocation while rolling in a single take (recorded through), with the
    /// transport frame it moved to.
    private let relocatedThrough: (UInt64) -> Void
    private var rolling = false
    private var finished = false
    private let relocations = Mutex(0)

    /// - Parameters:
    ///   - multi: a take per roll (and per relocation while rolling); else one take, ending the
    ///     recording at the first stop.
    ///   - takeChanges: the transport changes before a device frame
    ///     (``AudioInputQueue/takeTransportChanges(before:)``); by default those of the queue the
    ///     session is attached to (``attach(to:)``, which
    ///     ``AudioInputQueue/init(format:driver:recordingInto:bufferCount:bufferBytes:)`` calls).
    ///   - relocatedThrough: told of a relocation while rolling in a single take.
    public init(multi: Bool, takeChanges: ((Double) -> [TransportChange])? = nil, relocatedThrough: @escaping (UInt64) -> Void = { _ in }) {
        self.multi = multi
        self.takeChanges = takeChanges ?? { _ in [] }
        followsAttachedQueue = takeChanges == nil
        self.relocatedThrough = relocatedThrough
    }

    /// Follows `queue`'s transport (its ``AudioInputQueue/takeTransportChanges(before:)``) unless
    /// changes were given at init. Before the queue starts.
    public func attach(to queue: AudioInputQueue) {
        guard followsAttachedQueue else { return }
        takeChanges = { [weak queue] in queue?.takeTransportChanges(before: $0) ?? [] }
    }

    /// Relocations while rolling so far. Any thread.
    public var relocationCount: Int { relocations.withLock { $0 } }

    public func takeFrames(_ data: UnsafeRawPointer, frames: Int, at first: Double, into takes: TakeFiles) throws(AudioFileError) -> Bool {
        let bytesPerFrame = takes.layout.bytesPerFrame
        var done = 0
        for change in takeChanges(first + Double(frames)) {
            let at = min(frames, max(0, Int((change.sampleTime - first).rounded())))
            if rolling { try takes.write(data + done * bytesPerFrame, frames: at - done) }
            done = at
            try apply(change, to: takes)
            if finished { return false }
        }
        if rolling { try takes.write(data + done * bytesPerFrame, frames: frames - done) }
        return true
    }

    private func apply(_ change: TransportChange, to takes: TakeFiles) throws(AudioFileError) {
        if change.isRolling {
            if !rolling {
                try takes.begin(at: change.sampleTime, timeReference: change.position)
            } else if change.isRelocation {
                relocations.withLock { $0 += 1 }
                if multi {
                    try takes.end()
                    try takes.begin(at: change.sampleTime, timeReference: change.position)
                } else {
                    relocatedThrough(change.position)
                }
            }
            rolling = true
        } else if rolling {
            rolling = false
            try takes.end()
            if !multi { finished = true }
        }
    }
}
