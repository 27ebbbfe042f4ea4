import AQJack
import Foundation

/// A JackTrip peer-to-peer link between two servers of this machine on 127.0.0.1: `jacktrip -s`
/// on one (``serverClient``, the receiving end of the tests) and `jacktrip -c 127.0.0.1` on the
/// other (``clientClient``). Each end is a JACK client with `NAME:send_N` inputs (to the network)
/// and `NAME:receive_N` outputs (from it); what goes into one end's `send_N` comes out of the
/// other's `receive_N`. Neither end reports a latency on its ports.
///
/// `jacktrip -s|-c -n CHANNELS -b BITS -J NAME -D -I 1 -B PORT [-P PEER_PORT] [--simloss RATE -z]`,
/// each with `JACK_DEFAULT_SERVER` set to its server. Their output goes to `jacktrip-NAME.log` in
/// the temporary directory; `-I 1` writes the receiving statistics there every second, which
/// ``serverStatistics()`` reads.
public final class JackTripLink {
    /// The `jacktrip -s` end's client name (on the server given as `serverSide`).
    public let serverClient: String
    /// The `jacktrip -c` end's client name (on the server given as `clientSide`).
    public let clientClient: String
    private let processes: [Process]
    private let logs: [String]

    public enum Failure: Error, CustomStringConvertible {
        case notConnected(String)
        public var description: String {
            switch self { case .notConnected(let logs): "the JackTrip ends did not connect within 20 s: \(logs)" }
        }
    }

    /// What `jacktrip -I 1` last reported for the packets its end received (its `recv:` and
    /// `prot:` fields): cumulative since the link started.
    public struct Statistics: Sendable {
        /// Receive ring underruns and overflows (JackTrip's own buffer ran empty or over).
        public let underruns: Int, overflows: Int
        /// Packets missing from the sequence (dropped by the network or by `--simloss`).
        public let lostPackets: Int
        /// Packets counted in all, received or lost.
        public let totalPackets: Int
    }

    /// Starts both ends and waits until each has received from the other.
    /// - Parameters:
    ///   - bits: `-b`: 16 and 24 carry integer samples; 24 carries a 16-bit signal bit-exact
    ///     (measured: JackTrip 1.7.0's 16-bit scaling changes large samples by one step, and its
    ///     32-bit float mode clipped every sample to ±1).
    ///   - simulatedLoss: `--simloss` on the `-s` end (the fraction of received packets dropped),
    ///     with `-z` so a lost packet becomes silence rather than JackTrip's concealment.
    public init(serverSide: String, clientSide: String, channels: Int = 2, bits: Int = 24, simulatedLoss: Double? = nil) throws {
        serverClient = TestServer.uniqueClientName("jtserver")
        clientClient = TestServer.uniqueClientName("jtclient")
        let port = 20_000 + 2 * Int.random(in: 0 ..< 10_000)
        let common = ["-n", "\(channels)", "-b", "\(bits)", "-D", "-I", "1"]
        let ends: [(server: String, name: String, arguments: [String])] = [
            (serverSide, serverClient, ["-s", "-B", "\(port)"] + (simulatedLoss.map { ["--simloss", "\($0)", "-z"] } ?? [])),
            (clientSide, clientClient, ["-c", "127.0.0.1", "-B", "\(port + 1)", "-P", "\(port)"]),
        ]
        var started: [Process] = []
        var logs: [String] = []
        for end in ends {
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("jacktrip-\(end.name).log").path
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["jacktrip"] + end.arguments + common + ["-J", end.name]
            process.environment = ProcessInfo.processInfo.environment.merging(["JACK_DEFAULT_SERVER": end.server]) { $1 }
            let handle = FileHandle(forWritingAtPath: log)
            process.standardOutput = handle
            process.standardError = handle
            process.standardInput = FileHandle.nullDevice
            try process.runWithSignalsUnblocked()
            started.append(process)
            logs.append(log)
        }
        processes = started
        self.logs = logs
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !logs.allSatisfy({ Self.text(of: $0).contains("Received Connection from Peer!") }) {
            usleep(50_000)
        }
        guard logs.allSatisfy({ Self.text(of: $0).contains("Received Connection from Peer!") }) else {
            stop()
            throw Failure.notConnected(logs.map { "\($0): \(Self.text(of: $0))" }.joined(separator: "\n"))
        }
    }

    /// The `-s` end's latest statistics line (`... recv: U/O prot: LOST/OUT_OF_ORDER/REVIVED tot:
    /// N ...`), or nil before its first (one a second).
    public func serverStatistics() -> Statistics? {
        guard let line = Self.text(of: logs[0]).split(separator: "\n").last(where: { $0.contains(" prot: ") }) else { return nil }
        func field(_ name: String) -> [Int] {
            guard let range = line.range(of: " \(name): ") else { return [] }
            return line[range.upperBound...].prefix { $0 != " " }.split(separator: "/").compactMap { Int($0) }
        }
        let received = field("recv"), protocolCounts = field("prot"), total = field("tot")
        guard received.count == 2, protocolCounts.count == 3, total.count == 1 else { return nil }
        return Statistics(underruns: received[0], overflows: received[1], lostPackets: protocolCounts[0], totalPackets: total[0])
    }

    /// Stops both ends (SIGTERM, then SIGKILL after 5 s). Idempotent.
    public func stop() {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            _ = process.waitOrKill(timeout: 5)
        }
    }

    deinit { stop() }

    private static func text(of path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}
