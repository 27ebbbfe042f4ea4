import Foundation

/// Wall time of whole commands, median of several runs.
enum CommandBenchmark {
    static func medianSeconds(_ executable: String, _ arguments: [String], runs: Int) throws -> Double {
        var times: [Double] = []
        for _ in 0 ..< runs {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let start = Date()
            try process.run()
            process.waitUntilExit()
            times.append(Date().timeIntervalSince(start))
            guard process.terminationStatus == 0 else {
                throw NSError(domain: "aqbench", code: Int(process.terminationStatus),
                              userInfo: [NSLocalizedDescriptionKey: "\(executable) \(arguments) exited \(process.terminationStatus)"])
            }
        }
        return times.sorted()[times.count / 2]
    }
}
