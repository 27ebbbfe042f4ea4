/// A usage error: which argument was wrong and what was expected. Exit status 2.
struct UsageError: Error {
    let message: String
}

/// Walks the command line, one argument at a time, for hand-written parsers.
///
/// Accepts `--option value` and `--option=value`; `--` ends the options.
struct ArgumentCursor {
    private var remaining: ArraySlice<String>
    private var optionsEnded = false

    init(_ arguments: [String]) { remaining = arguments[...] }

    var isAtEnd: Bool { remaining.isEmpty }

    /// The next argument, or `nil` at the end. `--` is consumed and switches to operands only.
    mutating func next() -> Argument? {
        guard let word = remaining.popFirst() else { return nil }
        if optionsEnded { return .operand(word) }
        if word == "--" {
            optionsEnded = true
            return next()
        }
        if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
            remaining.insert(String(word[word.index(after: equals)...]), at: remaining.startIndex)
            return .option(String(word[..<equals]))
        }
        if word.hasPrefix("-") && word.count > 1 && Double(word) == nil { return .option(word) }
        return .operand(word)
    }

    /// The value of `option`, which must follow it.
    mutating func value(for option: String, expected: String) throws(UsageError) -> String {
        guard let word = remaining.popFirst() else {
            throw UsageError(message: "\(option) needs a value: \(expected)")
        }
        return word
    }
}

enum Argument: Equatable {
    case option(String)
    case operand(String)
}
