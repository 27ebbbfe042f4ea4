import Foundation
import Synchronization

/// A session's events in order (docs/WEB.md, "Events"): each numbered from 1 and kept (the
/// latest 1,024) for `GET /events` (Server-Sent Events: a client gets those kept, then each as it
/// comes; `Last-Event-ID` resumes after one), and written as a line of JSON (NDJSON) to
/// `--events FILE|-` as it comes.
///
/// Threads: ``post(_:_:)`` from any thread (the session's loop, the queue's, the disk writer's);
/// ``wait(after:timeout:)`` from the server's threads.
public final class EventLog: Sendable {
    /// One event: its number, its name and its JSON object (with `seq`, `event` and `time`).
    public struct Event: Sendable {
        public let sequence: Int
        public let name: String
        public let json: String
    }

    private struct State {
        var events: [Event] = []
        var next = 1
        var closed = false
    }

    static let capacity = 1024
    private let state = Mutex(State())
    private let condition = NSCondition()
    private let output: FileHandle?

    /// - Parameter output: where each event's line goes as it comes (a file, standard output), or nil.
    public init(output: FileHandle? = nil) {
        self.output = output
    }

    /// Adds event `name` with `fields` (JSON values already written: ``JSONText``), stamped with
    /// its number and the wall-clock time (ISO 8601, UTC, milliseconds).
    public func post(_ name: String, _ fields: [(String, String)] = []) {
        let time = Self.timestamp(Date())
        state.withLock { state in
            let sequence = state.next
            state.next += 1
            let body = [("seq", "\(sequence)"), ("event", JSONText.string(name)), ("time", JSONText.string(time))] + fields
            let event = Event(sequence: sequence, name: name, json: "{" + body.map { "\(JSONText.string($0.0)):\($0.1)" }.joined(separator: ",") + "}")
            state.events.append(event)
            if state.events.count > Self.capacity { state.events.removeFirst(state.events.count - Self.capacity) }
            // Written under the lock, so lines come out in their numbers' order.
            output?.write(Data((event.json + "\n").utf8))
        }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// No more events: waiting readers return what is left, then nil.
    public func close() {
        state.withLock { $0.closed = true }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// The events kept with numbers above `sequence`, waiting up to `timeout` seconds for one;
    /// nil once the log is closed and nothing is left.
    public func wait(after sequence: Int, timeout: Double) -> [Event]? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let (newer, closed) = state.withLock { state in (state.events.filter { $0.sequence > sequence }, state.closed) }
            if !newer.isEmpty { return newer }
            if closed { return nil }
            if !condition.wait(until: deadline) { return [] }
        }
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
