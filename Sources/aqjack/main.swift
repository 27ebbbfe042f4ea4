// aqjack: the command-line tool. Hand-parsed arguments (no package dependencies); one file per
// subcommand. Exit status: 0 ok, 1 runtime failure, 2 usage error.
import AQJack
import AQMedia
import Foundation

/// Exit statuses, the same for every subcommand.
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
}

func runCommandLine(_ arguments: [String]) -> Int32 {
    var cursor = ArgumentCursor(arguments)
    var globals = GlobalOptions()
    /// The subcommand being parsed, for the usage a usage error ends with.
    var subcommand: String?
    do throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("--help"), .option("-h"):
                print(Help.usage)
                return ExitStatus.success
            case .operand("help"):
                // `aqjack help` lists everything; `aqjack help CMD` says one subcommand.
                guard let word = cursor.next() else {
                    print(Help.usage)
                    return ExitStatus.success
                }
                let name: String = switch word { case .operand(let name), .option(let name): name }
                guard let topic = Help.topic(name) else {
                    throw UsageError(message: "no help on '\(name)': expected one of \(Help.topics.map(\.name).joined(separator: ", "))")
                }
                print(Help.text(of: topic))
                return ExitStatus.success
            case .option("--version"), .option("-V"):
                print(Help.versionText)
                return ExitStatus.success
            case .option("--ports"):
                subcommand = "ports"
                if cursor.asksForHelp { return printHelp(of: "ports") }
                return try parseAndRun(PortsCommand.self, &cursor, &globals)
            case let .option(option):
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)': expected --ports, --help, --version, --server or --name")
            case let .operand(word):
                guard let type = Subcommands.named(word) else {
                    throw UsageError(message: "unknown subcommand '\(word)': expected demo, ports (or --ports), record, play, convert, info, plugins or host; see aqjack --help")
                }
                subcommand = word
                if cursor.asksForHelp { return printHelp(of: word) }
                return try parseAndRun(type, &cursor, &globals)
            }
        }
        throw UsageError(message: "no subcommand given: expected --ports; see aqjack --help")
    } catch {
        Diagnostics.error(error.message)
        Diagnostics.emit(Help.usageLine(of: subcommand) + "\n")
        return ExitStatus.usage
    }
}

/// `aqjack CMD --help`: the subcommand's help on standard output, exit 0.
func printHelp(of name: String) -> Int32 {
    guard let topic = Help.topic(name) else { return ExitStatus.usage }
    print(Help.text(of: topic))
    return ExitStatus.success
}

func runReportingJackErrors(_ body: () throws(JackError) -> Int32) -> Int32 {
    do {
        return try body()
    } catch {
        Diagnostics.error(error.description)
        return ExitStatus.failure
    }
}

Diagnostics.surviveClosedPipes()

// Arguments byte for byte: a file name that is not UTF-8 reaches the file system unchanged
// (CommandLine.arguments would have replaced its bytes with U+FFFD).
let arguments = (1 ..< Int(CommandLine.argc)).map { FilePath.decode(CommandLine.unsafeArgv[$0]!) }
exit(runCommandLine(arguments))
