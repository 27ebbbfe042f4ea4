import CJack

/// A frame range of latency, as JACK reports it per port and direction.
public struct JackLatencyRange: Sendable, Equatable, Codable {
    public var min: Int
    public var max: Int
    public init(min: Int, max: Int) {
        self.min = min
        self.max = max
    }
}

/// Everything aqjack shows about one port of the graph (any client's): `aqjack --ports`.
public struct JackPortInfo: Sendable, Equatable {
    /// `client:port`.
    public var name: String
    public var clientName: String
    public var shortName: String
    /// The JACK port type, e.g. `32 bit float mono audio` or `8 bit raw midi`.
    public var type: String
    public var direction: JackPortDirection
    /// Backed by hardware (`JackPortIsPhysical`).
    public var isPhysical: Bool
    /// The data starts or ends here (`JackPortIsTerminal`).
    public var isTerminal: Bool
    /// Hardware monitoring is available (`JackPortCanMonitor`).
    public var canMonitor: Bool
    public var aliases: [String]
    /// Full names of the connected ports, in the server's order.
    public var connections: [String]
    /// Capture latency: how long ago data at this port entered the graph, frames.
    public var captureLatency: JackLatencyRange
    /// Playback latency: how long until data at this port leaves the graph, frames.
    public var playbackLatency: JackLatencyRange
    /// The JACK metadata pretty-name (`http://jackaudio.org/metadata/pretty-name`), if set.
    public var prettyName: String?
    /// The JACK metadata signal-type (`http://jackaudio.org/metadata/signal-type`) of an audio
    /// port, if set: "CV" for control voltage.
    public var signalType: String?
    /// The port's UUID, for metadata.
    public var uuid: UInt64
}

extension JackClient {
    /// Full names of the ports JACK lists, optionally only one direction, in the server's order.
    ///
    /// The corresponding JACK function is `jack_get_ports`.
    public func portNames(direction: JackPortDirection? = nil, physicalOnly: Bool = false, audioOnly: Bool = false, midiOnly: Bool = false) -> [String] {
        var flags: UInt32 = 0
        if let direction { flags |= direction == .input ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue }
        if physicalOnly { flags |= JackPortIsPhysical.rawValue }
        let type = midiOnly ? cjack_default_midi_type() : audioOnly ? cjack_default_audio_type() : nil
        guard let list = jack_get_ports(rawValue, nil, type, UInt(flags)) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(list)) }
        return cStringArray(list)
    }

    /// Describes the port named `name`, or `nil` if it has gone (ports come and go while listing).
    public func portInfo(named name: String) -> JackPortInfo? {
        guard let port = jack_port_by_name(rawValue, name) else { return nil }
        let flags = UInt32(bitPattern: jack_port_flags(port))
        let fullName = String(cString: jack_port_name(port))
        let shortName = String(cString: jack_port_short_name(port))
        let clientName = fullName.hasSuffix(":" + shortName) ? String(fullName.dropLast(shortName.count + 1)) : fullName
        var capture = jack_latency_range_t()
        var playback = jack_latency_range_t()
        jack_port_get_latency_range(port, JackCaptureLatency, &capture)
        jack_port_get_latency_range(port, JackPlaybackLatency, &playback)
        let uuid = jack_port_uuid(port)
        return JackPortInfo(
            name: fullName, clientName: clientName, shortName: shortName,
            type: jack_port_type(port).map { String(cString: $0) } ?? "",
            direction: flags & JackPortIsInput.rawValue != 0 ? .input : .output,
            isPhysical: flags & JackPortIsPhysical.rawValue != 0,
            isTerminal: flags & JackPortIsTerminal.rawValue != 0,
            canMonitor: flags & JackPortCanMonitor.rawValue != 0,
            aliases: aliases(of: port),
            connections: allConnections(of: port),
            captureLatency: JackLatencyRange(min: Int(capture.min), max: Int(capture.max)),
            playbackLatency: JackLatencyRange(min: Int(playback.min), max: Int(playback.max)),
            prettyName: metadataValue(subject: uuid, key: cjack_metadata_pretty_name()),
            signalType: metadataValue(subject: uuid, key: cjack_metadata_signal_type()),
            uuid: uuid)
    }

    /// Every port of the graph, in the server's order.
    public func allPortInfo() -> [JackPortInfo] {
        portNames().compactMap { portInfo(named: $0) }
    }

    /// Sets (or with `nil` removes) the JACK metadata pretty-name of a port of any client.
    ///
    /// The corresponding JACK functions are `jack_set_property` / `jack_remove_property`.
    public func setPrettyName(_ prettyName: String?, ofPort portName: String) throws(JackError) {
        try setMetadata(cjack_metadata_pretty_name(), to: prettyName, ofPort: portName)
    }

    /// Sets (or with `nil` removes) the JACK metadata signal-type of a port of any client: "CV"
    /// marks an audio port as control voltage.
    public func setSignalType(_ signalType: String?, ofPort portName: String) throws(JackError) {
        try setMetadata(cjack_metadata_signal_type(), to: signalType, ofPort: portName)
    }

    private func setMetadata(_ key: UnsafePointer<CChar>, to value: String?, ofPort portName: String) throws(JackError) {
        guard let port = jack_port_by_name(rawValue, portName) else { throw .noSuchPort(portName) }
        let uuid = jack_port_uuid(port)
        let code: Int32
        if let value {
            code = jack_set_property(rawValue, uuid, key, value, "text/plain")
        } else {
            code = jack_remove_property(rawValue, uuid, key)
        }
        if code != 0 { throw .callFailed(function: value == nil ? "jack_remove_property" : "jack_set_property", code: code) }
    }

    private func aliases(of port: OpaquePointer) -> [String] {
        let size = Int(jack_port_name_size())
        let first = UnsafeMutablePointer<CChar>.allocate(capacity: size)
        let second = UnsafeMutablePointer<CChar>.allocate(capacity: size)
        defer { first.deallocate(); second.deallocate() }
        first[0] = 0
        second[0] = 0
        var slots: [UnsafeMutablePointer<CChar>?] = [first, second]
        let count = slots.withUnsafeMutableBufferPointer { jack_port_get_aliases(port, $0.baseAddress) }
        return (0 ..< Int(max(0, min(count, 2)))).map { String(cString: $0 == 0 ? first : second) }
    }

    private func allConnections(of port: OpaquePointer) -> [String] {
        guard let list = jack_port_get_all_connections(rawValue, port) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(list)) }
        return cStringArray(list)
    }

    private func metadataValue(subject: jack_uuid_t, key: UnsafePointer<CChar>) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        var type: UnsafeMutablePointer<CChar>? = nil
        guard jack_get_property(subject, key, &value, &type) == 0, let value else { return nil }
        defer {
            jack_free(UnsafeMutableRawPointer(value))
            if let type { jack_free(UnsafeMutableRawPointer(type)) }
        }
        return String(cString: value)
    }
}
