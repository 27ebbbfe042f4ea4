import AQJack
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
            let exit = process.waitForExit()
            times.append(Date().timeIntervalSince(start))
            guard let exit, exit.succeeded else {
                throw NSError(domain: "aqbench", code: Int(exit?.status ?? -1),
                              userInfo: [NSLocalizedDescriptionKey: "\(executable) \(arguments) ended with \(exit.map { "\($0)" } ?? "no status")"])
            }
        }
        return times.sorted()[times.count / 2]
    }
}
