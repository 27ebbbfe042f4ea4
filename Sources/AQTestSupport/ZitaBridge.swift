import AQJack
import Foundation

/// A zita-njbridge link from one server of this machine to another over 127.0.0.1: `zita-j2n` on
/// the sending server (``sender``, inputs `NAME:in_N`) and `zita-n2j` on the receiving one
/// (``receiver``, outputs `NAME:out_N`). The servers may run at different rates and periods: the
/// receiver resamples adaptively to its own clock and holds the link's latency constant, and
/// reports none of it on its ports.
///
/// `zita-j2n --jserv SENDING --jname NAME --float --chan N 127.0.0.1 PORT` and
/// `zita-n2j --jserv RECEIVING --jname NAME --chan 1-N --info 127.0.0.1 PORT`; their output goes to
/// `zita-NAME.log` in the temporary directory.
public final class ZitaBridge {
    /// The `zita-j2n` client's name on the sending server.
    public let sender: String
    /// The `zita-n2j` client's name on the receiving server.
    public let receiver: String
    private let processes: [Process]
    private let receiverLog: String

    public enum Failure: Error, CustomStringConvertible {
        case notReceiving(String)
        public var description: String {
            switch self { case .notReceiving(let log): "zita-n2j was not receiving within 20 s: \(log)" }
        }
    }

    /// Starts the receiver, then the sender, and waits until the receiver says it is receiving
    /// ("Receiving.", after its "Syncing...").
    public init(from sendingServer: String, to receivingServer: String, channels: Int = 2) throws {
        sender = TestServer.uniqueClientName("j2n")
        receiver = TestServer.uniqueClientName("n2j")
        let port = "\(20_000 + Int.random(in: 0 ..< 20_000))"
        let directory = FileManager.default.temporaryDirectory
        receiverLog = directory.appendingPathComponent("zita-\(receiver).log").path
        let senderLog = directory.appendingPathComponent("zita-\(sender).log").path
        // zita-n2j's messages go to a buffered stdout: line-buffered through stdbuf, so the log
        // says "Receiving." when it does.
        let commands: [(log: String, arguments: [String])] = [
            (receiverLog, ["stdbuf", "-oL", "zita-n2j", "--jserv", receivingServer, "--jname", receiver,
                           "--chan", channels == 1 ? "1" : "1-\(channels)", "--info", "127.0.0.1", port]),
            (senderLog, ["zita-j2n", "--jserv", sendingServer, "--jname", sender, "--float", "--chan", "\(channels)", "127.0.0.1", port]),
        ]
        var started: [Process] = []
        for command in commands {
            _ = FileManager.default.createFile(atPath: command.log, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command.arguments
            let handle = FileHandle(forWritingAtPath: command.log)
            process.standardOutput = handle
            process.standardError = handle
            process.standardInput = FileHandle.nullDevice
            try process.runWithSignalsUnblocked()
            started.append(process)
        }
        processes = started
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !log.contains("Receiving.") { usleep(50_000) }
        guard log.contains("Receiving.") else {
            stop()
            throw Failure.notReceiving(log)
        }
    }

    /// What zita-n2j has printed: its sync messages, then with `--info` a line a second.
    public var log: String { (try? String(contentsOfFile: receiverLog, encoding: .utf8)) ?? "" }

    /// Stops both (SIGTERM, then SIGKILL after 5 s). Idempotent.
    public func stop() {
        for process in processes.reversed() where process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            _ = process.waitOrKill(timeout: 5)
        }
    }

    deinit { stop() }
}
