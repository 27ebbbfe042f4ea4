import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("aqjack demo")
    struct DemoCommandTests {
        @Test("on the running server: plays, records back, writes the WAV, checks it, reports meters", arguments: [false, true])
        func demo(withoutServer: Bool) throws {
            let path = temporaryPath("demo-\(withoutServer).wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            // With no server of that name, the demo starts a private dummy one and says so.
            let server = withoutServer ? "aqjack-absent-\(getpid())" : TestServer.name
            let result = try AQJackCommand.run(["demo", "-d", "1", path, "--server", server,
                                                "--name", TestServer.uniqueClientName("demo")])
            #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
            #expect(result.standardOutput.contains("check: OK"))
            #expect(result.standardOutput.contains("ch1 peak -6.0 dBFS, RMS -9.0 dBFS"))
            #expect(result.standardError.contains("starting a private one") == withoutServer)
            let file = try SoundFileContents(path: path)
            #expect(file.frames == 48000 && file.channels == 2)
            #expect(file.timeReference != nil)
            // The private server is stopped again: its socket is gone.
            if withoutServer, let name = result.standardError.split(separator: "'").first(where: { $0.hasPrefix("aqjack-demo-") }) {
                #expect(!FileManager.default.fileExists(atPath: "/dev/shm/jack_\(name)_0_0"))
            } else {
                #expect(!withoutServer, "the demo did not name its private server")
            }
        }
    }
}
