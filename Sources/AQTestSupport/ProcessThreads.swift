import Foundation

/// The names of process `pid`'s threads, as `ps -L` shows them (`/proc/PID/task/*/comm`);
/// empty once it has exited.
public func threadNames(of pid: pid_t) -> [String] {
    let tasks = "/proc/\(pid)/task"
    let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
    return ids.compactMap { id in
        (try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
