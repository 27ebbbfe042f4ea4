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

    @Test("aqjack help CMD and aqjack CMD --help print that subcommand's synopsis and text and exit 0; --help lists every subcommand, demo too")
    func subcommandHelp() throws {
        for (arguments, words) in [(["record", "--help"], "record registers CLIENT:in_1..N"), (["help", "host"], "host runs one LV2 plugin live"),
                                   (["play", "-h", "x.wav"], "play registers CLIENT:out_1..N"), (["help", "--ports"], "--ports lists every port"),
                                   (["demo", "--help"], "demo plays a test signal")] {
            let result = try AQJackCommand.run(arguments)
            #expect(result.status == 0 && result.standardOutput.hasPrefix("Usage:") && result.standardOutput.contains(words), "\(arguments): \(result.standardOutput)")
            #expect(result.standardOutput.contains("Exit status: 0 ok"))
        }
        let all = try AQJackCommand.run(["--help"])
        for name in ["demo", "ports", "record", "play", "convert", "info", "plugins", "host"] {
            #expect(all.standardOutput.contains(name == "ports" ? "--ports [PATTERN]" : "] \(name) ") || all.standardOutput.contains("aqjack \(name) "), "\(name)")
        }
        let unknown = try AQJackCommand.run(["help", "frob"])
        #expect(unknown.status == 2 && unknown.standardError.contains("no help on 'frob'"))
    }

    @Test("a usage error inside a subcommand ends with that subcommand's usage")
    func usageOfTheSubcommand() throws {
        let record = try AQJackCommand.run(["record", "--bogus", "x.wav"])
        #expect(record.status == 2 && record.standardError.contains("record [-p PORT_OR_GLOB]") && record.standardError.contains("aqjack help record"), "\(record.standardError)")
        let convert = try AQJackCommand.run(["convert", "--bogus"])
        #expect(convert.status == 2 && convert.standardError.contains("aqjack convert IN OUT"), "\(convert.standardError)")
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
        (["--ports", "-p"], "'-p' is not an option of --ports (-i, -o and -p name ports to connect elsewhere): expected --input, --output or --physical"),
        (["demo", "-o", "x.wav"], "demo takes its output file as its operand, not '-o': aqjack demo [-d SECONDS] [--force] [FILE]"),
        (["demo", "a.wav", "b.wav"], "demo takes one FILE, got 'a.wav' and 'b.wav'"),
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
