import AQControl
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Glibc
import Testing

// The defects of the second hostile campaign (issue "Hardening II") that need no stream input:
// each test is named after its defect's number there.

@Suite("Hardening II: names, options and messages (no server needed)")
struct HardeningIICommandLineTests {
    @Test("defect08ServerNameLength: --server or JACK_DEFAULT_SERVER of 300 bytes and --name of 300 bytes are refused naming the limit; libjack never aborts")
    func serverNameLength() throws {
        let long = String(repeating: "s", count: 300)
        let flag = try AQJackCommand.run(["--server", long, "--ports"])
        #expect(flag.status == 2 && flag.standardError.contains("expected a JACK server name of 1 ... 64"), "\(flag.status) \(flag.standardError)")
        let environment = try AQJackCommand.run(["--ports"], environment: ["JACK_DEFAULT_SERVER": long])
        #expect(environment.status == 1 && environment.standardError.contains("is 300 bytes: expected 1 ... 64"), "\(environment.status) \(environment.standardError)")
        let name = try AQJackCommand.run(["--name", long, "--ports"])
        #expect(name.status == 2 && name.standardError.contains("bytes without ':'"), "\(name.status) \(name.standardError)")
    }

    @Test("defect06OSCNeedsTokenBeyondLoopback: --osc-host 0.0.0.0 without --osc-token, --osc-token without --osc, and an empty token exit 2 naming them")
    func oscTokenRequired() throws {
        let open = try AQJackCommand.run(["record", "--osc", "9000", "--osc-host", "0.0.0.0", temporaryPath("osc.wav")])
        #expect(open.status == 2 && open.standardError.contains("give --osc-token TOKEN"), "\(open.standardError)")
        let lone = try AQJackCommand.run(["record", "--osc-token", "x", temporaryPath("osc.wav")])
        #expect(lone.status == 2 && lone.standardError.contains("give --osc PORT too"), "\(lone.standardError)")
        let empty = try AQJackCommand.run(["record", "--osc", "9000", "--osc-token", "", temporaryPath("osc.wav")])
        #expect(empty.status == 2 && empty.standardError.contains("non-empty secret"), "\(empty.standardError)")
        #expect(!FileManager.default.fileExists(atPath: temporaryPath("osc.wav")))
    }

    @Test("defect08SplitAtLeastOneBuffer: --split under 0.1 s exits 2 with the range")
    func splitMinimum() throws {
        let short = try AQJackCommand.run(["record", "--split", "0.01", "-d", "1", temporaryPath("split.wav")])
        #expect(short.status == 2 && short.standardError.contains("from 0.1"), "\(short.standardError)")
    }

    @Test("defect09ControlBytesEscaped: a file name with ESC, BEL and CR is shown with \\x escapes on the console, never raw")
    func controlBytesEscaped() throws {
        let name = temporaryPath("bad\u{1B}[31m\u{07}\rname.wav")
        let result = try AQJackCommand.run(["info", name])
        #expect(result.status == 1)
        #expect(!result.standardError.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(result.standardError.debugDescription)")
        #expect(result.standardError.contains("\\x1b[31m\\x07\\x0dname.wav"), "\(result.standardError.debugDescription)")
    }

    @Test("defect09OSCErrorWording: a message ending inside a string argument says 'the string argument'")
    func oscErrorWording() throws {
        var bytes = OSCMessage(address: "/a", arguments: [.string("abcdefgh")]).encoded
        bytes.removeLast(4)
        #expect(throws: OSCMessage.DecodingError.self) { try OSCMessage(decoding: bytes) }
        do { _ = try OSCMessage(decoding: bytes) } catch { #expect(error.message.contains("the string argument"), "\(error.message)") }
    }

    @Test("defect09LilvMessagesPrefixed: a bundle whose Turtle does not parse is reported in lines that all start 'aqjack: ' (lilv and serd wrote their own)")
    func lilvMessagesPrefixed() throws {
        let folder = temporaryPath("badlv2")
        try FileManager.default.createDirectory(atPath: folder + "/bad.lv2", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "@prefix lv2: <http://lv2plug.in/ns/lv2core#> .\n<urn:x> a lv2:Plugin ;;; garbage <\n".write(toFile: folder + "/bad.lv2/manifest.ttl", atomically: true, encoding: .utf8)
        let result = try AQJackCommand.run(["plugins", "amp"], environment: ["LV2_PATH": folder + ":/usr/lib/lv2"])
        let lines = result.standardError.split(separator: "\n")
        #expect(result.status == 0 && !lines.isEmpty && lines.allSatisfy { $0.hasPrefix("aqjack: ") }, "\(result.standardError)")
        #expect(result.standardError.contains("manifest.ttl"))
    }

    @Test("defect09ConvertNamesFiles: converting a 64384 Hz or 9-channel WAV to M4A names both files and says 'sample rate' and 'channel count', not mSampleRate")
    func convertNamesFiles() throws {
        for (rate, channels, words) in [(64384, 1, "the sample rate is 64384 Hz"), (44100, 9, "the channel count is 9")] {
            let input = temporaryPath("odd-\(rate)-\(channels).wav"), output = temporaryPath("odd-\(rate)-\(channels).m4a")
            defer { try? FileManager.default.removeItem(atPath: input) }
            let sox = try AQJackCommand.runProgram("/usr/bin/sox", ["-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", input, "synth", "0.1", "sine", "440"])
            #expect(sox.status == 0)
            let result = try AQJackCommand.run(["convert", input, output])
            #expect(result.status == 1 && result.standardError.contains("cannot convert '\(input)' to '\(output)': \(words)"), "\(result.standardError)")
            #expect(!result.standardError.contains("mSampleRate") && !result.standardError.contains("mChannelsPerFrame"))
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    @Test("defect09HelpNamesTheResampler: record's help says -r resamples with soxr by default")
    func helpResampler() throws {
        let help = try AQJackCommand.run(["--help"])
        #expect(help.standardOutput.contains("resamples (soxr; --resampler libsamplerate)"))
        #expect(!help.standardOutput.contains("resamples (libsamplerate)"))
    }
}

extension JackServerSuite {
    @Suite("Hardening II: resources and OSC on the private server")
    struct HardeningIIServerTests {
        @Test("defect08PreRollAndSplitSize: --pre-roll 600 at 2040 channels and --split-size 1 exit 2 naming the memory or the frame size, no file, no allocation")
        func preRollAndSplitSize() throws {
            let preRoll = try AQJackCommand.run(["record", "-c", "2040", "--armed", "--pre-roll", "600", "--no-meter", temporaryPath("preroll.wav")])
            #expect(preRoll.status == 2 && preRoll.standardError.contains("expected at most 1024 MiB"), "\(preRoll.status) \(preRoll.standardError)")
            let split = try AQJackCommand.run(["record", "-c", "2", "-d", "0.2", "--split-size", "1", "--no-meter", temporaryPath("tiny.wav")])
            #expect(split.status == 2 && split.standardError.contains("less than 0.1 s"), "\(split.status) \(split.standardError)")
            #expect(!FileManager.default.fileExists(atPath: temporaryPath("tiny-001.wav")) && !FileManager.default.fileExists(atPath: temporaryPath("preroll-001.wav")))
        }

        @Test("defect08RingThatCannotBeMapped: record -c 2040 under ulimit -v 800000 and 400000 exits 1 naming the ring and the reason, within 20 s")
        func unmappableRing() throws {
            for limit in [800_000, 400_000] {
                let output = temporaryPath("ulimit-\(limit).wav")
                let started = Date()
                let result = try AQJackCommand.runShell("ulimit -v \(limit); exec \"$AQJACK\" record -c 2040 -d 2 --no-meter \(output)")
                #expect(result.status == 1 && result.standardError.contains("the capture ring for 2040 channels cannot map"),
                        "ulimit -v \(limit): \(result.status) \(result.standardError)")
                #expect(Date().timeIntervalSince(started) < 20)
            }
        }

        /// Sends `message` to `port` on 127.0.0.1 without waiting for a reply.
        static func post(_ message: OSCMessage, to port: Int, from socket: Int32) {
            var target = sockaddr_in()
            target.sin_family = sa_family_t(AF_INET)
            target.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, "127.0.0.1", &target.sin_addr)
            let bytes = message.encoded
            _ = bytes.withUnsafeBytes { data in
                withUnsafePointer(to: &target) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket, data.baseAddress, data.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            }
        }

        @Test("defect06OSCObeysOnlyItsOwn: with --osc-token only messages carrying it are obeyed (others get no reply); a flood of 5,000 splits makes at most one file a 0.1 s buffer, none empty; without a token another user's socket is ignored and reported once")
        func oscObeysOnlyItsOwn() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-oscown-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let errors = folder + "/rec.err"
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-c", "1", "--osc", "0", "--osc-token", "s3cret", folder + "/take.wav"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: errors))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let port = try #require(RecordOSCTests.notedPort(in: errors), "no OSC port noted")
            let client = RecordOSCTests.OSCClient(port: port)
            #expect(client.send("/aqjack/status") == nil, "answered without the token")
            let status = client.send(OSCMessage(address: "/aqjack/status", arguments: [.string("s3cret")]))
            #expect(status?.address == "/aqjack/status", "\(String(describing: status))")
            let started = Date()
            Self.post(OSCMessage(address: "/aqjack/start", arguments: [.string("s3cret")]), to: port, from: client.socket)
            for _ in 0 ..< 5000 { Self.post(OSCMessage(address: "/aqjack/split", arguments: [.string("s3cret")]), to: port, from: client.socket) }
            usleep(300_000)
            Self.post(OSCMessage(address: "/aqjack/stop", arguments: [.string("s3cret")]), to: port, from: client.socket)
            usleep(300_000)
            let elapsed = Date().timeIntervalSince(started)
            Self.post(OSCMessage(address: "/aqjack/quit", arguments: [.string("s3cret")]), to: port, from: client.socket)
            let exit = recorder.exitStatus(within: 30)
            let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            #expect(exit == .exited(0), "\(exit) \(text)")
            let takes = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("take-") }
            #expect(!takes.isEmpty && Double(takes.count) <= elapsed / 0.1 + 3, "\(takes.count) files in \(elapsed) s")
            for take in takes { #expect(try SoundFileContents(path: folder + "/" + take).frames > 0, "\(take) is empty") }
            #expect(text.components(separatedBy: "--osc ignored").count == 2, "\(text)")
        }

        @Test("defect06OSCOtherUser: without a token, /aqjack/start from user nobody's socket is ignored (no take, no reply) and reported once; this user's is obeyed")
        func oscOtherUser() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-oscuser-\(getpid())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let errors = folder + "/rec.err"
            let recorder = try AQJackCommand.start(["record", "--json", "--no-meter", "-c", "1", "--osc", "0", folder + "/take.wav"],
                                                   standardOutput: URL(fileURLWithPath: folder + "/rec.json"), standardError: URL(fileURLWithPath: errors))
            defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
            let port = try #require(RecordOSCTests.notedPort(in: errors), "no OSC port noted")
            // Another user's socket (nobody), as another login on the machine would send.
            let script = "import socket,struct;s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.settimeout(1);"
                + "s.sendto(b'/aqjack/start\\0\\0\\0,\\0\\0\\0',('127.0.0.1',\(port)));"
                + "s.sendto(b'/aqjack/start\\0\\0\\0,\\0\\0\\0',('127.0.0.1',\(port)))\ntry:\n s.recv(100);print('answered')\nexcept Exception:\n print('silent')"
            let stranger = try AQJackCommand.runProgram("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script])
            #expect(stranger.standardOutput.contains("silent"), "\(stranger.standardOutput) \(stranger.standardError)")
            usleep(300_000)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("take-") }.isEmpty)
            let client = RecordOSCTests.OSCClient(port: port)
            #expect(client.send("/aqjack/start")?.arguments.last == .string("ok"))
            usleep(300_000)
            #expect(client.send("/aqjack/quit")?.arguments.last == .string("ok"))
            let exit = recorder.exitStatus(within: 30)
            let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            #expect(exit == .exited(0), "\(exit) \(text)")
            #expect(text.components(separatedBy: "a socket of another user").count == 2, "\(text)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("take-") }.count == 1)
        }
    }
}
