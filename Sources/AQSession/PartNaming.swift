import AQMedia
import Foundation
import Glibc

/// How the files of a recording in parts or takes are named: numbered (`take.wav` →
/// `take-001.wav`, `take-002.wav` ...), or after the wall-clock time of each file's first frame
/// (`record --name-format PATTERN`: the strftime PATTERN in the local time zone, in FILE's
/// folder with FILE's extension; `gig-%Y%m%d-%H%M%S` → `gig-20261205-142000.wav`). Two files
/// whose names would be the same (two takes in one second) get `-2`, `-3` ... A value.
public enum PartNaming: Sendable {
    case numbered
    case wallClock(pattern: String)

    /// The path of part or take `index` (1-based) of a recording to `base`, whose first frame
    /// is at `date` (now when nil).
    public func path(base: String, index: Int, date: Date?) -> String {
        switch self {
        case .numbered:
            return TimeSplitFiles.partPath(base, index: index)
        case .wallClock(let pattern):
            let folder = (base as NSString).deletingLastPathComponent
            let ext = (base as NSString).pathExtension
            let name = Self.format(pattern, date ?? Date())
            let stem = (folder.isEmpty ? "" : folder + "/") + name
            var candidate = stem + (ext.isEmpty ? "" : "." + ext), count = 1
            while FileManager.default.fileExists(atPath: candidate) {
                count += 1
                candidate = stem + "-\(count)" + (ext.isEmpty ? "" : "." + ext)
            }
            return candidate
        }
    }

    /// `pattern` through strftime(3) at `date` (to the millisecond), local time; empty when it makes nothing.
    public static func format(_ pattern: String, _ date: Date) -> String {
        var seconds = time_t(RecordingMetadata.nearestMillisecond(date).timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 1024)
        let count = strftime(&buffer, buffer.count, pattern, &parts)
        return count > 0 ? String(decoding: buffer[0 ..< count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }
}

/// `record --split-at PERIOD`: parts that end at the top of each PERIOD of the wall clock
/// (local time, counted from midnight: 1 h splits at every full hour, 15 min at :00, :15, :30
/// and :45). The first part runs from the first frame to the next boundary, the others a whole
/// period each: the boundaries follow the device's frame clock from the first frame on.
public struct WallClockSplit: Sendable {
    /// The period, seconds (at most a day).
    public let seconds: Double

    public init(seconds: Double) { self.seconds = seconds }

    /// Seconds from `date` to the next boundary (a whole period when `date` is on one).
    public func secondsToBoundary(from date: Date) -> Double {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let midnight = calendar.startOfDay(for: date)
        let since = date.timeIntervalSince(midnight)
        let left = seconds - since.truncatingRemainder(dividingBy: seconds)
        return left > 0 ? left : seconds
    }
}
