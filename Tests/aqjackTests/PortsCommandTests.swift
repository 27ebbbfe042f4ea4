import AQCore
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    /// `aqjack --ports` against the test server, with other clients' ports in the graph.
    @Suite("aqjack --ports on the test server", .serialized)
    struct PortsCommandTests {
        struct Listing: Decodable {
            struct Port: Decodable {
                struct Latency: Decodable {
                    struct Range: Decodable { let min: Int; let max: Int }
                    let capture: Range
                    let playback: Range
                }
                let name: String, client: String, shortName: String, type: String, direction: String
                let physical: Bool, terminal: Bool, canMonitor: Bool
                let aliases: [String], connections: [String]
                let latency: Latency
                let prettyName: String?
                let uuid: String
            }
            let schema: String, server: String, sampleRate: Int, bufferSize: Int
            let ports: [Port]
        }

        @Test("--json lists a third-party client's ports with their connections (jack_simple_client)")
        func thirdPartyClient() throws {
            let simple = Process()
            simple.executableURL = URL(fileURLWithPath: "/usr/bin/jack_simple_client")
            simple.standardOutput = FileHandle.nullDevice
            simple.standardError = FileHandle.nullDevice
            try simple.run()
            // SIGKILL: jack_simple_client closes its client inside its SIGTERM handler, which can hang.
            defer { kill(simple.processIdentifier, SIGKILL); _ = simple.exitStatus() }

            // jack_simple_client registers output1/output2 and connects them to the playback ports.
            var listing: Listing?
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline {
                let result = try AQJackCommand.run(["--ports", "--json", "jack_simple_client"])
                #expect(result.status == 0, "\(result.standardError)")
                let decoded = try JSONDecoder().decode(Listing.self, from: Data(result.standardOutput.utf8))
                if decoded.ports.count == 2 && decoded.ports.allSatisfy({ !$0.connections.isEmpty }) {
                    listing = decoded
                    break
                }
                usleep(50_000)
            }
            let found = try #require(listing, "jack_simple_client's connected ports never appeared")
            #expect(found.schema == "aqjack.ports/1")
            #expect(found.server == TestServer.name)
            #expect(found.sampleRate == 48000 && found.bufferSize == 128)
            #expect(found.ports.map(\.name) == ["jack_simple_client:output1", "jack_simple_client:output2"])
            #expect(found.ports[0].connections == ["system:playback_1"])
            #expect(found.ports[1].connections == ["system:playback_2"])
            #expect(found.ports.allSatisfy { $0.direction == "output" && !$0.physical && $0.type == "32 bit float mono audio" })
            #expect(found.ports[0].client == "jack_simple_client" && found.ports[0].shortName == "output1")
        }

        @Test("the listing shows direction, flags, latency, pretty-names and connections of our own clients")
        func ownClients() throws {
            let pair = try GeneratorCapturePair(role: "cli", channelCount: 2, capacityFrames: 4096)
            let (generator, capture) = (pair.generator, pair.capture)
            try capture.client.setPrettyName("Vocal mic", ofPort: capture.ports[1].name)

            let result = try AQJackCommand.run(["--ports", "--json"])
            #expect(result.status == 0)
            let listing = try JSONDecoder().decode(Listing.self, from: Data(result.standardOutput.utf8))
            let input = try #require(listing.ports.first { $0.name == capture.ports[1].name })
            #expect(input.direction == "input")
            #expect(input.connections == [generator.portNames[1]])
            #expect(input.prettyName == "Vocal mic")
            let system = try #require(listing.ports.first { $0.name == "system:capture_1" })
            #expect(system.physical && system.terminal && system.direction == "output")
            #expect(system.latency.capture.min == 128 && system.latency.capture.max == 128)
            let playback = try #require(listing.ports.first { $0.name == "system:playback_1" })
            #expect(playback.latency.playback.min == 256)   // dummy backend: two periods
            #expect(playback.aliases == ["dummy_pcm:dummy:in1"])

            // The pattern searches pretty-names and aliases too; --input/--output filter direction.
            let byPrettyName = try AQJackCommand.run(["--ports", "Vocal"])
            #expect(byPrettyName.standardOutput.split(separator: "\n").first.map(String.init) == capture.ports[1].name)
            #expect(byPrettyName.standardOutput.contains("pretty-name: Vocal mic"))
            #expect(byPrettyName.standardOutput.contains("<- \(generator.portNames[1])"))
            let byAlias = try AQJackCommand.run(["ports", "--json", "dummy:in2$"])
            let aliasListing = try JSONDecoder().decode(Listing.self, from: Data(byAlias.standardOutput.utf8))
            #expect(aliasListing.ports.map(\.name) == ["system:playback_2"])
            let physicalOutputs = try AQJackCommand.run(["--ports", "--json", "--physical", "--output"])
            let physical = try JSONDecoder().decode(Listing.self, from: Data(physicalOutputs.standardOutput.utf8))
            #expect(physical.ports.map(\.name) == ["system:capture_1", "system:capture_2"])
            _ = generator
        }
    }
}
