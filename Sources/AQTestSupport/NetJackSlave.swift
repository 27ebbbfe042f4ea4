import AQJack
import Foundation

/// A NetJACK2 slave of a test's master server, both on this machine (127.0.0.1): the master
/// loads JACK's `netmanager` internal client (`jack_load`), the slave is a jackd on the net
/// backend that joins it. On the master the slave is a client named ``netName`` with
/// `NAME:to_slave_N` inputs (heard as the slave's `system:capture_N`) and `NAME:from_slave_N`
/// outputs (what the slave's `system:playback_N` get); the slave's cycles follow the master's.
///
/// `jackd -R -n NAME -t 5000 -d net -a 127.0.0.1 -p UDP_PORT -C N -P N -l LATENCY -n NET_NAME`
/// (a round trip is `latency` master periods, as measured in NetJackTests). Its output goes to
/// `jackd-NAME.log` in the temporary directory, where Scripts/jack-suite.sh counts xruns.
public final class NetJackSlave {
    /// The slave's own server name (for its clients' `--server`).
    public let name: String
    /// The slave's client name on the master.
    public let netName: String
    private let server: JackServerProcess

    public enum Failure: Error, CustomStringConvertible {
        case netmanager(String)
        case slave(String)
        public var description: String {
            switch self {
            case .netmanager(let why): "jack_load netmanager failed: \(why)"
            case .slave(let why): "the NetJACK2 slave did not start: \(why)"
            }
        }
    }

    /// Loads the netmanager into `master` (once per master) and starts a slave with `channels`
    /// capture and playback channels and `latency` cycles of network latency.
    public init(master: String, channels: Int = 2, latency: Int = 2) throws {
        let suffix = "\(getpid())-\(Int.random(in: 0 ..< 1_000_000))"
        name = "aqjack-slave-\(suffix)"
        netName = "aqslave\(Int.random(in: 0 ..< 1_000_000))"
        let port = 20_000 + Int.random(in: 0 ..< 20_000)
        self.master = master
        let load = try ExternalTool.run("jack_load", ["-s", master, "-i", "-a 127.0.0.1 -p \(port)", "netmanager"], timeout: 20)
        guard load.status == 0 else { throw Failure.netmanager("exit \(load.status): \(load.standardOutput)\(load.standardError)") }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("jackd-\(name).log").path
        do {
            server = try JackServerProcess(name: name, realtime: true, serverOptions: ["-t", "5000"],
                                           driver: ["net", "-a", "127.0.0.1", "-p", "\(port)", "-C", "\(channels)",
                                                    "-P", "\(channels)", "-l", "\(latency)", "-n", netName],
                                           logPath: log, readyWithin: 20)
            // The slave's server takes clients before it has found the master; its system ports
            // and its client on the master come once it has (measured: a client connecting right
            // away found no system:capture_1, and a player there failed). Wait for both.
            // Two names: clients of one name on two servers at once break each other (docs/JACK.md).
            let masterProbe = try JackClient(name: TestServer.uniqueClientName("netprobe"), server: master)
            defer { masterProbe.close() }
            let slaveProbe = try JackClient(name: TestServer.uniqueClientName("netprobe"), server: name)
            defer { slaveProbe.close() }
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, masterProbe.portInfo(named: "\(netName):from_slave_\(channels)") == nil
                || slaveProbe.portInfo(named: "system:playback_\(channels)") == nil {
                usleep(20_000)
            }
            guard masterProbe.portInfo(named: "\(netName):from_slave_\(channels)") != nil,
                  slaveProbe.portInfo(named: "system:playback_\(channels)") != nil else {
                throw Failure.slave("no \(netName):from_slave_\(channels) on the master or system:playback_\(channels) on the slave after 20 s")
            }
        } catch {
            // The netmanager must go, or the master cannot be stopped (see stop()).
            Self.unloadNetmanager(from: master)
            throw Failure.slave("\(error); its log: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
    }

    /// Unloads the master's netmanager (which drops the slave's client there), then stops the
    /// slave (SIGTERM, by PID). Idempotent.
    ///
    /// In this order because JACK2 1.9.21 does not do it the other way: a master with the
    /// netmanager loaded ignores SIGTERM (measured: still running after 30 s, its main thread in
    /// `JackEngine::ClientDeactivate`, with or without a slave), and once a slave has left it,
    /// `jack_unload` no longer returns either. A killed server stays in /dev/shm's registry, and
    /// after 8 of those no server starts. Unloaded first, the slave stops in about 4 s and the
    /// master in 2.
    public func stop() {
        if !unloaded {
            unloaded = true
            Self.unloadNetmanager(from: master)
        }
        server.stop()
    }

    /// `jack_unload netmanager MASTER`, killed after 10 s (it does not return once the slave has
    /// left).
    private static func unloadNetmanager(from master: String) {
        _ = try? ExternalTool.run("jack_unload", ["netmanager", master], timeout: 10)
    }

    private let master: String
    private var unloaded = false
}
