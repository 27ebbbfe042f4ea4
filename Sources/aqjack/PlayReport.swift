import AQCodecs
import AQCore
import AQJack
import AQMedia
import AQPlugins
import AudioQueue
import CAudioTypes
import Foundation
import Glibc
import Synchronization

/// The final summary of `aqjack play`.
struct PlayReport: Encodable {
    let files: [String]
    let channels: Int
    let sampleRate: Int
    /// Frames played, at the files' (output) rate.
    let framesPlayed: Int64
    /// Frames the files hold in all (nil when looping forever).
    let expectedFrames: Int64?
    /// The JACK server's rate and the device frames played at it.
    let deviceSampleRate: Int
    let deviceFrames: Int64
    let startFrameTime: UInt64?
    let underrunFrames: Int
    let xruns: Int
    let ports: [String]
    let exitReason: String
    /// How the process callback kept time (its slow cycles are the xruns aqjack caused).
    let processTiming: ProcessTiming

    func print(json: Bool) {
        printSummary(self, json: json) {
            """
            played \(files.joined(separator: ", ")): \(channels) ch, \(framesPlayed)\(expectedFrames.map { " of \($0)" } ?? "") frames at \(sampleRate) Hz (\(deviceFrames) JACK frames at \(deviceSampleRate) Hz) from JACK frame \(startFrameTime.map(String.init) ?? "-")
              underruns \(underrunFrames) frames, xruns \(xruns), stopped by: \(exitReason)
            """
        }
    }
}
