import AQJack

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
            if server!.isEmpty || server!.utf8.count > JackServer.maximumNameBytes {
                throw UsageError(message: "--server '\(server!.prefix(80))' is \(server!.utf8.count) bytes: expected a JACK server name of 1 ... \(JackServer.maximumNameBytes)")
            }
        case "--name", "-n":
            clientName = try cursor.value(for: option, expected: "a JACK client name, e.g. --name recorder")
            if clientName.isEmpty || clientName.contains(":") || clientName.utf8.count > JackServer.maximumClientNameBytes {
                throw UsageError(message: "--name '\(clientName.prefix(80))' is not a valid JACK client name: expected 1 ... \(JackServer.maximumClientNameBytes) bytes without ':'")
            }
        default:
            return false
        }
        return true
    }
}
