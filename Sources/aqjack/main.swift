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
    do throws(UsageError) {
        while let argument = cursor.next() {
            switch argument {
            case .option("--help"), .option("-h"), .operand("help"):
                print(Help.usage)
                return ExitStatus.success
            case .option("--version"), .option("-V"):
                print(Help.versionText)
                return ExitStatus.success
            case .option("--ports"):
                return try parseAndRun(PortsCommand.self, &cursor, &globals)
            case let .option(option):
                if try globals.parse(option, from: &cursor) { continue }
                throw UsageError(message: "unknown option '\(option)': expected --ports, --help, --version, --server or --name")
            case let .operand(word):
                guard let subcommand = Subcommands.named(word) else {
                    throw UsageError(message: "unknown subcommand '\(word)': expected demo, ports (or --ports), record, play, convert, info, plugins or host; see aqjack --help")
                }
                return try parseAndRun(subcommand, &cursor, &globals)
            }
        }
        throw UsageError(message: "no subcommand given: expected --ports; see aqjack --help")
    } catch {
        Diagnostics.error(error.message)
        FileHandle.standardError.write(Data("usage: aqjack [--server NAME] [--name CLIENT] --ports [PATTERN] [--json]; aqjack --help for more\n".utf8))
        return ExitStatus.usage
    }
}

func runReportingJackErrors(_ body: () throws(JackError) -> Int32) -> Int32 {
    do {
        return try body()
    } catch {
        Diagnostics.error(error.description)
        return ExitStatus.failure
    }
}

// Arguments byte for byte: a file name that is not UTF-8 reaches the file system unchanged
// (CommandLine.arguments would have replaced its bytes with U+FFFD).
let arguments = (1 ..< Int(CommandLine.argc)).map { FilePath.decode(CommandLine.unsafeArgv[$0]!) }
exit(runCommandLine(arguments))
