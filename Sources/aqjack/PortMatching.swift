import Glibc

/// Port selection for `-p PORT_OR_GLOB`: exact names or shell globs (`system:capture_*`),
/// each pattern's matches in natural order (`capture_2` before `capture_10`).
enum PortMatching {
    /// The ports of `available` that `patterns` select, in pattern order, without repeats.
    static func select(_ patterns: [String], from available: [String]) -> (selected: [String], unmatched: [String]) {
        var selected: [String] = []
        var unmatched: [String] = []
        for pattern in patterns {
            let matches = available.filter { $0 == pattern || fnmatch(pattern, $0, 0) == 0 }.sorted(by: naturalOrder)
            if matches.isEmpty { unmatched.append(pattern) }
            for name in matches where !selected.contains(name) { selected.append(name) }
        }
        return (selected, unmatched)
    }

    /// Compares runs of digits by value and everything else by character.
    static func naturalOrder(_ left: String, _ right: String) -> Bool {
        var a = Substring(left)
        var b = Substring(right)
        while let x = a.first, let y = b.first {
            if x.isNumber && y.isNumber {
                let numberA = a.prefix(while: \.isNumber)
                let numberB = b.prefix(while: \.isNumber)
                if let valueA = Int(numberA), let valueB = Int(numberB), valueA != valueB { return valueA < valueB }
                a = a.dropFirst(numberA.count)
                b = b.dropFirst(numberB.count)
            } else {
                if x != y { return x < y }
                a = a.dropFirst()
                b = b.dropFirst()
            }
        }
        return a.isEmpty && !b.isEmpty
    }
}
