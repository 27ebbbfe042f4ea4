import AQJack

/// The shape every subcommand has: parsed from the rest of the command line (a usage error
/// exits 2 with its message), then run to an exit status (0 done, 1 failure; a JACK error is
/// reported and exits 1). `main.swift` dispatches through ``Subcommands/named(_:)``.
protocol Subcommand {
    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError)
    func run(globals: GlobalOptions) throws(JackError) -> Int32
}

enum Subcommands {
    /// The subcommand the word names (`--ports` is also `ports`), or nil. A switch, not a
    /// dictionary of metatypes: building that dictionary at every start instantiated its type's
    /// metadata and checked each conformance, 11 % of the process's CPU samples in an
    /// `aqjack play` that stopped at a missing file (`perf record`, 200 runs).
    static func named(_ word: String) -> (any Subcommand.Type)? {
        switch word {
        case "demo": DemoCommand.self
        case "play": PlayCommand.self
        case "record": RecordCommand.self
        case "convert": ConvertCommand.self
        case "info": InfoCommand.self
        case "ports": PortsCommand.self
        case "plugins": PluginsCommand.self
        case "host": HostCommand.self
        default: nil
        }
    }
}

extension DemoCommand: Subcommand {}
extension PlayCommand: Subcommand {}
extension RecordCommand: Subcommand {}
extension PortsCommand: Subcommand {}
extension HostCommand: Subcommand {}
// convert and info need no server: their run takes no globals and throws no JACK error.
extension ConvertCommand: Subcommand {
    func run(globals: GlobalOptions) -> Int32 { run() }
}
extension InfoCommand: Subcommand {
    func run(globals: GlobalOptions) -> Int32 { run() }
}
extension PluginsCommand: Subcommand {
    func run(globals: GlobalOptions) -> Int32 { run() }
}

/// Parses the subcommand `type` from `cursor` and runs it.
func parseAndRun(_ type: any Subcommand.Type, _ cursor: inout ArgumentCursor, _ globals: inout GlobalOptions) throws(UsageError) -> Int32 {
    let command = try type.init(arguments: &cursor, globals: &globals)
    let options = globals
    return runReportingJackErrors { () throws(JackError) in try command.run(globals: options) }
}
