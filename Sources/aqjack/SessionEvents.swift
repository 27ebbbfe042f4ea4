import AQWeb
import Foundation

/// A session's event log (`--http`'s `/events`, `--events FILE|-`), and the events its loop
/// notices by looking at each status: the server's xruns, frames lost, the disk running low.
struct SessionEvents {
    let log: EventLog
    private var xruns = 0
    private var lost: Int64 = 0
    private var warnedDisk = false
    /// Below this many seconds of free space at the data rate, `disk-low` and a warning (once).
    let diskLowSeconds: Double
    /// The warning's threshold without `record --min-free`: 10 minutes.
    static let defaultDiskLowSeconds = 600.0

    /// The log for `options`: with `--events`, writing to that file (created or emptied) or to
    /// standard output (`-`); nil without `--http` or `--events` unless `always` (a recorder,
    /// whose disk warning and silence alarm are events for OSC subscribers too).
    /// - Throws: the reason the file cannot be written.
    static func make(_ options: HTTPOptions, always: Bool = false, diskLowSeconds: Double = defaultDiskLowSeconds) throws(UsageError) -> SessionEvents? {
        guard always || options.port != nil || options.events != nil else { return nil }
        var output: FileHandle?
        if let path = options.events {
            if path == "-" {
                output = FileHandle.standardOutput
            } else {
                guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
                    throw UsageError(message: "--events \(path): cannot write it (\(String(cString: strerror(errno))))")
                }
                output = handle
            }
        }
        return SessionEvents(log: EventLog(output: output), diskLowSeconds: diskLowSeconds)
    }

    private init(log: EventLog, diskLowSeconds: Double) {
        self.log = log
        self.diskLowSeconds = diskLowSeconds
    }

    /// Posts what changed since the last look.
    mutating func look(at status: LiveStatus) {
        if status.xruns > xruns {
            xruns = status.xruns
            log.post("xrun", [("xruns", "\(xruns)")])
        }
        if status.lostFrames > lost {
            lost = status.lostFrames
            // A recorder loses frames to overruns (or skipped cycles); a player to underruns.
            log.post(status.command == "play" ? "underrun" : "overrun", [("lostFrames", "\(lost)")])
        }
        if !warnedDisk, let left = status.secondsLeft, left < diskLowSeconds {
            warnedDisk = true
            log.post("disk-low", [("diskFreeBytes", status.diskFreeBytes.map(String.init) ?? "null"), ("secondsLeft", JSONText.number(left))])
            Diagnostics.warning("the disk is running out: \(DiskSpace.describe(bytes: status.diskFreeBytes ?? 0)) free, \(DiskSpace.describe(seconds: left)) more at this data rate")
        }
    }
}
