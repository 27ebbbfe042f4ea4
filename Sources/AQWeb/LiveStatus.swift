import Foundation

/// What a running session shows a browser, a script and a metrics scraper: `GET /status` as JSON
/// (schema `aqjack.status/1`, docs/WEB.md), each WebSocket push on `/live`, and `GET /metrics`
/// in Prometheus' text format. A value type, made on the thread that owns the session.
public struct LiveStatus: Sendable {
    public static let schema = "aqjack.status/1"

    /// One channel's levels of the latest buffer: linear peak and RMS (0 ... 1 and more).
    public struct Level: Sendable {
        public var peak: Float
        public var rms: Float
        public init(peak: Float, rms: Float) {
            self.peak = peak
            self.rms = rms
        }
    }

    /// `record`, `play` or `host`.
    public var command: String
    /// `waiting`, `recording`, `playing` or `stopped`.
    public var state: String
    /// Frames the session has written (or played), at `sampleRate`.
    public var frames: Int64 = 0
    public var sampleRate: Double
    public var lostFrames: Int64 = 0
    public var xruns = 0
    /// The files written so far, in order.
    public var files: [String] = []
    /// Free bytes on the files' file system, and bytes a second the session writes there.
    public var diskFreeBytes: Int64?
    public var bytesPerSecond: Double?
    public var levels: [Level] = []
    /// The commands the session takes now (`POST /control/VERB`), the page's buttons.
    public var controls: [String] = []

    public init(command: String, state: String, sampleRate: Double) {
        self.command = command
        self.state = state
        self.sampleRate = sampleRate
    }

    /// Seconds of the files so far.
    public var seconds: Double { sampleRate > 0 ? Double(frames) / sampleRate : 0 }

    /// Seconds the free space holds at the data rate, when both are known.
    public var secondsLeft: Double? {
        guard let free = diskFreeBytes, let rate = bytesPerSecond, rate > 0 else { return nil }
        return Double(free) / rate
    }

    /// dBFS of a linear level; nil for silence (below -120 dBFS).
    public static func decibels(_ linear: Float) -> Double? {
        linear >= 1e-6 ? 20 * log10(Double(linear)) : nil
    }

    /// The `aqjack.status/1` document, keys in a fixed order.
    public var json: String {
        func optional(_ value: Double?) -> String { value.map(JSONText.number) ?? "null" }
        let channels = levels.enumerated().map { index, level in
            "{\"channel\":\(index + 1),\"peakDBFS\":\(optional(Self.decibels(level.peak))),\"rmsDBFS\":\(optional(Self.decibels(level.rms)))}"
        }
        let fields = [
            "\"schema\":\(JSONText.string(Self.schema))",
            "\"command\":\(JSONText.string(command))",
            "\"state\":\(JSONText.string(state))",
            "\"seconds\":\(JSONText.number(seconds))",
            "\"frames\":\(frames)",
            "\"sampleRate\":\(JSONText.number(sampleRate))",
            "\"lostFrames\":\(lostFrames)",
            "\"xruns\":\(xruns)",
            "\"files\":[\(files.map(JSONText.string).joined(separator: ","))]",
            "\"diskFreeBytes\":\(diskFreeBytes.map(String.init) ?? "null")",
            "\"bytesPerSecond\":\(optional(bytesPerSecond))",
            "\"secondsLeft\":\(optional(secondsLeft))",
            "\"channels\":[\(channels.joined(separator: ","))]",
            "\"controls\":[\(controls.map(JSONText.string).joined(separator: ","))]",
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The metrics in Prometheus' text exposition format (version 0.0.4).
    public var prometheus: String {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for sample in samples { lines.append("\(name)\(sample.labels) \(sample.value)") }
        }
        func level(_ value: Float) -> String { Self.decibels(value).map { "\($0)" } ?? "-Inf" }
        let label = "{command=\"\(command)\"}"
        metric("aqjack_frames_total", "counter", "Frames the session has written or played.", [(label, "\(frames)")])
        metric("aqjack_lost_frames_total", "counter", "Frames lost (ring overruns, skipped cycles).", [(label, "\(lostFrames)")])
        metric("aqjack_xruns_total", "counter", "Cycles the JACK server reported late or missed.", [(label, "\(xruns)")])
        metric("aqjack_recording", "gauge", "1 while a take is being recorded or played, else 0.",
               [(label, state == "recording" || state == "playing" ? "1" : "0")])
        if let free = diskFreeBytes {
            metric("aqjack_disk_free_bytes", "gauge", "Free bytes on the file system of the files.", [(label, "\(free)")])
        }
        if let left = secondsLeft {
            metric("aqjack_disk_seconds_left", "gauge", "Seconds the free space holds at the current data rate.", [(label, "\(left)")])
        }
        metric("aqjack_peak_dbfs", "gauge", "Peak level of the latest buffer, dBFS, per channel.",
               levels.enumerated().map { ("{command=\"\(command)\",channel=\"\($0 + 1)\"}", level($1.peak)) })
        metric("aqjack_rms_dbfs", "gauge", "RMS level of the latest buffer, dBFS, per channel.",
               levels.enumerated().map { ("{command=\"\(command)\",channel=\"\($0 + 1)\"}", level($1.rms)) })
        return lines.joined(separator: "\n") + "\n"
    }

    /// Free bytes on the file system holding `path` (a file or directory; its directory when
    /// the file does not exist yet), or nil.
    public static func freeBytes(at path: String) -> Int64? {
        var info = statvfs()
        let directory = (path as NSString).deletingLastPathComponent
        for candidate in [path, directory.isEmpty ? "." : directory] where statvfs(candidate, &info) == 0 {
            return Int64(info.f_bavail) * Int64(info.f_frsize)
        }
        return nil
    }
}
