import AQJack
import Foundation

/// Runs reference tools (ffprobe, ffmpeg, sox) found on PATH and collects what they print.
public enum ExternalTool {
    public struct Result {
        public let status: Int32
        public let standardOutput: String
        public let standardError: String
    }

    /// Runs `tool` with `arguments` and waits at most `timeout` seconds (default 600: no
    /// reference tool here takes more than seconds). A tool still running then is killed
    /// (SIGKILL) and reported as status -1, so a hang fails a test instead of stalling the suite.
    /// Its output is read on other threads while it runs, so the limit holds even when the tool
    /// hangs with its output open (a JACK tool waiting on a wedged server hung a CI run here
    /// inside the reading). Not Foundation's waitUntilExit: see Process.waitForExit.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String], timeout: Double = 600) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outText = PipeText(output), errText = PipeText(error)
        let (exit, killed) = process.waitOrKill(timeout: timeout)
        // A child of the tool may still hold the pipes: read what came, at most 5 s more.
        let out = outText.text(within: 5), err = errText.text(within: 5)
        if killed {
            return Result(status: -1, standardOutput: out, standardError: "\(tool) was still running after \(Int(timeout)) s: killed")
        }
        return Result(status: exit.status, standardOutput: out, standardError: err)
    }

    /// Everything a pipe delivers until end of file, read on a thread of its own.
    private final class PipeText: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ pipe: Pipe) {
            let handle = pipe.fileHandleForReading
            Thread.detachNewThread { [self] in
                let read = handle.readDataToEndOfFile()
                lock.withLock { data = read }
                done.signal()
            }
        }

        /// What was read, once end of file came or `seconds` passed (then empty).
        func text(within seconds: Double) -> String {
            _ = done.wait(timeout: .now() + seconds)
            return lock.withLock { String(decoding: data, as: UTF8.self) }
        }
    }

    /// What ffprobe says about the first audio stream: codec_name, profile, sample_rate,
    /// channels, nb_read_packets (counted), duration (the container's), as strings.
    public static func probe(_ path: String) throws -> [String: String] {
        let result = try run("ffprobe", ["-v", "error", "-count_packets", "-select_streams", "a:0",
                                          "-show_entries", "stream=codec_name,profile,sample_rate,channels,nb_read_packets,duration:format=duration,format_name",
                                          "-of", "default=noprint_wrappers=1", path])
        var fields: [String: String] = ["status": String(result.status), "stderr": result.standardError]
        for line in result.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 {
                let key = String(parts[0])
                // The stream's duration comes before the format's; keep both.
                fields[fields[key] == nil ? key : "format_" + key] = String(parts[1])
            }
        }
        return fields
    }

    /// Decodes `path` with ffmpeg to interleaved Float samples (no trimming beyond what the
    /// container asks for).
    /// `inputOptions` go before `-i` (`-ignore_editlist 1`: every frame, as a player that trims
    /// nothing plays them).
    public static func decodeWithFFmpeg(_ path: String, inputOptions: [String] = []) throws -> [Float] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-ffdecode-\(getpid())-\(UInt32.random(in: 0 ... .max)).f32").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try run("ffmpeg", ["-v", "error", "-y"] + inputOptions + ["-i", path, "-f", "f32le", output])
        guard result.status == 0, let data = FileManager.default.contents(atPath: output) else { return [] }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// A fresh temporary path with the given extension.
    public static func temporaryPath(_ name: String, extension: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-\(name)-\(getpid())-\(UInt32.random(in: 0 ... .max)).\(`extension`)").path
    }
}
