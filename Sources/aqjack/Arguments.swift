import AQMedia

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

    /// The next word, without consuming it.
    func peek() -> String? { remaining.first }

    /// Whether `--help` or `-h` is among the options still to come (before any `--`).
    var asksForHelp: Bool {
        guard !optionsEnded else { return false }
        return remaining.prefix { $0 != "--" }.contains { $0 == "--help" || $0 == "-h" }
    }

    /// The value of `option`, which must follow it.
    /// `--resampler soxr|libsamplerate`.
    mutating func resampler(for option: String) throws(UsageError) -> Resampler.Engine {
        let text = try value(for: option, expected: Resampler.Engine.names)
        guard let engine = Resampler.Engine(rawValue: text) else {
            throw UsageError(message: "\(option) '\(text)' is not a resampler: expected \(Resampler.Engine.names)")
        }
        return engine
    }

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

/// Numeric option values, each checked against the range the option accepts before anything
/// uses it, so no value on the command line can overflow a frame count or trap later (issue 9,
/// item 7). Every refusal names the option, the text given and the range.
extension ArgumentCursor {
    /// A whole number in `range`. Refuses text that is not one (`1e15`, `0x10`, `NaN`) as well
    /// as values outside the range.
    mutating func integer<Value: FixedWidthInteger>(for option: String, in range: ClosedRange<Value>, meaning: String) throws(UsageError) -> Value {
        let text = try value(for: option, expected: "\(meaning), \(range.lowerBound) ... \(range.upperBound)")
        guard let number = Value(text, radix: 10) else {
            throw UsageError(message: "\(option) '\(text)' is not a whole number: expected \(meaning), \(range.lowerBound) ... \(range.upperBound)")
        }
        guard range.contains(number) else {
            throw UsageError(message: "\(option) \(text) is out of range: expected \(meaning), \(range.lowerBound) ... \(range.upperBound)")
        }
        return number
    }

    /// A finite number in `range` (NaN and infinities refused); `above` excludes the lower bound.
    mutating func real(for option: String, in range: ClosedRange<Double>, excludingLowerBound: Bool = false, meaning: String) throws(UsageError) -> Double {
        let bounds = "\(excludingLowerBound ? "above" : "from") \(Self.describe(range.lowerBound)) to \(Self.describe(range.upperBound))"
        let text = try value(for: option, expected: "\(meaning), \(bounds)")
        guard let number = Double(text), number.isFinite else {
            throw UsageError(message: "\(option) '\(text)' is not a number: expected \(meaning), \(bounds)")
        }
        guard range.contains(number), !(excludingLowerBound && number == range.lowerBound) else {
            throw UsageError(message: "\(option) \(text) is out of range: expected \(meaning), \(bounds)")
        }
        return number
    }

    private static func describe(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
