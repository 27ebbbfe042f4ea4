import AQJack
import AQTestSupport
import Foundation
import Testing

@Suite("aqjack command line: help, version, usage errors (no server needed)")
struct CommandLineTests {
    @Test("--help prints the usage and exits 0")
    func help() throws {
        let result = try AQJackCommand.run(["--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("aqjack [--server NAME] [--name CLIENT] --ports"))
        #expect(result.standardOutput.contains("Exit status: 0 ok, 1 runtime failure"))
    }

    @Test("--version names aqjack and the libraries it loaded")
    func version() throws {
        let result = try AQJackCommand.run(["--version"])
        #expect(result.status == 0)
        #expect(result.standardOutput.hasPrefix("aqjack 0.1.0 (libjack 1.9"))
        #expect(result.standardOutput.contains("libsndfile-1."))
        #expect(result.standardOutput.contains("libsamplerate-0."))
    }

    @Test("usage errors exit 2 and name the argument and what was expected", arguments: [
        (["--bogus"], "unknown option '--bogus'"),
        (["frobnicate"], "unknown subcommand 'frobnicate'"),
        ([], "no subcommand given"),
        (["--ports", "["], "PATTERN '[' is not a valid regular expression"),
        (["--ports", "--type", "video"], "--type 'video' is not a port type: expected audio, midi or any"),
        (["--ports", "a", "b"], "--ports takes one PATTERN"),
        (["--ports", "--server"], "--server needs a value"),
        (["--name", "a:b", "--ports"], "--name 'a:b' is not a valid JACK client name"),
        (["--ports", "--frames"], "unknown option '--frames' for --ports"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        let result = try AQJackCommand.run(arguments)
        #expect(result.status == 2)
        #expect(result.standardError.contains(message), "\(result.standardError)")
        #expect(result.standardOutput.isEmpty)
    }

    @Test("no server: exit 1 within 2 s, naming the server tried and how to start one, starting none")
    func noServer() throws {
        let name = "aqjack-absent-\(getpid())"
        let result = try AQJackCommand.run(["--server", name, "--ports"], environment: ["JACK_NO_START_SERVER": ""])
        #expect(result.status == 1)
        #expect(result.seconds < 2)
        #expect(result.standardError.contains("no JACK server named '\(name)' is running"))
        #expect(result.standardError.contains("jackd -n \(name) -d dummy"))
        #expect(!FileManager.default.fileExists(atPath: "/dev/shm/jack_\(name)_0_0"))
    }
}
