import AQWeb
import Foundation

/// How much recording the disk holds: free space against a recording's data rate, as a
/// studio engineer reads it (`record --min-free`, the disk-low warning, the meter line).
enum DiskSpace {
    /// Why `record --min-free MINUTES` refuses to start at `path`, writing `bytesPerSecond`; nil
    /// when the disk holds enough, or its free space or the rate is unknown.
    static func refusal(minimumMinutes: Double, path: String, bytesPerSecond: Double?) -> String? {
        guard let rate = bytesPerSecond, rate > 0, let free = LiveStatus.freeBytes(at: path) else { return nil }
        let holds = Double(free) / rate
        guard holds < minimumMinutes * 60 else { return nil }
        let folder = (path as NSString).deletingLastPathComponent
        return "the disk of '\(folder.isEmpty ? "." : folder)' has \(describe(bytes: free)) free: \(describe(seconds: holds)) at this recording's \(describe(bytes: Int64(rate.rounded())))/s, less than --min-free \(minimumMinutes.formatted()) min"
    }

    /// Bytes in the largest binary unit that keeps one whole: "512 KiB", "1.5 GiB".
    static func describe(bytes: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes), unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) bytes" : String(format: value < 10 ? "%.1f %@" : "%.0f %@", value, units[unit])
    }

    /// A duration as hours and minutes, minutes and seconds, or seconds: "2 h 05 min", "4 min 10 s", "35 s".
    static func describe(seconds: Double) -> String {
        let whole = Int(max(0, seconds).rounded(.down))
        if whole >= 3600 { return String(format: "%d h %02d min", whole / 3600, whole % 3600 / 60) }
        if whole >= 60 { return String(format: "%d min %02d s", whole / 60, whole % 60) }
        return "\(whole) s"
    }
}
