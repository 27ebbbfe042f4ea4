import AQControl
import AQServerSuite
import AQTestSupport
import Foundation
import Glibc
import Testing

@Suite("OSC messages (no server needed)")
struct OSCMessageTests {
    @Test("the OSC 1.0 specification's example, /oscillator/4/frequency ,f 440.0, encodes to its 32 bytes and decodes back")
    func specificationExample() throws {
        let bytes: [UInt8] = Array("/oscillator/4/frequency".utf8) + [0, 0x2C, 0x66, 0, 0, 0x43, 0xDC, 0, 0]
        let message = OSCMessage(address: "/oscillator/4/frequency", arguments: [.float32(440)])
        #expect(message.encoded == bytes)
        #expect(try OSCMessage(decoding: bytes) == message)
        let mixed = OSCMessage(address: "/aqjack/status", arguments: [.string("recording"), .int32(-7), .blob([1, 2, 3, 4, 5]), .float32(-3.5)])
        #expect(try OSCMessage(decoding: mixed.encoded) == mixed)
        #expect(mixed.encoded.count % 4 == 0)
    }

    @Test("malformed datagrams get an error naming what is wrong, never a trap: no leading '/', a bundle, an unpadded string, a missing argument, an unknown type tag, an oversized blob")
    func malformed() {
        func message(_ bytes: [UInt8]) -> String {
            do { _ = try OSCMessage(decoding: bytes); return "decoded" } catch { return error.message }
        }
        #expect(message(Array("aqjack\0\0".utf8)).contains("starts with '/'"))
        #expect(message(Array("#bundle\0".utf8)).contains("bundles are not taken"))
        #expect(message(Array("/a".utf8)).contains("not a NUL-terminated"))
        #expect(message(Array("/abc\0".utf8)).contains("not padded"))
        #expect(message(Array("/a\0\0,i\0\0".utf8)).contains("ends before an int32"))
        #expect(message(Array("/a\0\0,x\0\0".utf8)).contains("type tag 'x' is not taken"))
        #expect(message(Array("/a\0\0,b\0\0".utf8) + [0x7F, 0xFF, 0xFF, 0xFF]).contains("does not fit"))
        #expect(message([]).contains("not a NUL-terminated"))
    }
}

extension JackServerSuite {
    @Suite("aqjack record --osc")
    struct RecordOSCTests {
        /// A UDP socket on 127.0.0.1 that sends OSC messages to `port` and reads the replies.
        final class OSCClient {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var target = sockaddr_in()

            init(port: Int) {
                target.sin_family = sa_family_t(AF_INET)
                target.sin_port = in_port_t(UInt16(port).bigEndian)
                inet_pton(AF_INET, "127.0.0.1", &target.sin_addr)
                var timeout = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            }

            deinit { close(socket) }

            /// Sends `address` and returns the reply (nil after 2 s without one).
            func send(_ address: String) -> OSCMessage? { send(OSCMessage(address: address)) }

            /// Sends `message` and returns the reply (nil after 2 s without one).
            func send(_ message: OSCMessage) -> OSCMessage? {
                post(message)
                return next()
            }

            /// Sends `message`.
            func post(_ message: OSCMessage) {
                let bytes = message.encoded
                _ = bytes.withUnsafeBytes { data in
                    withUnsafePointer(to: &target) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket, data.baseAddress, data.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                    }
                }
            }

            /// The next message received (nil after 2 s without one).
            func next() -> OSCMessage? {
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                return count > 0 ? try? OSCMessage(decoding: Array(buffer[0 ..< count])) : nil
            }
        }

        /// The UDP port a recorder started with `--osc 0` bound, from its note on standard error
        /// (the file `errorPath`), waiting up to 10 s for it; nil when none came.
        static func notedPort(in errorPath: String) -> Int? {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
                if let range = text.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                    return Int(text[range].split(separator: ":")[1])
                }
                usleep(20_000)
            }
            return nil
        }

        @Test("--osc 0: /aqjack/start, /split, /status (state, frames, file, lost, xruns, a peak per channel), /stop, /quit: two takes, the second's first frame the frame after the first's last, every sample the generator's; each command answered")
        func controlledByOSC() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("oscgen"), channelCount: 2)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-osc-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let name = TestServer.uniqueClientName("oscrec")
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-p", "\(generator.client.name):out_*", "--osc", "0",
                                                    "--name", name, folder + "/take.wav"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: folder + "/rec.err"))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let client = OSCClient(port: try #require(Self.notedPort(in: folder + "/rec.err"), "no OSC port noted"))
            usleep(200_000)
            #expect(client.send("/aqjack/start")?.arguments == [.string("/aqjack/start"), .string("ok")])
            usleep(500_000)
            #expect(client.send("/aqjack/split")?.arguments == [.string("/aqjack/split"), .string("ok")])
            usleep(500_000)
            let status = try #require(client.send("/aqjack/status"))
            #expect(status.address == "/aqjack/status" && status.arguments.count == 7, "\(status)")
            #expect(status.arguments.first == .string("recording") && status.arguments[2] == .string(folder + "/take-002.wav"), "\(status)")
            #expect(client.send("/aqjack/bogus")?.arguments.last.map { "\($0)".contains("unknown address") } == true)
            #expect(client.send("/aqjack/stop")?.arguments == [.string("/aqjack/stop"), .string("ok")])
            usleep(200_000)
            #expect(client.send("/aqjack/quit")?.arguments == [.string("/aqjack/quit"), .string("ok")])
            let recorderExit = recorder.exitStatus()
            #expect(recorderExit.status == 0, "\((try? String(contentsOfFile: folder + "/rec.err", encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/rec.json")))
            let takes = [folder + "/take-001.wav", folder + "/take-002.wav"]
            try #require(summary.files == takes, "files \(summary.files)")
            let first = try SoundFileContents(path: takes[0]), second = try SoundFileContents(path: takes[1])
            #expect(first.frames > 12_000 && second.frames > 12_000)
            // Sample continuous across the split.
            #expect(second.timeReference == first.timeReference.map { $0 + Int64(first.frames) }, "TimeReferences \(String(describing: first.timeReference)) + \(first.frames) vs \(String(describing: second.timeReference))")
            for take in [first, second] {
                let check = verifyFloatRecording(take, channels: 2)
                #expect(check.wrong <= summary.xruns * 128 * 2 && Int64(check.silent) <= summary.lostFrames, "\(check)")
            }
        }

        @Test("--trigger -40 --hold 1 with --osc 0 on silent inputs: /aqjack/start starts a take that the hold ends after exactly 48000 frames (as if the frame before it were loud); a second /start, then /stop, ends one shorter; /status says waiting or recording; each answered")
        func triggerWithOSC() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-trigosc-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // The dummy backend's capture ports: silence, never at the level.
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-p", "system:capture_*", "-c", "2", "--trigger", "-40",
                                                    "--hold", "1", "--osc", "0", "--name", TestServer.uniqueClientName("trigosc"),
                                                    folder + "/take.wav"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: folder + "/rec.err"))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL); _ = recorder.exitStatus(within: 10) } }
            let client = OSCClient(port: try #require(Self.notedPort(in: folder + "/rec.err"),
                                                      "no OSC port noted: \((try? String(contentsOfFile: folder + "/rec.err", encoding: .utf8)) ?? "")"))
            usleep(300_000)
            #expect(client.send("/aqjack/status")?.arguments.first == .string("waiting"))
            #expect(client.send("/aqjack/start")?.arguments == [.string("/aqjack/start"), .string("ok")])
            // Requests apply at the next 0.1 s buffer the queue delivers, and buffers may come late
            // and together: the checks leave the hold (1 s) a wide margin either way.
            usleep(300_000)
            #expect(client.send("/aqjack/status")?.arguments.first == .string("recording"))
            // The hold ends the take by itself; the level never starts another.
            usleep(2_500_000)
            #expect(client.send("/aqjack/status")?.arguments.first == .string("waiting"))
            #expect(client.send("/aqjack/start")?.arguments == [.string("/aqjack/start"), .string("ok")])
            usleep(300_000)
            #expect(client.send("/aqjack/stop")?.arguments == [.string("/aqjack/stop"), .string("ok")])
            usleep(300_000)
            #expect(client.send("/aqjack/quit")?.arguments == [.string("/aqjack/quit"), .string("ok")])
            #expect(recorder.exitStatus().status == 0, "\((try? String(contentsOfFile: folder + "/rec.err", encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(RecordSummary.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/rec.json")))
            let takes = [folder + "/take-001.wav", folder + "/take-002.wav"]
            try #require(summary.files == takes, "files \(summary.files)")
            let first = try SoundFileContents(path: takes[0]), second = try SoundFileContents(path: takes[1])
            print("--trigger with --osc: takes of \(first.frames) and \(second.frames) frames")
            #expect(first.frames == 48_000, "a take started on command lasts the hold on silence")
            #expect(second.frames > 0 && second.frames < 48_000, "/stop ends the take before its hold")
            #expect(first.samples.allSatisfy { $0 == 0 } && second.samples.allSatisfy { $0 == 0 })
            let firstStart = try #require(first.timeReference), secondStart = try #require(second.timeReference)
            #expect(secondStart >= firstStart + 48_000)
        }
    }
}
