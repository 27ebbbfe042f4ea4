import AQControl
import AQServerSuite
import AQTestSupport
import Foundation
import Glibc
import Testing

extension JackServerSuite {
    /// `aqjack host --osc PORT`: the control socket's verbs as OSC messages.
    @Suite("aqjack host --osc: the graph's verbs over OSC")
    struct HostOSCTests {
        typealias OSCClient = RecordOSCTests.OSCClient

        /// An OSC client that keeps the messages sent unasked (monitor, learned) apart from replies.
        final class Surface {
            let client: OSCClient
            var unasked: [OSCMessage] = []
            init(port: Int) { client = OSCClient(port: port) }

            /// The reply line of an `/aqjack/reply ,ss ADDRESS LINE` to the message, or what came instead.
            func line(_ address: String, _ arguments: [OSCMessage.Argument] = []) -> String {
                client.post(OSCMessage(address: address, arguments: arguments))
                while let reply = client.next() {
                    if reply.address == "/aqjack/monitor" || reply.address == "/aqjack/learned" {
                        unasked.append(reply)
                        continue
                    }
                    guard reply.address == "/aqjack/reply", reply.arguments.count == 2, reply.arguments[0] == .string(address),
                          case .string(let line) = reply.arguments[1] else { return "(other: \(reply))" }
                    return line
                }
                return "(no reply)"
            }

            /// The first unasked message at `address` within `seconds`, taken off the list.
            func await(_ address: String, seconds: Double) -> OSCMessage? {
                let deadline = Date().addingTimeInterval(seconds)
                while true {
                    if let index = unasked.firstIndex(where: { $0.address == address }) { return unasked.remove(at: index) }
                    guard Date() < deadline else { return nil }
                    if let message = client.next() { unasked.append(message) }
                }
            }
        }

        @Test("a graph built and set over OSC (add, connect, set ,ssf; get replies 'ok 6.0'): every recorded sample is the generator's × powf(10, 0.3), exactly; monitor sends /aqjack/monitor ,ssf with the value at once and on each change (the limiter's ingain: 0, then 3 once set); midi-learn sends /aqjack/learned ,ssiiff for the next controller; an unknown verb, control or argument type gets the socket's error codes; a non-loopback --osc-host without a token exits 2")
        func verbsOverOSC() throws {
            let refused = try AQJackCommand.run(["host", "--channels", "1", "--osc", "0", "--osc-host", "0.0.0.0"])
            #expect(refused.status == 2 && refused.standardError.contains("--osc-host 0.0.0.0 listens beyond this machine"), "\(refused.standardError)")

            let generator = try GeneratorClient(name: TestServer.uniqueClientName("oscgen"), channelCount: 1)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "oscrec")
            let learnAt = UInt64(generator.client.estimatedFrameTime) + 144_000   // 3 s: the graph is built and checked before it
            let controller = try MIDINoteClient(name: TestServer.uniqueClientName("osccc"), messages: [(learnAt, [0xB2, 74, 64])])
            let name = TestServer.uniqueClientName("hostosc")
            let (host, out, err) = try HostCommandTests.startHost(["--osc", "0", "--channels", "1", "-i", controller.portName,
                                                                   "-i", "\(generator.client.name):out_1", "-o", "\(recorder.driver.name):in_1"],
                                                                  name: name, expectPort: "out_1")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let port = try #require(RecordOSCTests.notedPort(in: err.path), "no OSC port noted")
            let surface = Surface(port: port)
            #expect(surface.line("/aqjack/add", [.string(PluginConvertTests.amp), .string("amp")]) == "ok amp")
            #expect(surface.line("/aqjack/set", [.string("amp"), .string("gain"), .float32(6)]) == "ok")
            #expect(surface.line("/aqjack/get", [.string("amp"), .string("gain")]) == "ok 6.0")
            for (source, destination) in [("in_1", "amp:input"), ("amp:output", "out_1")] {
                #expect(surface.line("/aqjack/connect", [.string(source), .string(destination)]) == "ok")
            }
            // The limiter beside the path (its outputs unconnected): its input gain monitored, then set.
            #expect(surface.line("/aqjack/add", [.string(PluginConvertTests.limiter), .string("lim")]) == "ok lim")
            #expect(surface.line("/aqjack/connect", [.string("in_1"), .string("lim:in_1")]) == "ok")
            #expect(surface.line("/aqjack/monitor", [.string("lim"), .string("ingain"), .string("on")]) == "ok")
            #expect(surface.await("/aqjack/monitor", seconds: 2)?.arguments == [.string("lim"), .string("ingain"), .float32(0)])
            #expect(surface.line("/aqjack/set", [.string("lim"), .string("ingain"), .int32(3)]) == "ok")
            #expect(surface.await("/aqjack/monitor", seconds: 2)?.arguments == [.string("lim"), .string("ingain"), .float32(3)])
            #expect(surface.line("/aqjack/monitor", [.string("lim"), .string("ingain"), .string("off")]) == "ok")
            // Unknown verb, node and control, a blob, an address outside /aqjack/.
            #expect(surface.line("/aqjack/nope").hasPrefix("error syntax unknown command 'nope'"))
            #expect(surface.line("/aqjack/set", [.string("amp"), .string("nosuch"), .float32(1)]).hasPrefix("error not-found"))
            #expect(surface.line("/aqjack/set", [.string("amp"), .string("gain"), .blob([1])]).hasPrefix("error syntax a blob"))
            #expect(surface.line("/other").hasPrefix("error syntax"))
            // MIDI learn: the controller at learnAt (channel 3, CC 74) maps to amp's gain.
            #expect(UInt64(generator.client.estimatedFrameTime) < learnAt, "the learn was asked too late")
            #expect(surface.line("/aqjack/midi-learn", [.string("amp"), .string("gain")]) == "ok")
            let learned = surface.await("/aqjack/learned", seconds: 10)
            #expect(learned?.arguments == [.string("amp"), .string("gain"), .int32(3), .int32(74), .float32(-70), .float32(70)], "\(String(describing: learned))")
            #expect(surface.line("/aqjack/list").hasSuffix("midi=1 amp:gain@3/74"))
            let (hostExit, errors) = HostCommandTests.stopHost(host, err: err, recorder: recorder)
            #expect(hostExit.status == 0, "\(errors)")
            // Recorded before the learn's controller (mapped after it came, it is not applied).
            HostCommandTests.expectGained(log, by: powf(10, 6.0 / 20), generator: generator)
        }
    }
}
