import Foundation
import Glibc

/// What lilv and serd print while they read Turtle (a bundle or a saved state that does not
/// parse): they write it to standard error themselves, with no hook to take it. So the calls
/// that read files run with standard error pointed at an unlinked temporary file for their duration,
/// and the lines come back to the caller, who says them in its own words (``LV2World``'s
/// ``LV2World/loadMessages``, a state's read error). Anything else written to standard error
/// in that window comes back with them. Not real-time.
///
/// Standard error is the process's: one capture at a time (a lock), or two threads' captures
/// would each restore the other's file, and standard error would stay pointed at a closed one.
enum LilvMessages {
    private static let oneAtATime = NSLock()

    /// Runs `body` and returns its result with the lines written to standard error meanwhile.
    static func capturing<Result>(_ body: () throws(PluginError) -> Result) throws(PluginError) -> (Result, [String]) {
        oneAtATime.lock()
        defer { oneAtATime.unlock() }
        fflush(nil)
        let saved = dup(STDERR_FILENO)
        let file = tmpfile()
        let memory = file.map { fileno($0) } ?? -1
        guard saved >= 0, memory >= 0, dup2(memory, STDERR_FILENO) >= 0 else {
            if saved >= 0 { close(saved) }
            if let file { fclose(file) }
            return (try body(), [])
        }
        defer {
            fflush(nil)
            dup2(saved, STDERR_FILENO)
            close(saved)
            fclose(file)
        }
        let result: Result
        do { result = try body() } catch { throw error }
        fflush(nil)
        var text = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        var offset: off_t = 0
        // At most 64 KiB of messages are kept (a broken bundle can repeat a line per triple).
        while text.count < 1 << 16 {
            let count = chunk.withUnsafeMutableBytes { pread(memory, $0.baseAddress, $0.count, offset) }
            guard count > 0 else { break }
            text += chunk[0 ..< count]
            offset += off_t(count)
        }
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        return (result, lines)
    }
}
