import AQSession
import AQWeb
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// `record --silence-alarm DBFS SECONDS` on a running queue: looks at each buffer the queue
/// delivers (its level meter's peaks) and tells of a silence, and of sound coming back after
/// one, on standard error and as the events `silence` and `sound` (``EventLog``: `--events`,
/// `/events`, OSC subscribers). Called on the queue thread only; ``alarms`` from any thread.
final class SilenceWatch: @unchecked Sendable {
    private var alarm: SilenceAlarm
    private let log: EventLog?
    private let sampleRate: Double
    private let decibels: Double
    /// The first buffer's first frame: where the recording's seconds count from.
    private var origin: Double?
    /// Alarms given so far.
    let alarms = Atomic<Int>(0)

    /// - Parameter sampleRate: the server's rate, Hz (the buffers' sample times count its frames).
    init(decibels: Double, seconds: Double, sampleRate: Double, log: EventLog?) {
        alarm = SilenceAlarm(decibels: decibels, seconds: seconds, sampleRate: sampleRate)
        self.log = log
        self.sampleRate = sampleRate
        self.decibels = decibels
    }

    /// Takes a buffer just delivered by `queue` (its level meter holds this buffer's levels).
    func observe(queue: AudioInputQueue, buffer: AudioQueueBufferRef, startTime: AudioTimeStamp) {
        let format = queue.format
        let fileFrames = format.mBytesPerFrame > 0
            ? Int(buffer.pointee.mAudioDataByteSize / format.mBytesPerFrame)
            : Int(buffer.pointee.mPacketDescriptionCount) * Int(format.mFramesPerPacket)
        guard fileFrames > 0, format.mSampleRate > 0 else { return }
        // Sample times are JACK frames: a resampled buffer's length in the server's rate.
        let frames = Double(fileFrames) * sampleRate / format.mSampleRate
        let peak = queue.currentLevels.reduce(Float(0)) { max($0, $1.mPeakPower) }
        let first = startTime.mSampleTime
        if origin == nil { origin = first }
        func seconds(_ frame: Double) -> Double { (frame - (origin ?? frame)) / sampleRate }
        switch alarm.observe(peak: peak, first: first, frames: frames) {
        case .silent(let since, let length)?:
            alarms.add(1, ordering: .relaxed)
            Diagnostics.warning(String(format: "silence: every channel below %.1f dBFS for %.1f s (since %.1f s into the recording)", decibels, length / sampleRate, seconds(since)))
            log?.post("silence", [("frameTime", "\(UInt64(max(0, since)))"), ("atSeconds", JSONText.number(seconds(since))),
                                  ("levelDBFS", JSONText.number(decibels)), ("seconds", JSONText.number(length / sampleRate))])
        case .sound(let at, let silent)?:
            Diagnostics.note(String(format: "sound again at %.1f s into the recording, after %.1f s of silence", seconds(at), silent / sampleRate))
            log?.post("sound", [("frameTime", "\(UInt64(max(0, at)))"), ("atSeconds", JSONText.number(seconds(at))),
                                ("silentSeconds", JSONText.number(silent / sampleRate))])
        case nil:
            break
        }
    }
}
