/// One Open Sound Control 1.0 message: an address (`/aqjack/start`) and typed arguments, as
/// sent in one UDP datagram. What `aqjack record --osc` reads and answers.
///
/// Our own codec, not liblo: aqjack needs messages, not a server framework (liblo brings its own
/// threads and a callback registry), and the decoder is small enough to fuzz (Scripts/fuzz.sh,
/// `FuzzParsers`). Encoding per the OSC 1.0 specification: an OSC-string is ASCII, NUL
/// terminated, padded with NULs to a multiple of 4 bytes; the type tag string starts with `,`;
/// `i` is a big-endian int32, `f` a big-endian IEEE float32, `s` an OSC-string, `b` an int32
/// size then the bytes padded to 4; bundles (`#bundle`) are not taken.
public struct OSCMessage: Equatable, Sendable {
    public enum Argument: Equatable, Sendable {
        case int32(Int32)
        case float32(Float)
        case string(String)
        case blob([UInt8])
    }

    public var address: String
    public var arguments: [Argument]

    public init(address: String, arguments: [Argument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// Why a datagram is not an OSC message we take.
    public struct DecodingError: Error, Equatable, Sendable {
        public let message: String
    }

    /// Decodes one datagram.
    /// - Throws: ``DecodingError`` naming what is wrong (never traps, whatever the bytes).
    public init(decoding bytes: [UInt8]) throws(DecodingError) {
        var reader = Reader(bytes: bytes)
        let address = try reader.string(what: "address")
        guard address.hasPrefix("/") else {
            throw DecodingError(message: address == "#bundle" ? "OSC bundles are not taken: send single messages" : "an OSC address starts with '/', got '\(address.prefix(40))'")
        }
        var arguments: [Argument] = []
        if !reader.isAtEnd {
            let tags = try reader.string(what: "type tags")
            guard tags.hasPrefix(",") else { throw DecodingError(message: "the type tag string starts with ',', got '\(tags.prefix(40))'") }
            for tag in tags.dropFirst() {
                switch tag {
                case "i": arguments.append(.int32(Int32(bitPattern: try reader.word(what: "an int32"))))
                case "f": arguments.append(.float32(Float(bitPattern: try reader.word(what: "a float32"))))
                case "s": arguments.append(.string(try reader.string(what: "string argument")))
                case "b": arguments.append(.blob(try reader.blob()))
                default: throw DecodingError(message: "OSC type tag '\(tag)' is not taken: expected i, f, s or b")
                }
            }
        }
        self.address = address
        self.arguments = arguments
    }

    /// The datagram for this message.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        Self.append(string: address, to: &bytes)
        Self.append(string: "," + arguments.map { argument -> String in
            switch argument {
            case .int32: "i"
            case .float32: "f"
            case .string: "s"
            case .blob: "b"
            }
        }.joined(), to: &bytes)
        for argument in arguments {
            switch argument {
            case .int32(let value): Self.append(word: UInt32(bitPattern: value), to: &bytes)
            case .float32(let value): Self.append(word: value.bitPattern, to: &bytes)
            case .string(let value): Self.append(string: value, to: &bytes)
            case .blob(let value):
                Self.append(word: UInt32(value.count), to: &bytes)
                bytes += value
                bytes += [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
            }
        }
        return bytes
    }

    private static func append(string: String, to bytes: inout [UInt8]) {
        let utf8 = Array(string.utf8)
        bytes += utf8
        bytes += [UInt8](repeating: 0, count: 4 - utf8.count % 4)
    }

    private static func append(word: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(word >> 24), UInt8(word >> 16 & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
    }

    /// Reads 4-byte-aligned OSC fields, checking every length against what is there.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset >= bytes.count }

        mutating func string(what: String) throws(DecodingError) -> String {
            guard offset < bytes.count, let end = bytes[offset...].firstIndex(of: 0) else {
                throw DecodingError(message: "the \(what) is not a NUL-terminated OSC-string")
            }
            let text = String(decoding: bytes[offset ..< end], as: UTF8.self)
            let padded = (end - offset) / 4 * 4 + 4
            guard offset + padded <= bytes.count else { throw DecodingError(message: "the \(what) is not padded to 4 bytes") }
            offset += padded
            return text
        }

        mutating func word(what: String) throws(DecodingError) -> UInt32 {
            guard offset + 4 <= bytes.count else { throw DecodingError(message: "the message ends before \(what) argument") }
            defer { offset += 4 }
            return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
        }

        mutating func blob() throws(DecodingError) -> [UInt8] {
            let size = Int(try word(what: "a blob size"))
            let padded = size + (4 - size % 4) % 4
            guard size >= 0, padded <= bytes.count - offset else { throw DecodingError(message: "a blob of \(size) bytes does not fit in the message") }
            defer { offset += padded }
            return Array(bytes[offset ..< offset + size])
        }
    }
}
