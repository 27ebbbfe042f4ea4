import AQControl
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Glibc
import Testing

/// A small NSM server (API 1.1.2, the part a client meets): receives the announce, answers it,
/// sends /nsm/client/open and /nsm/client/save, and reads the client's replies. Debian has no
/// nsmd; this speaks the documented protocol as nsmd, RaySession and Agordejo do, on one UDP
/// socket that sends from the port it listens on, as liblo's servers do. It binds `address`
/// (nsmd binds every interface, "0.0.0.0"; "::1" for IPv6) and names itself in ``url`` by
/// `urlHost` (nsmd writes the machine's host name).
final class TestNSMServer {
    let socket: Int32
    /// Who sent the last message (the client, from its announce).
    var client = sockaddr_storage()
    private let urlHost: String

    init(address: String = "127.0.0.1", urlHost: String = "127.0.0.1") {
        self.urlHost = urlHost
        let ipv6 = address.contains(":")
        socket = Glibc.socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        if ipv6 {
            var bound = sockaddr_in6()
            bound.sin6_family = sa_family_t(AF_INET6)
            inet_pton(AF_INET6, address, &bound.sin6_addr)
            _ = withUnsafePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        } else {
            var bound = sockaddr_in()
            bound.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, address, &bound.sin_addr)
            _ = withUnsafePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(socket) }

    /// The port the server listens on.
    var port: UInt16 {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        // sin_port and sin6_port: the two bytes after the family.
        return withUnsafeBytes(of: &address) { UInt16($0[2]) << 8 | UInt16($0[3]) }
    }

    /// `osc.udp://HOST:PORT/`, for NSM_URL.
    var url: String { "osc.udp://\(urlHost):\(port)/" }

    /// The next message (10 s at most); remembers who sent it.
    func receive() -> OSCMessage? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &client) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(socket, bytes.baseAddress, bytes.count, 0, $0, &length) } }
        }
        return count > 0 ? try? OSCMessage(decoding: Array(buffer[0 ..< count])) : nil
    }

    /// The next message other than `/nsm/client/message` notes.
    func receiveSkippingNotes() -> OSCMessage? {
        while let message = receive() {
            if message.address != "/nsm/client/message" { return message }
        }
        return nil
    }

    func send(_ message: OSCMessage) {
        Self.send(message, from: socket, to: client)
    }

    /// Sends `message` from `socket` to `address`.
    static func send(_ message: OSCMessage, from socket: Int32, to address: sockaddr_storage) {
        var address = address
        let length = socklen_t(address.ss_family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bytes = message.encoded
        _ = bytes.withUnsafeBytes { data in
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket, data.baseAddress, data.count, 0, $0, length) } }
        }
    }
}

/// The announce, the server's reply and the open of a session at `sessionPath` for `clientID`;
/// returns the client's reply to the open (nil when none came).
func openNSMSession(_ server: TestNSMServer, name: String, capabilities: String, pid: Int32, sessionPath: String, clientID: String) throws -> OSCMessage? {
    let announce = try #require(server.receive(), "no announce")
    #expect(announce.address == "/nsm/server/announce")
    #expect(announce.arguments == [.string(name), .string(capabilities), .string("aqjack"), .int32(1), .int32(2), .int32(pid)])
    server.send(OSCMessage(address: "/reply", arguments: [.string("/nsm/server/announce"), .string("welcome"), .string("test-nsm"), .string(":server-control:")]))
    server.send(OSCMessage(address: "/nsm/client/open", arguments: [.string(sessionPath), .string(name), .string(clientID)]))
    return server.receiveSkippingNotes()
}

extension JackServerSuite {
    @Suite("aqjack record, play and host under NSM")
    struct NSMTests {
        @Test("NSM_URL set: announce (name, :message:, executable, API 1.2, pid) → open: the JACK client is named by the client id, the file goes under the session path, the open is answered once recording; save answered; SIGTERM closes it with exit 0 and a bit-exact file")
        func recordUnderNSM() throws {
            let server = TestNSMServer()
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("nsmgen"), channelCount: 2)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-nsm-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "take.wav"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: folder + "/rec.err"),
                                                   environment: ["NSM_URL": server.url])
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let clientID = TestServer.uniqueClientName("nsmrec")
            let sessionPath = folder + "/session/aqjack.\(clientID)"
            let opened = try #require(try openNSMSession(server, name: "aqjack record", capabilities: ":message:", pid: recorder.processIdentifier,
                                                         sessionPath: sessionPath, clientID: clientID), "no reply to the open")
            #expect(opened.address == "/reply" && opened.arguments.first == .string("/nsm/client/open"), "\(opened)")
            // Answered once recording: the client is on the graph under its id, connected.
            #expect(generator.client.portInfo(named: "\(clientID):in_1")?.connections == [generator.portNames[0]])
            usleep(500_000)
            server.send(OSCMessage(address: "/nsm/client/save"))
            let saved = try #require(server.receiveSkippingNotes(), "no reply to the save")
            #expect(saved.address == "/reply" && saved.arguments.first == .string("/nsm/client/save"), "\(saved)")
            kill(recorder.processIdentifier, SIGTERM)
            let recorderExit = recorder.exitStatus()
            #expect(recorderExit.status == 0, "\((try? String(contentsOfFile: folder + "/rec.err", encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/rec.json")))
            #expect(summary.files == [sessionPath + "/take.wav"] && summary.exitReason == "terminate")
            let take = try SoundFileContents(path: sessionPath + "/take.wav")
            let check = verifyFloatRecording(take, channels: 2)
            #expect(take.frames > 24_000 && check.wrong <= summary.xruns * 128 * 2 && Int64(check.silent) <= summary.lostFrames, "\(check)")
        }

        @Test("play under NSM: the JACK client is named by the client id, a relative file is the session folder's, the open is answered once playing, save answered, the file plays to its end (exit 0)")
        func playUnderNSM() throws {
            let server = TestNSMServer()
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-nsmplay-\(getpid())").path
            let clientID = TestServer.uniqueClientName("nsmplay")
            let sessionPath = folder + "/session/aqjack.\(clientID)"
            try FileManager.default.createDirectory(atPath: sessionPath, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // 2 s of a stereo 1 kHz tone in the session's folder.
            let made = try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", sessionPath + "/tone.wav", "synth", "2", "sine", "1000"])
            try #require(made.status == 0, "\(made.standardError)")
            let watcher = try JackClient(name: TestServer.uniqueClientName("nsmwatch"))
            defer { watcher.close() }
            let player = try AQJackCommand.start(["play", "--json", "tone.wav"],
                                                 standardOutput: URL(fileURLWithPath: folder + "/play.json"), standardError: URL(fileURLWithPath: folder + "/play.err"),
                                                 environment: ["NSM_URL": server.url])
            defer { if player.isRunning { kill(player.processIdentifier, SIGKILL) } }
            let opened = try #require(try openNSMSession(server, name: "aqjack play", capabilities: ":message:", pid: player.processIdentifier,
                                                         sessionPath: sessionPath, clientID: clientID), "no reply to the open")
            #expect(opened.address == "/reply" && opened.arguments.first == .string("/nsm/client/open"), "\(opened)")
            #expect(watcher.portNames().contains("\(clientID):out_1"), "no port of '\(clientID)' on the graph once the open was answered")
            server.send(OSCMessage(address: "/nsm/client/save"))
            let saved = try #require(server.receiveSkippingNotes(), "no reply to the save")
            #expect(saved.address == "/reply" && saved.arguments.first == .string("/nsm/client/save"), "\(saved)")
            let playerExit = player.exitStatus()
            #expect(playerExit.status == 0, "\((try? String(contentsOfFile: folder + "/play.err", encoding: .utf8)) ?? "")")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/play.json"))) as? [String: Any])
            #expect(summary["framesPlayed"] as? Int == 96_000 && summary["exitReason"] as? String == "end", "\(summary)")
        }

        @Test("host under NSM: :dirty: declared; a control changed on the console sends is_dirty; save writes the plugin's state into the session folder (reply, then is_clean); a second open of the session restores it")
        func hostUnderNSM() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-nsmhost-\(getpid())").path
            let clientID = TestServer.uniqueClientName("nsmhost")
            let sessionPath = folder + "/session/aqjack.\(clientID)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            /// One run of the host in the session; `change` is a console line to type; returns the
            /// summary's controls.
            func session(change: String?) throws -> [String: Double] {
                let server = TestNSMServer()
                let input = Pipe()
                let host = try AQJackCommand.start(["host", PluginConvertTests.amp, "--json"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/host.json"), standardError: URL(fileURLWithPath: folder + "/host.err"),
                                                   standardInput: input, environment: ["NSM_URL": server.url])
                defer { if host.isRunning { kill(host.processIdentifier, SIGKILL) } }
                let opened = try #require(try openNSMSession(server, name: "aqjack host", capabilities: ":dirty:message:", pid: host.processIdentifier,
                                                             sessionPath: sessionPath, clientID: clientID), "no reply to the open")
                #expect(opened.address == "/reply" && opened.arguments.first == .string("/nsm/client/open"), "\(opened)")
                if let change {
                    input.fileHandleForWriting.write(Data((change + "\n").utf8))
                    let dirty = try #require(server.receiveSkippingNotes(), "no is_dirty after a control changed")
                    #expect(dirty.address == "/nsm/client/is_dirty")
                    server.send(OSCMessage(address: "/nsm/client/save"))
                    let saved = try #require(server.receiveSkippingNotes(), "no reply to the save")
                    #expect(saved.address == "/reply" && saved.arguments.first == .string("/nsm/client/save"), "\(saved)")
                    let clean = try #require(server.receiveSkippingNotes(), "no is_clean after the save")
                    #expect(clean.address == "/nsm/client/is_clean")
                    #expect(FileManager.default.fileExists(atPath: sessionPath + "/state.ttl"), "no state in the session folder")
                }
                kill(host.processIdentifier, SIGTERM)
                let hostExit = host.exitStatus()
                #expect(hostExit.status == 0, "\((try? String(contentsOfFile: folder + "/host.err", encoding: .utf8)) ?? "")")
                let summary = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/host.json"))) as? [String: Any])
                #expect(summary["client"] as? String == clientID, "\(summary)")
                return (summary["controls"] as? [String: Double]) ?? [:]
            }
            #expect(try session(change: "gain=6")["gain"] == 6)
            // The second open restores the saved gain (the host's default is 0 dB).
            #expect(try session(change: nil)["gain"] == 6)
        }

        @Test("host --control under NSM: edits over the socket send is_dirty; save writes the graph (graph.json and its plugins' state) into the session folder (reply, then is_clean); a second open of the session restores the graph: the same list, get returns the gain set")
        func graphUnderNSM() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-nsmgraph-\(getpid())").path
            let clientID = TestServer.uniqueClientName("nsmgraph")
            let sessionPath = folder + "/session/aqjack.\(clientID)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            /// One run of the host in the session; `build` runs with its control socket and returns what
            /// `list` and `get amp gain` replied at the end.
            func session(_ build: (LineClient, TestNSMServer) throws -> Void) throws -> (list: String?, gain: String?) {
                let server = TestNSMServer()
                let err = folder + "/host.err"
                let host = try AQJackCommand.start(["host", "--control", "0", "--channels", "1", "--json"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/host.json"), standardError: URL(fileURLWithPath: err),
                                                   environment: ["NSM_URL": server.url])
                defer { if host.isRunning { kill(host.processIdentifier, SIGKILL) } }
                let opened = try #require(try openNSMSession(server, name: "aqjack host", capabilities: ":dirty:message:", pid: host.processIdentifier,
                                                             sessionPath: sessionPath, clientID: clientID), "no reply to the open")
                #expect(opened.address == "/reply" && opened.arguments.first == .string("/nsm/client/open"), "\(opened)")
                let socket = try LineClient(port: HostControlTests.controlPort(URL(fileURLWithPath: err)))
                try build(socket, server)
                let listed = socket.command("list"), gain = socket.command("get amp gain")
                kill(host.processIdentifier, SIGTERM)
                #expect(host.exitStatus().status == 0, "\((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")")
                return (listed, gain)
            }
            let first = try session { socket, server in
                for line in ["add \(PluginConvertTests.amp) amp", "connect in_1 amp:input", "connect amp:output out_1", "set amp gain 6"] {
                    #expect(socket.command(line) == (line.hasPrefix("add") ? "ok amp" : "ok"), "\(line)")
                }
                let dirty = try #require(server.receiveSkippingNotes(), "no is_dirty after an edit")
                #expect(dirty.address == "/nsm/client/is_dirty")
                server.send(OSCMessage(address: "/nsm/client/save"))
                var saved = server.receiveSkippingNotes()
                while saved?.address == "/nsm/client/is_dirty" { saved = server.receiveSkippingNotes() }
                #expect(saved?.address == "/reply" && saved?.arguments.first == .string("/nsm/client/save"), "\(String(describing: saved))")
                let clean = try #require(server.receiveSkippingNotes(), "no is_clean after the save")
                #expect(clean.address == "/nsm/client/is_clean")
                #expect(FileManager.default.fileExists(atPath: sessionPath + "/graph.json") && FileManager.default.fileExists(atPath: sessionPath + "/graph.json.state/amp"))
            }
            #expect(first.gain == "ok 6.0")
            let second = try session { _, _ in }
            #expect(second.list == first.list && second.list?.contains("amp=\(PluginConvertTests.amp)") == true, "\(String(describing: second.list))")
            #expect(second.gain == "ok 6.0")
        }

        @Test("an NSM_URL that is not an OSC URL: exit 1 with a message naming it")
        func badSession() throws {
            let bad = try AQJackCommand.run(["record", temporaryPath("nsm.wav")], environment: ["NSM_URL": "http://example/"])
            #expect(bad.status == 1 && bad.standardError.contains("is not an OSC URL"), "\(bad.standardError)")
        }
    }
}
