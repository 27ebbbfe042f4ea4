import AQJack
import Foundation
import Testing

/// Runs the built `aqjack` executable (beside this test binary) and collects what it printed.
struct CommandResult {
    let status: Int32
    let standardOutput: String
    let standardError: String
    let seconds: Double
    /// False when the process was ended by a signal (a trap is SIGILL, a crash SIGSEGV).
    var terminatedByExit = true
}

enum AQJackCommand {
    /// The `aqjack` executable SwiftPM built next to the test binary.
    static var executable: URL {
        let testBinary = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return testBinary.deletingLastPathComponent().appendingPathComponent("aqjack")
    }

    /// Starts `aqjack` with `arguments` without waiting; output goes to the given files.
    static func start(_ arguments: [String], standardOutput: URL, standardError: URL, standardInput: Pipe? = nil,
                      environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let standardInput { process.standardInput = standardInput }
        process.standardOutput = try emptied(standardOutput)
        process.standardError = try emptied(standardError)
        try process.run()
        return process
    }

    /// `url` opened for writing, empty: made if missing, truncated with open(2) otherwise, never
    /// replaced (FileManager's createFile replaces by rename, which turned /dev/null into a
    /// regular file once).
    private static func emptied(_ url: URL) throws -> FileHandle {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
        try runProgram(executable.path, arguments, environment: environment)
    }

    /// Runs `/bin/sh -c script` with `$AQJACK` naming the executable (for limits set with
    /// `ulimit` before it starts).
    static func runShell(_ script: String) throws -> CommandResult {
        try runProgram("/bin/sh", ["-c", script], environment: ["AQJACK": executable.path])
    }

    /// Runs any program and collects what it printed.
    static func runProgram(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        let started = Date()
        try process.run()
        // Read before waiting, so a large listing cannot fill the pipe and block the child.
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = error.fileHandleForReading.readDataToEndOfFile()
        let processExit = process.exitStatus()
        return CommandResult(status: processExit.status,
                             standardOutput: String(decoding: outData, as: UTF8.self),
                             standardError: String(decoding: errData, as: UTF8.self),
                             seconds: Date().timeIntervalSince(started), terminatedByExit: processExit.isExit)
    }
}

extension Process {
    /// Waits for the child at most `seconds` (with ``Process/waitForExit(timeout:)``, never
    /// Foundation's `waitUntilExit()`, which has hung a CI run here). A child still running then
    /// is killed (SIGKILL) and the test records an issue: a hung child fails its test instead of
    /// stalling the whole suite.
    func exitStatus(within seconds: Double = 300, sourceLocation: SourceLocation = #_sourceLocation) -> ChildExit {
        let (exit, killed) = waitOrKill(timeout: seconds)
        if killed {
            Issue.record("\(executableURL?.lastPathComponent ?? "a child") \(arguments ?? []) was still running after \(Int(seconds)) s: killed",
                         sourceLocation: sourceLocation)
        }
        return exit
    }
}
