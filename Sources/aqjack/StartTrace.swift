import Foundation

/// Where a command's start goes: with `AQJACK_START_TRACE=NS` in the environment (the wall
/// clock, `date +%s%N`, taken just before the exec), each ``mark(_:)`` notes the time since
/// then, and ``report()`` prints them on one stderr line: "aqjack: start: LABEL MS ...". For the
/// bench's start comparison (Scripts/bench-start.sh), which prints the median of each phase.
/// Main thread only.
enum StartTrace {
    nonisolated(unsafe) private static var marks: [(label: String, milliseconds: Double)] = []
    private static let origin: Double? = environmentValue("AQJACK_START_TRACE").flatMap(Double.init)

    /// Notes that `label` (one word) is done now.
    static func mark(_ label: String) {
        guard let origin else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        marks.append((label, (Double(now.tv_sec) * 1e9 + Double(now.tv_nsec) - origin) / 1e6))
    }

    /// Prints the marks so far, once.
    static func report() {
        guard origin != nil, !marks.isEmpty else { return }
        let line = marks.map { "\($0.label) \(String(format: "%.1f", $0.milliseconds))" }.joined(separator: " ")
        FileHandle.standardError.write(Data("aqjack: start: \(line)\n".utf8))
        marks.removeAll()
    }
}
