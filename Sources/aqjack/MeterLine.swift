import AQSession
import AudioQueue
import Foundation

/// The live status line of `aqjack record` on a terminal: per-channel peak and RMS in dBFS,
/// ring fill, lost frames, xruns and the recording time the disk has left, redrawn in place about 20 times a second.
final class MeterLine {
    let enabled: Bool
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    /// - Parameter secondsLeft: what the disk holds at the data rate, when known.
    func show(queue: AudioInputQueue, session: any RecordingSession, xruns: Int, secondsLeft: Double?) {
        guard enabled else { return }
        let levels = queue.currentLevels
        let shown = levels.prefix(8).enumerated().map { index, level in
            "\(index + 1):\(Self.decibels(level.mPeakPower))/\(Self.decibels(level.mAveragePower))"
        }.joined(separator: " ")
        let more = levels.count > 8 ? " +\(levels.count - 8)ch" : ""
        let seconds = Double(session.framesWritten) / queue.format.mSampleRate
        let line = String(format: "%7.1f s  peak/rms dBFS %@%@  ring %3.0f%%  lost %d  xruns %d%@",
                          seconds, shown, more, queue.ringFill * 100, Int(session.lostFrames(queue: queue)), xruns,
                          secondsLeft.map { "  disk " + DiskSpace.describe(seconds: $0) } ?? "")
        Diagnostics.emit("\r\u{1B}[K" + line, to: .standardOutput)
        drawn = true
    }

    func finish() {
        if drawn { Diagnostics.emit("\n", to: .standardOutput) }
    }

    static func decibels(_ linear: Float) -> String {
        linear > 1e-6 ? String(format: "%.0f", 20 * log10(linear)) : "-inf"
    }
}
