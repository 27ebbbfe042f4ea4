import AQJack
import Foundation
import Synchronization

/// `record --follow` and `-p GLOB --auto-connect`: keeps the recorder's inputs fed as the
/// sources come and go, on a thread of its own that looks at the graph every 50 ms and at
/// once when any port is registered or unregistered (``wake()``).
///
/// - follow: every source connected to an input (by aqjack, a patchbay, `jack_connect`) is
///   remembered; when it goes away with its client and comes back (a restarted client), it is
///   connected again. A source that stays disconnected while it exists for ``forgetAfter``
///   seconds is forgotten (someone chose to: a closing client's ports go within milliseconds of
///   their disconnection).
/// - auto-connect: output ports matching the patterns that appear later are connected to the
///   inputs without a source, in natural order, one each; a channel keeps its port across a
///   restart of its client.
///
/// The frames during which a channel that had (or, auto-connecting, waits for) a source has
/// none are recorded as silence and counted (``sourcelessFrames``, to the 50 ms it looks at).
final class SourceFollower: @unchecked Sendable {
    private let client: JackClient
    /// The recorder's input ports, channel by channel (full names).
    private let inputs: [String]
    private let patterns: [String]?
    /// Per channel, the sources it should have, and whether each was present at the last look.
    private var wanted: [Set<String>]
    /// Sources seen gone since they were last connected: connected again when they are back.
    private var vanished: Set<String> = []
    /// Sources found disconnected while they exist, and since when.
    private var disconnectedSince: [String: Date] = [:]
    static let forgetAfter = 0.5
    private var lastFrame: UInt32?
    /// Signalled when a port is registered or unregistered (and by ``stop()``).
    private let wakeups: DispatchSemaphore
    private let running = Atomic<Bool>(true)
    private var thread: Thread?
    /// Connections made again (a source back after it had gone, or a new match).
    let reconnections = Atomic<Int>(0)
    /// Frames in which at least one channel was without its source.
    let sourcelessFrames = Atomic<Int>(0)

    /// - Parameters:
    ///   - inputs: the recorder's input ports, in channel order.
    ///   - initial: the sources connected at the start, channel by channel.
    ///   - patterns: `--auto-connect`'s `-p` globs; nil to follow what is connected.
    ///   - wakeups: signalled at each port registration (``watchRegistrations(of:)``).
    init(client: JackClient, inputs: [String], initial: [String], patterns: [String]?, wakeups: DispatchSemaphore) {
        self.client = client
        self.wakeups = wakeups
        self.inputs = inputs
        self.patterns = patterns
        wanted = inputs.indices.map { $0 < initial.count ? [initial[$0]] : [] }
    }

    /// Looks every 50 ms, and at each ``wake()``, until ``stop()``.
    func start() {
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                look()
                _ = wakeups.wait(timeout: .now() + .milliseconds(50))
            }
        }
        thread.name = "aqjack-follow"
        self.thread = thread
        thread.start()
    }

    /// A semaphore signalled whenever a port of `client` is registered or unregistered, for a
    /// follower made later. Call before the client is activated (JACK takes the callback only
    /// then); the handler runs on JACK's notification thread and only signals.
    static func watchRegistrations(of client: JackClient) throws(JackError) -> DispatchSemaphore {
        let semaphore = DispatchSemaphore(value: 0)
        try client.notifications.onPortRegistration { _, _ in semaphore.signal() }
        return semaphore
    }

    func stop() {
        running.store(false, ordering: .releasing)
        wakeups.signal()
        while let thread, !thread.isFinished { usleep(1000) }
    }

    /// One look at the graph: learns, reconnects, assigns and counts.
    private func look() {
        let outputs = Set(client.portNames(direction: .output, audioOnly: true))
        var missing = false
        for (channel, input) in inputs.enumerated() {
            let now = Set(client.portInfo(named: input)?.connections ?? [])
            if patterns == nil { wanted[channel].formUnion(now) }
            var after = now
            for source in wanted[channel] where !now.contains(source) {
                if !outputs.contains(source) {
                    vanished.insert(source)
                    disconnectedSince[source] = nil
                } else if vanished.contains(source) {
                    // Back after its client had gone: connected again.
                    if (try? client.connect(source, to: input)) != nil {
                        reconnections.add(1, ordering: .relaxed)
                        vanished.remove(source)
                        after.insert(source)
                    }
                } else if patterns == nil {
                    // There but disconnected: forgotten once that has lasted (not a closing client).
                    let since = disconnectedSince[source] ?? Date()
                    disconnectedSince[source] = since
                    if Date().timeIntervalSince(since) >= Self.forgetAfter {
                        wanted[channel].remove(source)
                        disconnectedSince[source] = nil
                    }
                }
            }
            for source in now { disconnectedSince[source] = nil }
            if after.isEmpty && (!wanted[channel].isEmpty || patterns != nil) { missing = true }
        }
        if let patterns { assignNewMatches(patterns, outputs: outputs) }
        let frame = client.estimatedFrameTime
        if let lastFrame, missing { sourcelessFrames.add(Int(frame &- lastFrame), ordering: .relaxed) }
        lastFrame = frame
    }

    /// Auto-connect: ports matching the patterns and feeding no channel go, in natural order, to
    /// the channels that have no port yet.
    private func assignNewMatches(_ patterns: [String], outputs: Set<String>) {
        let taken = wanted.reduce(into: Set<String>()) { $0.formUnion($1) }
        let matches = outputs.filter { name in !taken.contains(name) && patterns.contains { PortMatching.matches($0, name) } }
            .sorted(by: PortMatching.naturalOrder)
        var free = wanted.indices.filter { wanted[$0].isEmpty }.makeIterator()
        for source in matches {
            guard let channel = free.next() else { break }
            wanted[channel] = [source]
            if (try? client.connect(source, to: inputs[channel])) != nil { reconnections.add(1, ordering: .relaxed) }
        }
    }
}
