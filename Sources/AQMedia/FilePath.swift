/// File names are bytes: Linux does not require them to be UTF-8, and a studio's archive has
/// Latin-1 names from old machines. Swift strings hold only Unicode, so each byte of a name that
/// is not valid UTF-8 is kept as one private-use scalar, U+10FF00 + byte (plane 16, which no
/// file name in practice uses), and turned back into that byte whenever the name goes to the
/// system. So a name from the command line reaches `open`, libsndfile and libavformat exactly
/// as it was typed (issue 9, item 13: "no file at" for a file that exists).
public enum FilePath {
    private static let escapeBase: UInt32 = 0x10_FF00

    /// A name from the system (`argv`, `readdir`), byte for byte.
    public static func decode(_ bytes: UnsafePointer<CChar>) -> String {
        var length = 0
        while bytes[length] != 0 { length += 1 }
        return decode(UnsafeRawBufferPointer(start: bytes, count: length).map { $0 })
    }

    /// A name from its bytes: valid UTF-8 as it is, every other byte escaped.
    public static func decode(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            let length = sequenceLength(bytes, at: index)
            if length > 0, let text = String(validating: bytes[index ..< index + length], as: UTF8.self) {
                scalars.append(contentsOf: text.unicodeScalars)
                index += length
            } else {
                scalars.append(Unicode.Scalar(escapeBase + UInt32(bytes[index]))!)
                index += 1
            }
        }
        return String(scalars)
    }

    /// The bytes the system should get for `path`.
    public static func bytes(_ path: String) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if scalar.value & 0xFF_FF00 == escapeBase {
                result.append(UInt8(scalar.value & 0xFF))
            } else {
                result.append(contentsOf: String(scalar).utf8)
            }
        }
        return result
    }

    /// Calls `body` with `path` as the system's NUL-terminated bytes.
    public static func withCString<Result, Failure: Error>(_ path: String, _ body: (UnsafePointer<CChar>) throws(Failure) -> Result) throws(Failure) -> Result {
        var raw = bytes(path).map { CChar(bitPattern: $0) }
        raw.append(0)
        return try raw.withUnsafeBufferPointer { (buffer) throws(Failure) in try body(buffer.baseAddress!) }
    }

    /// `text` (a path or a message naming one) for a terminal: escaped bytes shown as `\xNN`.
    public static func display(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value & 0xFF_FF00 == escapeBase }) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if scalar.value & 0xFF_FF00 == escapeBase {
                let byte = scalar.value & 0xFF
                shown += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// The length of the UTF-8 sequence its lead byte announces at `index`, or 0 when that byte
    /// cannot start one or the sequence runs past the end.
    private static func sequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length = lead < 0x80 ? 1 : lead >= 0xC2 && lead < 0xE0 ? 2 : lead >= 0xE0 && lead < 0xF0 ? 3 : lead >= 0xF0 && lead < 0xF5 ? 4 : 0
        return index + length <= bytes.count ? length : 0
    }
}
