import AQJack
import Foundation

/// `aqjack --ports` / `aqjack ports`: lists the ports of the graph.
struct PortsCommand {
    var pattern: NSRegularExpression?
    var patternText: String?
    var json = false
    var direction: JackPortDirection?
    var physicalOnly = false
    var typeFilter = "any"

    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("--json"): json = true
            case .option("--input"): direction = .input
            case .option("--output"): direction = .output
            case .option("--physical"): physicalOnly = true
            case let .option(letter) where ["-i", "-o", "-p"].contains(letter):
                // One letter means one thing in every subcommand: these name ports to connect.
                throw UsageError(message: "'\(letter)' is not an option of --ports (-i, -o and -p name ports to connect elsewhere): expected --input, --output or --physical")
            case .option("--type"), .option("-t"):
                typeFilter = try cursor.value(for: "--type", expected: "audio, midi or any")
                guard ["audio", "midi", "any"].contains(typeFilter) else {
                    throw UsageError(message: "--type '\(typeFilter)' is not a port type: expected audio, midi or any")
                }
            case .option("--ports"): continue
            case let .option(option):
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)' for --ports: expected --json, --input, --output, --physical, --type, --server or --name")
            case let .operand(text):
                guard patternText == nil else {
                    throw UsageError(message: "--ports takes one PATTERN, got '\(patternText!)' and '\(text)'")
                }
                do {
                    pattern = try NSRegularExpression(pattern: text)
                } catch {
                    throw UsageError(message: "PATTERN '\(text)' is not a valid regular expression: expected e.g. 'system:' or 'capture_[12]$'")
                }
                patternText = text
            }
        }
    }

    func run(globals: GlobalOptions) throws(JackError) -> Int32 {
        let client = try JackClient(name: globals.clientName, server: globals.server)
        defer { client.close() }
        let ports = client.allPortInfo().filter(matches)
        if json {
            let listing = PortListing(server: client.serverName, sampleRate: client.sampleRate,
                                      bufferSize: client.bufferSize, ports: ports)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = (try? encoder.encode(listing)) ?? Data("{}".utf8)
            print(String(decoding: data, as: UTF8.self))
        } else {
            for port in ports { print(Self.describe(port)) }
            if ports.isEmpty {
                Diagnostics.note(patternText.map { "no port matches '\($0)'" } ?? "the server has no ports")
            }
        }
        return 0
    }

    private func matches(_ port: JackPortInfo) -> Bool {
        if let direction, port.direction != direction { return false }
        if physicalOnly && !port.isPhysical { return false }
        if typeFilter != "any" && !port.type.contains(typeFilter) { return false }
        guard let pattern else { return true }
        let candidates = [port.name] + port.aliases + (port.prettyName.map { [$0] } ?? [])
        return candidates.contains { text in
            pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
    }

    /// The text form: the name, then an indented line of facts, then names around it.
    static func describe(_ port: JackPortInfo) -> String {
        var flags = [port.direction.rawValue]
        if port.isPhysical { flags.append("physical") }
        if port.isTerminal { flags.append("terminal") }
        if port.canMonitor { flags.append("can-monitor") }
        var lines = [port.name]
        lines.append("    \(flags.joined(separator: ", ")) | \(port.type) | latency capture \(port.captureLatency.min)..\(port.captureLatency.max), playback \(port.playbackLatency.min)..\(port.playbackLatency.max) frames")
        if let prettyName = port.prettyName { lines.append("    pretty-name: \(prettyName)") }
        if let signalType = port.signalType { lines.append("    signal-type: \(signalType)") }
        for alias in port.aliases { lines.append("    alias: \(alias)") }
        for connection in port.connections { lines.append("    \(port.direction == .output ? "->" : "<-") \(connection)") }
        return lines.joined(separator: "\n")
    }
}

/// The JSON document `aqjack --ports --json` prints. Its shape is documented in docs/CLI.md and
/// changes only with a new `schema` value.
struct PortListing: Encodable {
    static let schema = "aqjack.ports/1"
    let server: String
    let sampleRate: Int
    let bufferSize: Int
    let ports: [JackPortInfo]

    enum Keys: String, CodingKey { case schema, server, sampleRate, bufferSize, ports }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Self.schema, forKey: .schema)
        try container.encode(server, forKey: .server)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(bufferSize, forKey: .bufferSize)
        try container.encode(ports.map(PortEntry.init), forKey: .ports)
    }
}

/// One port in the JSON listing. Every key is always present (`null` when unknown).
struct PortEntry: Encodable {
    let port: JackPortInfo

    enum Keys: String, CodingKey {
        case name, client, shortName, type, direction, physical, terminal, canMonitor
        case aliases, connections, latency, prettyName, uuid
    }
    enum LatencyKeys: String, CodingKey { case capture, playback }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(port.name, forKey: .name)
        try container.encode(port.clientName, forKey: .client)
        try container.encode(port.shortName, forKey: .shortName)
        try container.encode(port.type, forKey: .type)
        try container.encode(port.direction.rawValue, forKey: .direction)
        try container.encode(port.isPhysical, forKey: .physical)
        try container.encode(port.isTerminal, forKey: .terminal)
        try container.encode(port.canMonitor, forKey: .canMonitor)
        try container.encode(port.aliases, forKey: .aliases)
        try container.encode(port.connections, forKey: .connections)
        var latency = container.nestedContainer(keyedBy: LatencyKeys.self, forKey: .latency)
        try latency.encode(port.captureLatency, forKey: .capture)
        try latency.encode(port.playbackLatency, forKey: .playback)
        try container.encode(port.prettyName, forKey: .prettyName)
        try container.encode(String(port.uuid), forKey: .uuid)
    }
}
