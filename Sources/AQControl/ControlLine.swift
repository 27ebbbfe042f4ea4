/// One line of the control socket's text protocol (docs/CONTROL.md): words separated by spaces
/// or tabs, a word with spaces written in double quotes (`\"` and `\\` inside them); and the
/// replies, `ok [WORD ...]` or `error CODE MESSAGE`, each one line. Pure values: no I/O.
public enum ControlLine {
    /// The longest line taken, bytes without its newline; longer ones are refused whole.
    public static let maximumBytes = 4096

    /// What a line could not be read as.
    public struct SyntaxError: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The words of `line` (UTF-8, without its newline; a trailing `\r` is dropped).
    /// - Throws: a control character other than tab, an unterminated quote, an escape other than
    ///   `\"` and `\\`, or bytes that are not UTF-8, naming the column.
    public static func words(_ line: [UInt8]) throws(SyntaxError) -> [String] {
        var bytes = line
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw SyntaxError("the line is not UTF-8 text") }
        var words: [String] = []
        var current: [UInt8] = []
        var inWord = false, quoted = false, escaped = false
        for (index, byte) in bytes.enumerated() {
            let column = index + 1
            if byte < 0x20 && byte != UInt8(ascii: "\t") || byte == 0x7F {
                throw SyntaxError("a control character (byte \(byte)) at column \(column); expected printable text")
            }
            if quoted {
                if escaped {
                    guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                        throw SyntaxError("'\\\(Character(Unicode.Scalar(byte)))' at column \(column - 1): inside quotes only \\\" and \\\\ are escapes")
                    }
                    current.append(byte)
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    quoted = false
                } else {
                    current.append(byte)
                }
                continue
            }
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                if inWord { words.append(String(decoding: current, as: UTF8.self)) }
                current = []
                inWord = false
            } else if byte == UInt8(ascii: "\"") {
                guard !inWord else { throw SyntaxError("a quote inside a word at column \(column); quote the whole word") }
                inWord = true
                quoted = true
            } else {
                inWord = true
                current.append(byte)
            }
        }
        guard !quoted else { throw SyntaxError("a quote opened and not closed; expected a closing \"") }
        if inWord { words.append(String(decoding: current, as: UTF8.self)) }
        return words
    }

    /// `word` as a line carries it: as it is, or quoted when it is empty or has a space, tab,
    /// quote or backslash (control characters become spaces).
    public static func quoted(_ word: String) -> String {
        let plain = word.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) }
        let text = String(plain)
        guard text.isEmpty || text.contains(where: { $0 == " " || $0 == "\t" || $0 == "\"" || $0 == "\\" }) else { return text }
        return "\"" + text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
    }

    /// `ok` and the words, quoted where needed.
    public static func ok(_ words: [String] = []) -> String {
        (["ok"] + words.map(quoted)).joined(separator: " ")
    }

    /// `error CODE MESSAGE`, the message on one line.
    public static func error(_ code: String, _ message: String) -> String {
        "error \(code) " + String(message.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
