import Glibc

/// Port selection by name: exact names or shell globs (`system:capture_*`), each pattern's
/// matches in natural order (`capture_2` before `capture_10`). The one matcher for `-p`,
/// `aqjack host`'s sources and destinations, and `AQJACK_CONNECT`.
public enum PortMatching {
    /// Whether `pattern` (an exact name or a shell glob, `fnmatch(3)`) selects `name`.
    public static func matches(_ pattern: String, _ name: String) -> Bool {
        name == pattern || fnmatch(pattern, name, 0) == 0
    }

    /// The ports of `available` that `patterns` select, in pattern order, without repeats; and
    /// the patterns that select none.
    public static func select(_ patterns: [String], from available: [String]) -> (selected: [String], unmatched: [String]) {
        var selected: [String] = []
        var seen = Set<String>()
        var unmatched: [String] = []
        for pattern in patterns {
            let matches = available.filter { Self.matches(pattern, $0) }.sorted(by: naturalOrder)
            if matches.isEmpty { unmatched.append(pattern) }
            for name in matches where seen.insert(name).inserted { selected.append(name) }
        }
        return (selected, unmatched)
    }

    /// Compares runs of ASCII digits by value and other bytes of the UTF-8 names bytewise (which
    /// is code point order). On bytes, not Characters, which are slower to compare
    /// (docs/MEASUREMENTS.md, "Starts").
    public static func naturalOrder(_ left: String, _ right: String) -> Bool {
        var left = left, right = right
        return left.withUTF8 { a in right.withUTF8 { b in naturalOrder(a, b) } }
    }

    private static func naturalOrder(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if isDigit(a[i]) && isDigit(b[j]) {
                // The runs' values: leading zeros skipped, then the longer run is the larger
                // number, else the first differing digit decides (no overflow, any length).
                var startA = i, startB = j
                while startA < a.count && a[startA] == 0x30 { startA += 1 }
                while startB < b.count && b[startB] == 0x30 { startB += 1 }
                var endA = startA, endB = startB
                while endA < a.count && isDigit(a[endA]) { endA += 1 }
                while endB < b.count && isDigit(b[endB]) { endB += 1 }
                if endA - startA != endB - startB { return endA - startA < endB - startB }
                for k in 0 ..< endA - startA where a[startA + k] != b[startB + k] { return a[startA + k] < b[startB + k] }
                i = endA
                j = endB
            } else {
                if a[i] != b[j] { return a[i] < b[j] }
                i += 1
                j += 1
            }
        }
        return i == a.count && j < b.count
    }
}
