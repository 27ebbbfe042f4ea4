/// Options every subcommand shares.
struct GlobalOptions {
    /// `--server NAME`: the JACK server; default `$JACK_DEFAULT_SERVER`, else `default`.
    var server: String?
    /// `--name CLIENT_NAME`: this program's JACK client name; default `aqjack`.
    var clientName = "aqjack"

    /// Consumes `option` if it is a global one.
    /// - Returns: `true` when it was.
    mutating func parse(_ option: String, from cursor: inout ArgumentCursor) throws(UsageError) -> Bool {
        switch option {
        case "--server", "-s":
            server = try cursor.value(for: option, expected: "a JACK server name, e.g. --server default")
            if server!.isEmpty { throw UsageError(message: "--server needs a non-empty server name") }
        case "--name", "-n":
            clientName = try cursor.value(for: option, expected: "a JACK client name, e.g. --name recorder")
            if clientName.isEmpty || clientName.contains(":") {
                throw UsageError(message: "--name '\(clientName)' is not a valid JACK client name: expected a non-empty name without ':'")
            }
        default:
            return false
        }
        return true
    }
}
