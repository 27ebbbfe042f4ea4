import AQControl
import AQServerSuite
import AQTestSupport
import Foundation
import Glibc
import Testing

/// A small NSM server (API 1.1.2, the part a client meets): receives the announce, answers it,
/// sends /nsm/client/open and /nsm/client/save, and reads the client's replies. Debian has no
/// nsmd; this speaks the documented protocol as nsmd, RaySession and Agordejo do.
final class TestNSMServer {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    /// The client's address, from its announce.
    var client = sockaddr_in()

    init() {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(socket) }

    /// `osc.udp://127.0.0.1:PORT/`, for NSM_URL.
    var url: String {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return "osc.udp://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/"
    }

    /// The next message (10 s at most); remembers who sent it.
    func receive() -> OSCMessage? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
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
        let bytes = message.encoded
        _ = bytes.withUnsafeBytes { data in
            withUnsafePointer(to: &client) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket, data.baseAddress, data.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
    }
}

extension JackServerSuite {
    @Suite("aqjack record under NSM")
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
            let announce = try #require(server.receive(), "no announce")
            #expect(announce.address == "/nsm/server/announce")
            #expect(announce.arguments == [.string("aqjack record"), .string(":message:"), .string("aqjack"), .int32(1), .int32(2), .int32(recorder.processIdentifier)])
            server.send(OSCMessage(address: "/reply", arguments: [.string("/nsm/server/announce"), .string("welcome"), .string("test-nsm"), .string(":server-control:")]))
            let clientID = TestServer.uniqueClientName("nsmrec")
            let sessionPath = folder + "/session/aqjack.\(clientID)"
            server.send(OSCMessage(address: "/nsm/client/open", arguments: [.string(sessionPath), .string("aqjack record"), .string(clientID)]))
            let opened = try #require(server.receiveSkippingNotes(), "no reply to the open")
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

        @Test("an NSM_URL that is not an OSC URL: exit 1 with a message naming it")
        func badSession() throws {
            let bad = try AQJackCommand.run(["record", temporaryPath("nsm.wav")], environment: ["NSM_URL": "http://example/"])
            #expect(bad.status == 1 && bad.standardError.contains("is not an OSC URL"), "\(bad.standardError)")
        }
    }
}
