import AQControl
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Glibc
import Testing

/// The local addresses of process `pid`'s UDP sockets, as `ss -ulpn` lists them.
func udpSocketAddresses(of pid: Int32) throws -> [String] {
    let ss = Process()
    ss.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
    ss.arguments = ["-H", "-u", "-l", "-p", "-n"]
    let output = Pipe()
    ss.standardOutput = output
    try ss.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    _ = ss.waitForExit(timeout: 10)
    // "UNCONN 0 0 127.0.0.1:43210 0.0.0.0:* users:(("aqjack",pid=123,fd=9))"
    return text.split(separator: "\n").filter { $0.contains("pid=\(pid),") }.map { String($0.split(separator: " ", omittingEmptySubsequences: true)[3]) }
}

@Suite("NSM_URL and /nsm/client/open checked before anything is obeyed")
struct NSMRefusalTests {
    @Test("NSM_URL with a port above 65535, no port or a broken IPv6 host: exit 1 naming what was expected")
    func badURLs() throws {
        for (url, expected) in [("osc.udp://127.0.0.1:70000/", "expected 1 ... 65535"), ("osc.udp://127.0.0.1/", "has no port"),
                                ("osc.udp://[::1:5000/", "without ']:PORT'"), ("osc.udp://no-such-host.invalid:5000/", "cannot be resolved")] {
            let run = try AQJackCommand.run(["record", temporaryPath("nsm.wav")], environment: ["NSM_URL": url])
            #expect(run.status == 1 && run.standardError.contains(expected), "\(url): \(run.status) \(run.standardError)")
        }
    }

    @Test("/nsm/client/open with client id '' or 'a:b' or a relative or '..' path: refused with exit 1, nothing made")
    func badOpens() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-nsmbad-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (path, id, expected) in [(folder + "/s", "", "client id '' is not a valid JACK client name"),
                                     (folder + "/s", "a:b", "client id 'a:b' is not a valid JACK client name"),
                                     ("../../x", "okid", "is not an absolute path"), (folder + "/../x", "okid", "is not an absolute path")] {
            let server = TestNSMServer()
            let recorder = try AQJackCommand.start(["record", "take.wav"], standardOutput: URL(fileURLWithPath: folder + "/out"),
                                                   standardError: URL(fileURLWithPath: folder + "/err"), environment: ["NSM_URL": server.url])
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let announce = try #require(server.receive(), "no announce")
            #expect(announce.address == "/nsm/server/announce")
            server.send(OSCMessage(address: "/nsm/client/open", arguments: [.string(path), .string("aqjack record"), .string(id)]))
            let exit = recorder.exitStatus(within: 20)
            let errors = (try? String(contentsOfFile: folder + "/err", encoding: .utf8)) ?? ""
            #expect(exit == .exited(1) && errors.contains(expected), "\(path) \(id): \(exit) \(errors)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["err", "out"])
        }
    }
}

extension JackServerSuite {
    @Suite("NSM as nsmd and liblo write NSM_URL, and strangers")
    struct NSMNetworkTests {
        /// Runs `aqjack record -d 1` under `server`, with a stranger sending an open (a folder of
        /// its own choosing) before the server's and a save after it; returns what to check.
        func recordUnder(_ server: TestNSMServer, folder: String) throws -> (exit: ChildExit, errors: String, reply: OSCMessage?, sockets: [String],
                                                                           strangerHeard: Bool, summary: RecordSummary?) {
            let output = folder + "/rec.json", errorPath = folder + "/rec.err"
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-c", "1", "-d", "1", "take.wav"],
                                                   standardOutput: URL(fileURLWithPath: output), standardError: URL(fileURLWithPath: errorPath),
                                                   environment: ["NSM_URL": server.url])
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let announce = try #require(server.receive(), "no announce")
            #expect(announce.address == "/nsm/server/announce")
            // A stranger on this machine, same family, another port: its open must be ignored.
            let stranger = Glibc.socket(Int32(server.client.ss_family), Int32(SOCK_DGRAM.rawValue), 0)
            defer { close(stranger) }
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(stranger, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            TestNSMServer.send(OSCMessage(address: "/nsm/client/open", arguments: [.string(folder + "/stranger"), .string("x"), .string("strangerid")]),
                               from: stranger, to: server.client)
            usleep(200_000)
            let clientID = TestServer.uniqueClientName("nsmnet")
            server.send(OSCMessage(address: "/reply", arguments: [.string("/nsm/server/announce"), .string("welcome"), .string("test-nsm"), .string("")]))
            server.send(OSCMessage(address: "/nsm/client/open", arguments: [.string(folder + "/session"), .string("aqjack record"), .string(clientID)]))
            let reply = server.receiveSkippingNotes()
            let sockets = try udpSocketAddresses(of: recorder.processIdentifier)
            TestNSMServer.send(OSCMessage(address: "/nsm/client/save"), from: stranger, to: server.client)
            var buffer = [UInt8](repeating: 0, count: 1024)
            let heard = recv(stranger, &buffer, buffer.count, 0) > 0
            let exit = recorder.exitStatus(within: 30)
            let summary = try? JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: output)))
            return (exit, (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "", reply, sockets, heard, summary)
        }

        @Test("NSM_URL osc.udp://$(hostname):PORT/ (server on every interface, as nsmd) and osc.udp://[::1]:PORT/: the session opens, the client's socket is on loopback, a stranger's open and save are ignored and reported once")
        func hostNameAndIPv6() throws {
            var name = [CChar](repeating: 0, count: 256)
            gethostname(&name, name.count)
            let hostName = String(cString: name)
            for (address, urlHost, loopback) in [("0.0.0.0", hostName, "127."), ("::1", "[::1]", "[::1]")] {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-nsmnet-\(getpid())").path
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(atPath: folder) }
                let result = try recordUnder(TestNSMServer(address: address, urlHost: urlHost), folder: folder)
                #expect(result.reply?.address == "/reply" && result.reply?.arguments.first == .string("/nsm/client/open"), "\(urlHost): \(String(describing: result.reply)) \(result.errors)")
                #expect(!result.sockets.isEmpty && result.sockets.allSatisfy { $0.hasPrefix(loopback) }, "\(urlHost): sockets \(result.sockets)")
                #expect(!result.strangerHeard, "\(urlHost): the stranger's save was answered")
                #expect(result.errors.components(separatedBy: "ignored an OSC message from").count == 2, "\(urlHost): \(result.errors)")
                #expect(result.exit == .exited(0), "\(urlHost): \(result.exit) \(result.errors)")
                #expect(result.summary?.files == [folder + "/session/take.wav"], "\(urlHost): \(String(describing: result.summary?.files))")
                #expect(!FileManager.default.fileExists(atPath: folder + "/stranger"))
            }
        }
    }
}
