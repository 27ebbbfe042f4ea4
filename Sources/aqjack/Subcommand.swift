import AQJack

/// The shape every subcommand has: parsed from the rest of the command line (a usage error
/// exits 2 with its message), then run to an exit status (0 done, 1 failure; a JACK error is
/// reported and exits 1). `main.swift` dispatches through ``Subcommands/named``.
protocol Subcommand {
    init(arguments cursor: inout ArgumentCursor, globals: inout GlobalOptions) throws(UsageError)
    func run(globals: GlobalOptions) throws(JackError) -> Int32
}

enum Subcommands {
    /// The subcommands by the word that names them (`--ports` is also `ports`).
    static var named: [String: any Subcommand.Type] {
        ["demo": DemoCommand.self, "play": PlayCommand.self, "record": RecordCommand.self, "convert": ConvertCommand.self,
         "info": InfoCommand.self, "ports": PortsCommand.self, "plugins": PluginsCommand.self, "host": HostCommand.self]
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
