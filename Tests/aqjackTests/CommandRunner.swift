import Foundation

/// Runs the built `aqjack` executable (beside this test binary) and collects what it printed.
struct CommandResult {
    let status: Int32
    let standardOutput: String
    let standardError: String
    let seconds: Double
}

enum AQJackCommand {
    /// The `aqjack` executable SwiftPM built next to the test binary.
    static var executable: URL {
        let testBinary = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return testBinary.deletingLastPathComponent().appendingPathComponent("aqjack")
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        process.executableURL = executable
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
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus,
                             standardOutput: String(decoding: outData, as: UTF8.self),
                             standardError: String(decoding: errData, as: UTF8.self),
                             seconds: Date().timeIntervalSince(started))
    }
}
