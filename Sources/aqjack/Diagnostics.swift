import AQJack
import AQMedia
import Foundation

/// Messages to stderr, prefixed `aqjack:`, so stdout stays clean for data and JSON.
enum Diagnostics {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("aqjack: error: \(FilePath.display(message))\n".utf8))
    }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("aqjack: warning: \(FilePath.display(message))\n".utf8))
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data("aqjack: \(FilePath.display(message))\n".utf8))
    }
}

extension Diagnostics {
    /// Stalled callbacks a recorder's client keeps for ``writeStalls(of:)``: 65,536 (1.3 MB)
    /// when AQJACK_STALLS asks for them, else 64 (JackClient's default).
    static var stallLogCapacity: Int { environmentValue("AQJACK_STALLS") == nil ? 64 : 1 << 16 }

    /// With `AQJACK_STALLS=FILE` in the environment, writes the client's stalled callbacks to
    /// FILE, one a line: "FRAME_TIME SINCE_PREVIOUS_US DURATION_US CPU_US MINOR_FAULTS"
    /// (``JackClient/stalledCycleDetails``). For the bench, which sets each gap in a recording
    /// beside the callbacks around it.
    static func writeStalls(of client: JackClient) {
        guard let path = environmentValue("AQJACK_STALLS") else { return }
        let lines = client.stalledCycleDetails.map { "\($0.frameTime) \($0.sincePreviousMicros) \($0.durationMicros) \($0.cpuMicros) \($0.minorFaults)\n" }
        if !FileManager.default.createFile(atPath: path, contents: Data(lines.joined().utf8)) {
            warning("could not write the stalled callbacks to \(path) (AQJACK_STALLS)")
        }
    }
}

/// Prints a command's final summary: one JSON object (sorted keys) or its text form.
func printSummary<Summary: Encodable>(_ summary: Summary, json: Bool, text: () -> String) {
    if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: (try? encoder.encode(summary)) ?? Data(), as: UTF8.self))
    } else {
        print(FilePath.display(text()))
    }
}
