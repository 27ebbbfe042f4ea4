/// A change of JACK's transport as a recording queue saw it: from the device frame
/// ``sampleTime`` on (the timeline of the buffers' `mSampleTime`), the transport rolls (or not),
/// and that frame is transport frame ``position``.
///
/// JACK sets the transport state for whole cycles, so a change always falls on a cycle's first
/// frame. A relocation while rolling is a change too (rolling to rolling, at a new position).
public struct TransportChange: Sendable, Equatable {
    /// Device frame (JACK frame time, latency-compensated as the buffers' timestamps are).
    public let sampleTime: Double
    public let isRolling: Bool
    /// The transport frame at ``sampleTime`` (JACK's `jack_position_t.frame`).
    public let position: UInt64
    /// Whether the transport rolled before this change too, and jumped (a locate while rolling).
    public let isRelocation: Bool

    public init(sampleTime: Double, isRolling: Bool, position: UInt64, isRelocation: Bool = false) {
        self.sampleTime = sampleTime
        self.isRolling = isRolling
        self.position = position
        self.isRelocation = isRelocation
    }
}

/// Turns JACK's transport, read once per cycle, into ``TransportChange``s: rolls, stops and
/// relocations while rolling, each at the device frame of the cycle it took effect in. A
/// recording queue keeps one (``AudioInputQueue/takeTransportChanges(before:)``); anything that
/// sees cycles (a ``CaptureCycle`` carries the transport) can keep its own.
///
/// While rolling, a position within two cycles of where the transport should be is the same
/// roll: JACK2's `jack_transport_query` reads the server's current position, so a client whose
/// callback runs late (an xrun) reads the next cycle's (measured here: one roll seen as two,
/// 1,024 frames in, on a run with server xruns). "Should be" is either one cycle on from the
/// previous (JACK advances the transport a period per cycle it runs, also when it skipped
/// frame time) or as many frames on as the device frame moved (this client missed a cycle).
public struct TransportTracker: Sendable {
    /// The changes not yet taken, oldest first. The first cycle noted always adds one.
    public private(set) var changes: [TransportChange] = []
    /// The latest cycle: whether it rolled, its position and device frame, its length.
    private var latest: (rolling: Bool, position: UInt64, sampleTime: Double, frameCount: Int)?
    /// Changes kept when nobody takes them.
    public static let capacity = 4096

    public init() {}

    /// Notes one cycle whose first frame is device frame `sampleTime`: whether the transport
    /// rolled during it, and its transport frame.
    public mutating func note(rolling: Bool, position: UInt64, frameCount: Int, sampleTime: Double) {
        defer { latest = (rolling, position, sampleTime, frameCount) }
        if let latest, latest.rolling == rolling {
            guard rolling else { return }
            let tolerance = 2 * UInt64(max(frameCount, latest.frameCount))
            func near(_ expected: UInt64) -> Bool { (position > expected ? position - expected : expected - position) <= tolerance }
            let byCycle = latest.position + UInt64(latest.frameCount)
            let byTime = latest.position + UInt64(max(0, sampleTime - latest.sampleTime))
            if near(byCycle) || near(byTime) { return }
        }
        if changes.count >= Self.capacity { changes.removeFirst(changes.count - Self.capacity + 1) }
        changes.append(TransportChange(sampleTime: sampleTime, isRolling: rolling, position: position,
                                       isRelocation: rolling && latest?.rolling == true))
    }

    /// Removes and returns the changes before device frame `sampleTime`.
    public mutating func take(before sampleTime: Double) -> [TransportChange] {
        let count = changes.prefix { $0.sampleTime < sampleTime }.count
        defer { changes.removeFirst(count) }
        return Array(changes.prefix(count))
    }

    /// Forgets everything (a stop): the next cycle starts afresh.
    public mutating func reset() {
        changes = []
        latest = nil
    }
}
