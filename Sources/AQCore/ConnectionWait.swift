import Synchronization

/// A start that waits for its last connection to reach the graph, embedded in a processor: the
/// queue thread names the processor's port and the peer, the process thread checks each cycle.
///
/// JACK switches in graph changes only at the start of a cycle, every change made up to then at
/// once (JACK2: `JackGraphManager` writes all of them into one next state, switched in by
/// `JackEngine::Process` after a finished cycle). So the first cycle whose graph has the last
/// connection a start made has every earlier one too: all channels start there, on the same
/// frame. A late cycle can hold the switch back, which a start frame computed ahead of time could
/// not know.
struct ConnectionWait: ~Copyable {
    /// The awaited port's index among the processor's ports (its inputs or outputs); -1 when no
    /// start waits.
    let port = Atomic<Int>(-1)
    /// The peer's full name, NUL-terminated: ``peerNameCapacity`` bytes and a final NUL that is
    /// never overwritten, so a name read while the queue thread rewrites it stays terminated.
    let peer: UnsafeMutablePointer<CChar>
    /// Bytes of a peer's name kept (JACK's full port names are at most 320).
    static let peerNameCapacity = 512

    init() {
        peer = .allocate(capacity: Self.peerNameCapacity + 1)
        peer.initialize(repeating: 0, count: Self.peerNameCapacity + 1)
    }

    deinit { peer.deallocate() }

    /// Waits for port `index` to be connected to `name`. Queue thread, before it stores the
    /// start's latest frame with release ordering (which publishes these writes).
    func wait(port index: Int, peer name: String) {
        port.store(-1, ordering: .relaxed)
        var bytes = Array(name.utf8.prefix(Self.peerNameCapacity))
        bytes.append(0)
        peer.withMemoryRebound(to: UInt8.self, capacity: bytes.count) { $0.update(from: bytes, count: bytes.count) }
        port.store(index, ordering: .relaxed)
    }

    /// Stops waiting. Queue thread, before it stores a new start frame.
    func cancel() { port.store(-1, ordering: .relaxed) }

    /// The start for this cycle, given `start` (the armed frame: while waiting, the latest one)
    /// read from `startFrame`: the cycle's own frame when this cycle's graph has the awaited
    /// connection (stored into `startFrame`), `start` when nothing is awaited or the latest frame
    /// has come, or nil while still waiting (or when the queue thread re-armed meanwhile): nothing
    /// starts in this cycle.
    ///
    /// - Important: Real-time safe: one probe of the graph a cycle, only while waiting.
    @inline(__always)
    func resolve(_ start: UInt64, startFrame: borrowing Atomic<UInt64>, cycle: ProcessCycle, cycleFrame: UInt64, input: Bool) -> UInt64? {
        let awaited = port.load(ordering: .acquiring)
        guard awaited >= 0 else { return start }
        let connected = cycle.isConnected(input: input, port: awaited, to: peer)
        guard connected || cycleFrame &+ UInt64(cycle.frameCount) > start,
              port.compareExchange(expected: awaited, desired: -1, ordering: .relaxed).exchanged else { return nil }
        guard connected, cycleFrame < start else { return start }
        return startFrame.compareExchange(expected: start, desired: cycleFrame, ordering: .relaxed).exchanged ? cycleFrame : nil
    }
}
