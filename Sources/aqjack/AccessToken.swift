/// The check of a token a client gives (`--osc-token`, `--control-token`).
enum AccessToken {
    /// Whether `given` is `token`, comparing every byte whatever the first difference, so the
    /// time taken does not tell how much of a guess was right.
    static func matches(_ given: String, _ token: String) -> Bool {
        let a = Array(given.utf8), b = Array(token.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0 ..< min(a.count, b.count) { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
