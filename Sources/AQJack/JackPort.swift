import CJack

/// Which way audio flows through a port, seen from the port's owner.
public enum JackPortDirection: String, Sendable, Codable {
    /// The port receives audio (`JackPortIsInput`): a recorder's ports.
    case input
    /// The port produces audio (`JackPortIsOutput`): a player's ports.
    case output
}

/// An audio port this client registered. A thin handle over `jack_port_t *`.
public struct JackPort: @unchecked Sendable, Hashable {
    /// The `jack_port_t *`, for the rare call this wrapper does not cover.
    public let rawValue: OpaquePointer
    public let direction: JackPortDirection

    init(rawValue: OpaquePointer, direction: JackPortDirection) {
        self.rawValue = rawValue
        self.direction = direction
    }

    /// The full name, `client:port`.
    public var name: String { String(cString: jack_port_name(rawValue)) }

    /// The name without the client prefix.
    public var shortName: String { String(cString: jack_port_short_name(rawValue)) }

    /// The latency range of this port in frames: for an input port the capture latency (how long
    /// ago the audio it receives entered the graph at a terminal port), for an output port the
    /// playback latency (how long until what it sends leaves the graph).
    public var latency: ClosedRange<Int> {
        var range = jack_latency_range_t()
        jack_port_get_latency_range(rawValue, direction == .input ? JackCaptureLatency : JackPlaybackLatency, &range)
        return Int(range.min) ... Int(max(range.min, range.max))
    }

    /// Full names of the ports connected to this one.
    public var connections: [String] {
        guard let list = jack_port_get_connections(rawValue) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(list)) }
        return cStringArray(list)
    }
}

/// Copies a NULL-terminated `const char **` into Swift strings (the caller frees it).
func cStringArray(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>) -> [String] {
    var names: [String] = []
    var index = 0
    while let name = list[index] {
        names.append(String(cString: name))
        index += 1
    }
    return names
}
