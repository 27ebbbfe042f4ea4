import Foundation
import Synchronization

/// A session's events in order (docs/WEB.md, "Events"): each numbered from 1 and kept (the
/// latest 1,024) for `GET /events` (Server-Sent Events: a client gets those kept, then each as it
/// comes; `Last-Event-ID` resumes after one), and written as a line of JSON (NDJSON) to
/// `--events FILE|-` by a thread of its own, so a slow disk never holds up a poster.
///
/// Threads: ``post(_:_:)`` from any thread (the session's loop, the queue's, the disk writer's:
/// it never blocks on output); ``wait(after:timeout:)`` from the server's threads; the writer's.
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
    /// Set by the writer thread once it has written every event and the log is closed.
    private let drained = Mutex(false)

    /// - Parameter output: where each event's line goes (a file, standard output), or nil.
    public init(output: FileHandle? = nil) {
        guard let output else {
            drained.withLock { $0 = true }
            return
        }
        // Every event in order, from the kept window: a writer more than 1,024 events behind
        // (a disk stalled for minutes) skips the oldest, and the lines' `seq` shows the gap.
        Thread.detachNewThread { [self] in
            var written = 0
            while let batch = wait(after: written, timeout: 0.5) {
                guard !batch.isEmpty else { continue }
                output.write(Data(batch.map { $0.json + "\n" }.joined().utf8))
                written = batch.last!.sequence
            }
            drained.withLock { $0 = true }
        }
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
        }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// The number of the latest event posted (0 before the first).
    public var lastSequence: Int { state.withLock { $0.next - 1 } }

    /// No more events: waiting readers return what is left, then nil. Waits (up to 5 s) until
    /// the output has every event.
    public func close() {
        state.withLock { $0.closed = true }
        condition.lock()
        condition.broadcast()
        condition.unlock()
        for _ in 0 ..< 500 where !drained.withLock({ $0 }) { usleep(10_000) }
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

    /// `date` in ISO 8601, UTC, with milliseconds (the events' `time`).
    public static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
