/// `--osc PORT [--osc-host ADDRESS] [--osc-token TOKEN]`: an OSC surface over UDP (``OSCControl``),
/// on `record` (takes) and `host` (the graph's verbs). One rule for both: loopback by default; any
/// other address needs a token (`--osc-token` or `AQJACK_OSC_TOKEN`), which every message then
/// carries as its first argument.
struct OSCOptions {
    /// The UDP port (0: any free one, printed on standard error); nil without `--osc`.
    var port: Int?
    var host = "127.0.0.1"
    var token: String?

    /// Takes `option` when it is one of OSC's; false for another option.
    mutating func parse(_ option: String, from cursor: inout ArgumentCursor) throws(UsageError) -> Bool {
        switch option {
        case "--osc":
            port = try cursor.integer(for: "--osc", in: 0 ... 65535, meaning: "a UDP port for OSC (0: any free one, printed on standard error)")
        case "--osc-host":
            host = try cursor.value(for: "--osc-host", expected: "an IPv4 address to listen on, e.g. 127.0.0.1")
        case "--osc-token":
            token = try cursor.value(for: "--osc-token", expected: "a secret every OSC message carries as its first argument")
        default:
            return false
        }
        return true
    }

    /// Takes the token from the environment when none was given, and refuses a secret that is
    /// empty, an address beyond loopback without one, and a token or address without `--osc`.
    mutating func validate() throws(UsageError) {
        guard port != nil else {
            if token != nil || host != "127.0.0.1" {
                throw UsageError(message: "--osc-host and --osc-token belong to --osc: give --osc PORT too")
            }
            return
        }
        if token == nil, let fromEnvironment = environmentValue("AQJACK_OSC_TOKEN"), !fromEnvironment.isEmpty { token = fromEnvironment }
        if token == "" { throw UsageError(message: "--osc-token needs a non-empty secret") }
        if token == nil && !LoopbackPeerOwner.isLoopbackHost(host) {
            throw UsageError(message: "--osc-host \(host) listens beyond this machine: give --osc-token TOKEN (or AQJACK_OSC_TOKEN) too, which every message then carries as its first argument")
        }
    }
}
