import AQGraph
import Foundation

/// A saved plugin graph (schema `aqjack.graph/1`, docs/CONTROL.md "Graph files"): the graph's
/// channels, each node's plugin, control values and bypass, and the connections. Each node's LV2
/// state (what the plugin keeps through the LV2 state interface, and its port values) is saved
/// beside the file, in `FILE.state/ID/`.
///
/// A value type, read and written off the process thread.
public struct GraphDocument: Codable, Equatable, Sendable {
    public static let schema = "aqjack.graph/1"
    /// The largest file read, bytes.
    public static let maximumBytes = 16 << 20
    /// The most input or output channels a graph file may have.
    public static let maximumChannels = 256

    public struct Node: Codable, Equatable, Sendable {
        public var id: String
        public var uri: String
        /// Control inputs by symbol.
        public var controls: [String: Float]
        public var bypass: Bool
    }

    /// A MIDI controller moving a control: control change `controller` (0 ... 127) on `channel`
    /// (1 ... 16) sets control input `symbol` of node `id` to `minimum + (maximum - minimum) ×
    /// value / 127`.
    public struct MIDIMapping: Codable, Equatable, Sendable {
        public var id: String
        public var symbol: String
        public var channel: Int
        public var controller: Int
        public var minimum: Float
        public var maximum: Float

        public init(id: String, symbol: String, channel: Int, controller: Int, minimum: Float, maximum: Float) {
            self.id = id
            self.symbol = symbol
            self.channel = channel
            self.controller = controller
            self.minimum = minimum
            self.maximum = maximum
        }
    }

    public var schema: String
    public var inputs: Int
    public var outputs: Int
    public var nodes: [Node]
    /// `[SOURCE, DESTINATION]` pairs, endpoints as the control socket writes them.
    public var connections: [[String]]
    /// MIDI controllers mapped to controls (absent: none).
    public var midi: [MIDIMapping]?

    /// The folder of node `id`'s LV2 state beside the graph file `path`.
    public static func stateDirectory(of id: String, beside path: String) -> String { path + ".state/" + id }

    /// Reads `path`.
    /// - Throws: failed for a file that cannot be read; invalid for one that is not a graph
    ///   file of this schema (naming what is wrong).
    public init(contentsOf path: String) throws(GraphError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw GraphError(.failed, "cannot read the graph file '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: Self.maximumBytes + 1)) ?? Data()
        guard data.count <= Self.maximumBytes else {
            throw GraphError(.invalid, "'\(path)' is over \(Self.maximumBytes >> 20) MiB: not a graph file")
        }
        do {
            self = try JSONDecoder().decode(GraphDocument.self, from: data)
        } catch let DecodingError.keyNotFound(key, _) {
            throw GraphError(.invalid, "'\(path)' is not a graph file: it lacks \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw GraphError(.invalid, "'\(path)' is not a graph file: \(context.codingPath.map(\.stringValue).joined(separator: ".")) is of the wrong type (\(context.debugDescription))")
        } catch {
            throw GraphError(.invalid, "'\(path)' is not a graph file (JSON of schema \(Self.schema)): \(error.localizedDescription)")
        }
        guard schema == Self.schema else {
            throw GraphError(.invalid, "'\(path)' has schema '\(schema)'; expected \(Self.schema)")
        }
        guard (0 ... Self.maximumChannels).contains(inputs), (0 ... Self.maximumChannels).contains(outputs) else {
            throw GraphError(.invalid, "'\(path)' has \(inputs) inputs and \(outputs) outputs; expected 0 to \(Self.maximumChannels) of each")
        }
        if let pair = connections.first(where: { $0.count != 2 }) {
            throw GraphError(.invalid, "'\(path)': a connection is [SOURCE, DESTINATION]; got \(pair.count) endpoints")
        }
    }

    public init(inputs: Int, outputs: Int, nodes: [Node], connections: [[String]], midi: [MIDIMapping] = []) {
        schema = Self.schema
        self.inputs = inputs
        self.outputs = outputs
        self.nodes = nodes
        self.connections = connections
        self.midi = midi.isEmpty ? nil : midi
    }

    /// Writes the file at `path` whole: into a new file beside it, renamed over it.
    /// - Throws: failed, naming the path and the system's reason.
    public func write(to path: String) throws(GraphError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let temporary = path + ".saving"
        do {
            try encoder.encode(self).write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw GraphError(.failed, "cannot write the graph file '\(path)': \(error.localizedDescription)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw GraphError(.failed, "cannot write the graph file '\(path)': \(reason)")
        }
    }
}
