import Foundation

/// `aqjack record --on-file CMD`: runs `CMD PATH` (through `/bin/sh -c`, so CMD may be a
/// pipeline or have arguments) for each finalized file, with a one-line JSON summary of it on
/// standard input, off the queue thread so the recording never waits; a command that fails is
/// reported on standard error, the recording goes on. ``waitForAll()`` waits for the commands
/// still running when the recording ends.
final class FileHook: @unchecked Sendable {
    let command: String
    private let group = DispatchGroup()
    private let queue = DispatchQueue(label: "aqjack.on-file")

    init(command: String) { self.command = command }

    /// Starts the command for `path`, first frame `frame` (the JACK frame, or nil) and `frames` long.
    func run(path: String, frames: Int64) {
        let summary = "{\"path\":\(jsonString(path)),\"frames\":\(frames)}\n"
        let command = command
        queue.async(group: group) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command + " \"$@\"", "aqjack-on-file", path]
            let input = Pipe()
            process.standardInput = input
            do {
                try process.run()
                // A command that does not read its input may have exited already: the summary is
                // then lost to it (EPIPE), and its exit status says how it went.
                try? input.fileHandleForWriting.write(contentsOf: Data(summary.utf8))
                try? input.fileHandleForWriting.close()
                if let exit = process.waitForExit(), !exit.succeeded {
                    Diagnostics.note("--on-file '\(command)' failed for \(path) (\(exit)); the recording goes on")
                }
            } catch {
                Diagnostics.note("--on-file '\(command)' could not run for \(path): \(error.localizedDescription)")
            }
        }
    }

    /// Waits for every command started so far.
    func waitForAll() { group.wait() }

    private func jsonString(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
