import Foundation

/// `--http [ADDRESS:]PORT [--http-token TOKEN | --http-token-file PATH]`: the web page, status,
/// metrics, events and commands (docs/WEB.md), and `--events FILE|-`, the events as NDJSON. The
/// rule of every aqjack listener: loopback by default; any other address needs a token (given,
/// read from a file, or `AQJACK_HTTP_TOKEN`), which every request then carries.
struct HTTPOptions {
    /// The TCP port (0: any free one, printed on standard error); nil without `--http`.
    var port: Int?
    var host = "127.0.0.1"
    var token: String?
    private var tokenFile: String?
    /// `--events FILE|-`: every event as a line of JSON, to FILE or standard output.
    var events: String?

    /// Takes `option` when it is one of the web's; false for another option.
    mutating func parse(_ option: String, from cursor: inout ArgumentCursor) throws(UsageError) -> Bool {
        switch option {
        case "--http":
            let value = try cursor.value(for: "--http", expected: "[ADDRESS:]PORT to serve the web page on, e.g. 8080 or 0.0.0.0:8080 (port 0: any free one)")
            let parts = value.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2, let number = Int(parts.last ?? ""), (0 ... 65535).contains(number), parts.count == 1 || !parts[0].isEmpty else {
                throw UsageError(message: "--http \(value): expected [ADDRESS:]PORT with a port from 0 to 65535, e.g. 8080 or 127.0.0.1:8080")
            }
            port = number
            if parts.count == 2 { host = String(parts[0]) }
        case "--http-token":
            token = try cursor.value(for: "--http-token", expected: "a secret every request carries (Authorization: Bearer TOKEN or ?token=TOKEN)")
        case "--events":
            events = try cursor.value(for: "--events", expected: "a file (or - for standard output) to write the session's events to, one JSON object a line")
        case "--http-token-file":
            tokenFile = try cursor.value(for: "--http-token-file", expected: "a file holding the secret every request carries")
        default:
            return false
        }
        return true
    }

    /// Reads the token file or the environment when no token was given, and refuses an empty
    /// secret, an address that is not IPv4, one beyond loopback without a token, and a token
    /// without `--http`.
    mutating func validate() throws(UsageError) {
        guard port != nil else {
            if token != nil || tokenFile != nil { throw UsageError(message: "--http-token and --http-token-file belong to --http: give --http [ADDRESS:]PORT too") }
            return
        }
        if token != nil && tokenFile != nil { throw UsageError(message: "give --http-token or --http-token-file, not both") }
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile) else {
                throw UsageError(message: "--http-token-file \(tokenFile): cannot read it (\(String(cString: strerror(errno))))")
            }
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if token == nil, let fromEnvironment = environmentValue("AQJACK_HTTP_TOKEN"), !fromEnvironment.isEmpty { token = fromEnvironment }
        if token == "" { throw UsageError(message: "the --http token is empty: give a non-empty secret") }
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else {
            throw UsageError(message: "--http \(host):...: '\(host)' is not an IPv4 address; expected e.g. 127.0.0.1 or 0.0.0.0")
        }
        if token == nil && !LoopbackPeerOwner.isLoopbackHost(host) {
            throw UsageError(message: "--http \(host):\(port!) listens beyond this machine: give --http-token TOKEN (or --http-token-file PATH, or AQJACK_HTTP_TOKEN) too, which every request then carries")
        }
    }
}
