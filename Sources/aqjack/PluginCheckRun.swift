import AQJack
import AQPlugins
import Foundation
import Glibc

/// `aqjack plugins --check [PATTERN]`: every installed plugin (matching PATTERN) run for one second
/// of white noise (``PluginCheck``), each in a child process of its own (`aqjack plugins
/// --check-one URI`, which prints its ``PluginCheck/Outcome`` as JSON), so a plugin that crashes
/// or hangs takes only its child: a crash is reported with its signal, a child still running after
/// ``timeoutSeconds`` is killed and reported as hung. As many children at once as there are CPUs.
struct PluginCheckRun {
    /// The longest a child may take (loading every bundle, instantiating, one second of noise).
    static let timeoutSeconds = 30.0

    let uris: [String]

    /// The outcome of every plugin, in `uris`' order; `progress` is called (on this thread) with
    /// each as it comes.
    func run(progress: (PluginCheck.Outcome) -> Void) -> [PluginCheck.Outcome] {
        let executable = Self.executablePath
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-check-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var outcomes = [PluginCheck.Outcome?](repeating: nil, count: uris.count)
        var running: [(index: Int, process: Process, started: Date)] = []
        var next = 0
        let width = max(1, ProcessInfo.processInfo.activeProcessorCount)
        while next < uris.count || !running.isEmpty {
            while running.count < width, next < uris.count {
                let index = next
                next += 1
                do {
                    running.append((index, try Self.start(executable, uri: uris[index], output: "\(folder)/\(index)"), Date()))
                } catch {
                    outcomes[index] = .init(uri: uris[index], passed: false, reason: "could not start the check: \(error.localizedDescription)")
                    progress(outcomes[index]!)
                }
            }
            usleep(5_000)
            for (position, child) in running.enumerated().reversed() {
                let outcome: PluginCheck.Outcome
                if let exit = child.process.waitForExit(timeout: 0) {
                    outcome = Self.outcome(of: uris[child.index], exit: exit, output: "\(folder)/\(child.index)")
                } else if Date().timeIntervalSince(child.started) > Self.timeoutSeconds {
                    _ = child.process.waitOrKill(timeout: 0)
                    outcome = .init(uri: uris[child.index], passed: false, reason: "did not finish within \(Int(Self.timeoutSeconds)) s (killed): a hang")
                } else {
                    continue
                }
                running.remove(at: position)
                outcomes[child.index] = outcome
                progress(outcome)
            }
        }
        return outcomes.map { $0! }
    }

    /// This program, for the children (a relative argv[0] would not do from another folder).
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    private static func start(_ executable: String, uri: String, output: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["plugins", "--check-one", uri]
        _ = FileManager.default.createFile(atPath: output + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: output + ".err", contents: nil)
        let out = FileHandle(forWritingAtPath: output + ".out"), err = FileHandle(forWritingAtPath: output + ".err")
        // (The child has its own copies once it runs.)
        defer { try? out?.close(); try? err?.close() }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        // A crash is reported by its signal: no backtrace to wait for.
        process.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { _, new in new }
        try process.run()
        return process
    }

    /// What a child's exit and output say: its outcome as it printed it, or how it died.
    private static func outcome(of uri: String, exit: ChildExit, output: String) -> PluginCheck.Outcome {
        let printed = (try? Data(contentsOf: URL(fileURLWithPath: output + ".out"))).flatMap { try? JSONDecoder().decode(PluginCheck.Outcome.self, from: $0) }
        if exit.isExit, let printed { return printed }
        let errors = String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: output + ".err"))) ?? Data(), as: UTF8.self)
        let lastLine = errors.split(separator: "\n").last.map { String($0.prefix(300)) }
        switch exit {
        case .signalled(let signal):
            let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
            return .init(uri: uri, passed: false, reason: "crashed: \(name) (signal \(signal))" + (lastLine.map { "; it said: \($0)" } ?? ""))
        case .exited(let code):
            return .init(uri: uri, passed: false, reason: "the check exited \(code) without a result" + (lastLine.map { ": \($0)" } ?? ""))
        }
    }
}
