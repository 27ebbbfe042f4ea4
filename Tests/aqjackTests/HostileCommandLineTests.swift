import AQTestSupport
import CSndFile
import Foundation
import Testing

/// Hostile command lines (issue 9): every numeric option at values it must refuse, every file
/// argument as something that is not a readable audio file, outputs that must not be written.
/// Each asserts the exit status, a message naming the argument, that aqjack ended by exiting
/// (no signal, no trap), and that no file was created or changed. None needs a JACK server:
/// every refusal comes before aqjack connects.
@Suite("aqjack hostile command lines (no server needed)")
struct HostileCommandLineTests {
    /// A scratch folder of this test's own, removed afterwards.
    final class Scratch {
        let path: String
        init(_ name: String) {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-hostile-\(getpid())-\(name)-\(UInt32.random(in: 0 ... .max))").path
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        func file(_ name: String) -> String { path + "/" + name }
        /// The folder's entries and their contents, to prove nothing was created or changed.
        var snapshot: [String: Data] {
            var result: [String: Data] = [:]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                result[name] = FileManager.default.contents(atPath: file(name)) ?? Data()
            }
            return result
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Runs aqjack and checks it exited (no signal) with `status` and `message` on stderr.
    @discardableResult
    static func expectRefusal(_ arguments: [String], status: Int32, message: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> CommandResult {
        let result = try AQJackCommand.run(arguments)
        #expect(result.terminatedByExit, "aqjack \(arguments) ended by a signal", sourceLocation: sourceLocation)
        #expect(result.status == status, "aqjack \(arguments): \(result.standardError)", sourceLocation: sourceLocation)
        #expect(result.standardError.contains(message), "aqjack \(arguments): expected '\(message)' in \(result.standardError)", sourceLocation: sourceLocation)
        return result
    }

    /// A 0.1 s stereo 16-bit WAV written by sox.
    static func writeWave(_ path: String, seconds: Double = 0.1, rate: Int = 48000, bits: Int = 16) throws {
        let result = try ExternalTool.run("sox", ["-n", "-r", "\(rate)", "-c", "2", "-b", "\(bits)", path, "synth", "\(seconds)", "sine", "440"])
        #expect(result.status == 0, "\(result.standardError)")
    }

    // MARK: Item 7: numeric options

    /// (subcommand words before the option, option, values it must refuse, words after).
    static let numericOptions: [([String], String, [String], [String])] = [
        (["record"], "-c", ["0", "-1", "NaN", "1e300", "4097", "2.5"], ["x.wav"]),
        (["record"], "-r", ["0", "-1", "NaN", "1e300", "999", "768001"], ["x.wav"]),
        (["record"], "-d", ["0", "-1", "NaN", "1e300", "1e15", "inf", "31536001"], ["x.wav"]),
        (["record"], "--bitrate", ["0", "-1", "NaN", "1e300", "7999", "512001"], ["x.m4a"]),
        (["record"], "-q", ["-1", "NaN", "1e300", "128"], ["x.m4a"]),
        (["record"], "--start-at", ["-1", "NaN", "1e300", "9007199254740993"], ["x.wav"]),
        (["play"], "--volume", ["-1", "NaN", "1e300", "2", "inf"], ["x.wav"]),
        (["play"], "--loop", ["0", "-1", "NaN", "1e300", "1e16", "10000000000000000"], ["x.wav"]),
        (["play"], "--start-at", ["-1", "NaN", "1e300"], ["x.wav"]),
        (["demo"], "-d", ["0", "-1", "NaN", "1e300", "601"], []),
        (["convert", "in.wav", "out.wav"], "-r", ["0", "-1", "NaN", "1e300", "999"], []),
        (["convert", "in.wav", "out.wav"], "-c", ["0", "-1", "NaN", "1e300", "1025"], []),
        (["convert", "in.wav", "out.wav"], "-b", ["0", "-1", "NaN", "1e300", "12"], []),
        (["convert", "in.wav", "out.m4a"], "--bitrate", ["0", "-1", "NaN", "1e300"], []),
        (["convert", "in.wav", "out.m4a"], "-q", ["-1", "NaN", "1e300", "128"], []),
    ]

    @Test("a closed pipe is no crash: aqjack run (as a shell runs it, SIGPIPE at its default) with its standard error a pipe no one reads, given a bad option, exits 2 as usual instead of dying of SIGPIPE or a trap in the write")
    func closedStandardError() throws {
        let script = """
        import os, subprocess, sys
        r, w = os.pipe(); os.close(r)
        print(subprocess.run([sys.argv[1], "record", "--no-such-option"], stdout=subprocess.DEVNULL, stderr=w).returncode)
        """
        let result = try AQJackCommand.runProgram("/usr/bin/python3", ["-c", script, AQJackCommand.executable.path])
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(result.standardOutput) \(result.standardError)")
    }

    @Test("item07NumericOptionsRangeChecked: every numeric option at 0, -1, NaN, 1e300 and past its range exits 2 with the range, no trap, no file")
    func item07NumericOptionsRangeChecked() throws {
        let scratch = Scratch("numeric")
        try Self.writeWave(scratch.file("in.wav"))
        let before = scratch.snapshot
        for (command, option, values, tail) in Self.numericOptions {
            for value in values {
                let words = command.map { $0.hasSuffix(".wav") || $0.hasSuffix(".m4a") ? scratch.file($0) : $0 }
                    + [option, value] + tail.map(scratch.file)
                let result = try Self.expectRefusal(words, status: 2, message: "\(option) ")
                // The message gives the range: "... from A to B" or "A ... B".
                #expect(result.standardError.contains(" ... ") || result.standardError.contains(" to ") || result.standardError.contains(" or "), "\(result.standardError)")
            }
        }
        #expect(scratch.snapshot == before)
    }

    // MARK: Item 1 and 5: convert onto itself, and failed conversions

    @Test("item01ConvertOntoItself: the same path, a hard link or a symlink to the input is refused with exit 1, the input untouched")
    func item01ConvertOntoItself() throws {
        let scratch = Scratch("self")
        let input = scratch.file("take.wav")
        try Self.writeWave(input, seconds: 2)
        try FileManager.default.linkItem(atPath: input, toPath: scratch.file("hard.wav"))
        try FileManager.default.createSymbolicLink(atPath: scratch.file("soft.wav"), withDestinationPath: input)
        let original = try #require(FileManager.default.contents(atPath: input))
        for output in [input, scratch.file("hard.wav"), scratch.file("soft.wav"), scratch.path + "/./take.wav"] {
            try Self.expectRefusal(["convert", input, output, "--force"], status: 1, message: "is the input file")
            try Self.expectRefusal(["convert", output, input, "--force"], status: 1, message: "is the input file")
        }
        #expect(FileManager.default.contents(atPath: input) == original)
        #expect(Set(scratch.snapshot.keys) == ["take.wav", "hard.wav", "soft.wav"])
    }

    @Test("item05FailedConvertLeavesNothing: a conversion that fails part-way (disk full) leaves no partial output and an existing output untouched")
    func item05FailedConvertLeavesNothing() throws {
        let scratch = Scratch("failed")
        let input = scratch.file("long.wav")
        try Self.writeWave(input, seconds: 10)
        let disk = try SmallDisk(kilobytes: 256)
        defer { disk.unmount() }
        // A 10 s stereo 16-bit file (1.9 MB) cannot fit: the write fails after the first 256 KB.
        let result = try Self.expectRefusal(["convert", input, disk.path + "/out.wav"], status: 1, message: "ENOSPC")
        #expect(result.standardError.contains("'\(disk.path)/out.wav'"), "\(result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).isEmpty)
        // An existing output survives a failed --force conversion as it was.
        let keep = Data("keep me".utf8)
        FileManager.default.createFile(atPath: disk.path + "/out.wav", contents: keep)
        try Self.expectRefusal(["convert", input, disk.path + "/out.wav", "--force"], status: 1, message: "ENOSPC")
        #expect(FileManager.default.contents(atPath: disk.path + "/out.wav") == keep)
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["out.wav"])
        // A retry elsewhere needs no --force and succeeds.
        let retry = try AQJackCommand.run(["convert", input, scratch.file("out.flac")])
        #expect(retry.status == 0, "\(retry.standardError)")
    }

    // MARK: Item 3 and 16: outputs

    @Test("item03DemoRefusesExistingOutput: demo FILE that exists exits 1 unless --force, before starting any server")
    func item03DemoRefusesExistingOutput() throws {
        let scratch = Scratch("demo")
        let path = scratch.file("mine.wav")
        let keep = Data("my own recording".utf8)
        FileManager.default.createFile(atPath: path, contents: keep)
        let result = try Self.expectRefusal(["demo", "-d", "0.5", path], status: 1, message: "'\(path)' exists")
        #expect(result.standardError.contains("--force"))
        #expect(result.seconds < 1)
        #expect(FileManager.default.contents(atPath: path) == keep)
    }

    @Test("item16OutputsNamedForWhatTheyAre: a directory, a device and a missing folder are each named as such (exit 1), nothing created")
    func item16OutputsNamedForWhatTheyAre() throws {
        let scratch = Scratch("outputs")
        let input = scratch.file("in.wav")
        try Self.writeWave(input)
        let before = scratch.snapshot
        for command in [["convert", input], ["demo"]] {
            try Self.expectRefusal(command + [scratch.path, "--force"], status: 1, message: "'\(scratch.path)' is a directory")
            try Self.expectRefusal(command + ["/dev/null", "--force"], status: 1, message: "'/dev/null' is not a regular file")
            try Self.expectRefusal(command + [scratch.path + "/missing/out.wav"], status: 1, message: "the folder '\(scratch.path)/missing' does not exist")
        }
        #expect(scratch.snapshot == before)
        var status = stat()
        #expect(stat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)
    }

    @Test("item16EightBitWaveConverts: an 8-bit WAV converts to WAV without -b (as 16-bit, the samples exact)")
    func item16EightBitWaveConverts() throws {
        let scratch = Scratch("8bit")
        let input = scratch.file("eight.wav")
        try Self.writeWave(input, bits: 8)
        let output = scratch.file("out.wav")
        let result = try AQJackCommand.run(["convert", input, output])
        #expect(result.status == 0, "\(result.standardError)")
        let original = try SoundFileContents(path: input)
        let converted = try SoundFileContents(path: output)
        #expect(converted.frames == original.frames && converted.samples == original.samples)
    }

    @Test("item12FlacChannelLimitNamed: FLAC with 9 channels is refused naming FLAC's 8-channel limit, not 'No Error.'")
    func item12FlacChannelLimitNamed() throws {
        let scratch = Scratch("flac9")
        let input = scratch.file("nine.wav")
        let result = try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "9", "-b", "16", input, "synth", "0.1", "sine", "440"])
        #expect(result.status == 0)
        let refused = try Self.expectRefusal(["convert", input, scratch.file("nine.flac")], status: 1, message: "FLAC holds 1 ... 8 channels")
        #expect(!refused.standardError.contains("No Error"))
        #expect(Set(scratch.snapshot.keys) == ["nine.wav"])
    }

    @Test("item17FuzzScriptInstrumentsSwift: fuzz.sh builds the Swift modules with coverage instrumentation and fails under a coverage floor")
    func item17FuzzScriptInstrumentsSwift() throws {
        let root = #filePath.components(separatedBy: "/Tests/")[0]
        let script = try String(contentsOfFile: root + "/Scripts/fuzz.sh", encoding: .utf8)
        #expect(script.contains("-Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp"))
        #expect(script.contains("min_edges=\"${2:-400}\""))
        #expect(script.contains("is under the floor of"))
        // The target reaches every file kind the CLI opens, whole and as growing prefixes.
        let target = try String(contentsOfFile: root + "/Sources/FuzzParsers/FuzzParsers.swift", encoding: .utf8)
        #expect(target.contains("FrameSource.open") && target.contains("for eighths in"))
    }

    // MARK: File arguments

    @Test("file arguments that are not audio files: missing, a directory, /dev/null, empty, truncated header: exit 1 naming the file, nothing written")
    func badInputFiles() throws {
        let scratch = Scratch("inputs")
        try Self.writeWave(scratch.file("good.wav"))
        FileManager.default.createFile(atPath: scratch.file("empty.wav"), contents: Data())
        let good = try #require(FileManager.default.contents(atPath: scratch.file("good.wav")))
        FileManager.default.createFile(atPath: scratch.file("truncated.wav"), contents: good.prefix(30))
        let before = scratch.snapshot
        let inputs = [scratch.file("missing.wav"), scratch.path, "/dev/null", scratch.file("empty.wav"), scratch.file("truncated.wav")]
        for input in inputs {
            try Self.expectRefusal(["info", input], status: 1, message: "'\(input)'")
            try Self.expectRefusal(["convert", input, scratch.file("out.wav")], status: 1, message: "'\(input)'")
            try Self.expectRefusal(["play", input], status: 1, message: "'\(input)'")
        }
        #expect(scratch.snapshot == before)
    }

    // MARK: Item 10: rates play cannot play

    @Test("item10PlayRefusesImpossibleRates: a 1 Hz WAV and a 999 Hz WAV are refused at open with the rate and the range (exit 1, no hang)")
    func item10PlayRefusesImpossibleRates() throws {
        let scratch = Scratch("rates")
        for rate in [1, 4, 999] {
            let path = scratch.file("rate\(rate).wav")
            try writeRawWave(path, rate: rate, frames: 16)
            let result = try Self.expectRefusal(["play", path], status: 1, message: "is at \(rate).0 Hz: aqjack plays files at 1000 ... 768000 Hz")
            #expect(result.seconds < 2)
        }
    }

    @Test("item16InfiniteAIFFRate: an AIFF whose rate is infinite or zero is refused naming the rate as it is written, not as 67108864 Hz")
    func item16InfiniteAIFFRate() throws {
        let scratch = Scratch("aiff")
        let good = scratch.file("good.aiff")
        try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", good, "synth", "0.01", "sine", "440"])
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: good)))
        let comm = try #require(bytes.indices.first { Array(bytes[$0 ..< $0 + 4]) == Array("COMM".utf8) })
        // COMM: id, size, channels (2), frames (4), bits (2), then the 80-bit extended rate.
        let rate = comm + 8 + 8
        for (exponent, label) in [(UInt16(0x7FFF), "infinite"), (UInt16(0), "0")] {
            bytes[rate] = UInt8(exponent >> 8)
            bytes[rate + 1] = UInt8(exponent & 0xFF)
            for index in rate + 2 ..< rate + 10 { bytes[index] = exponent == 0 ? 0 : (index == rate + 2 ? 0x80 : 0) }
            let path = scratch.file("\(label).aiff")
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let result = try Self.expectRefusal(["info", path], status: 1, message: "sample rate")
            #expect(!result.standardError.contains("67108864"), "\(result.standardError)")
            #expect(result.standardError.contains(label == "infinite" ? "infinite" : "0 Hz"), "\(result.standardError)")
        }
    }

    // MARK: Item 13: file names that are not UTF-8

    @Test("item13NonUTF8FileNames: info, convert and play take a Latin-1 name byte for byte (record: FaultTests)")
    func item13NonUTF8FileNames() throws {
        let scratch = Scratch("latin1")
        // "café.wav" in Latin-1: 0xE9 is not valid UTF-8 on its own.
        let name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".wav".utf8)
        let rawPath = Array(scratch.path.utf8) + [UInt8(ascii: "/")] + name
        let source = scratch.file("source.wav")
        try Self.writeWave(source)
        try writeRawNamed(rawPath, contents: try #require(FileManager.default.contents(atPath: source)))

        let info = try runRaw(["info", rawPath])
        #expect(info.status == 0, "\(info.standardError)")
        #expect(info.standardOutput.contains("caf\\xe9.wav"), "\(info.standardOutput)")
        let outName: [UInt8] = Array(scratch.path.utf8) + Array("/out".utf8) + [0xFF] + Array(".flac".utf8)
        let convert = try runRaw(["convert", rawPath, outName])
        #expect(convert.status == 0, "\(convert.standardError)")
        #expect(rawEntries(scratch.path).contains(Array("out".utf8) + [0xFF] + Array(".flac".utf8)))
        // play refuses the file's rate check only after opening it: a 1 Hz copy with a Latin-1
        // name must be opened (the message names it), not reported missing.
        let slow: [UInt8] = Array(scratch.path.utf8) + Array("/slow".utf8) + [0xE9] + Array(".wav".utf8)
        try writeRawWave(scratch.file("slow-utf8.wav"), rate: 1, frames: 4)
        try writeRawNamed(slow, contents: try #require(FileManager.default.contents(atPath: scratch.file("slow-utf8.wav"))))
        let play = try runRaw(["play", slow])
        #expect(play.status == 1 && play.standardError.contains("slow\\xe9.wav' is at 1.0 Hz"), "\(play.standardError)")
        #expect(!play.standardError.contains("no file at"))
    }
}

/// A WAV header written by hand, so any rate (even 1 Hz, which sox refuses) can be made.
func writeRawWave(_ path: String, rate: Int, frames: Int) throws {
    var bytes: [UInt8] = []
    func le32(_ value: Int) { bytes += (0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    func le16(_ value: Int) { bytes += (0 ..< 2).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    let dataSize = frames * 4
    bytes += Array("RIFF".utf8); le32(36 + dataSize); bytes += Array("WAVE".utf8)
    bytes += Array("fmt ".utf8); le32(16); le16(1); le16(2); le32(rate); le32(rate * 4); le16(4); le16(16)
    bytes += Array("data".utf8); le32(dataSize); bytes += [UInt8](repeating: 0x10, count: dataSize)
    #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
}

/// Runs aqjack with arguments given as raw bytes (file names that are not UTF-8), via posix_spawn.
func runRaw(_ arguments: [Any]) throws -> CommandResult {
    let words: [[UInt8]] = [Array(AQJackCommand.executable.path.utf8)] + arguments.map { ($0 as? [UInt8]) ?? Array(($0 as! String).utf8) }
    var pointers: [UnsafeMutablePointer<CChar>?] = words.map { word in
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: word.count + 1)
        for (index, byte) in word.enumerated() { pointer[index] = CChar(bitPattern: byte) }
        pointer[word.count] = 0
        return pointer
    }
    pointers.append(nil)
    defer { pointers.forEach { $0?.deallocate() } }
    let out = Pipe(), err = Pipe()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, out.fileHandleForWriting.fileDescriptor, 1)
    posix_spawn_file_actions_adddup2(&actions, err.fileHandleForWriting.fileDescriptor, 2)
    var pid: pid_t = 0
    let started = Date()
    let spawned = posix_spawn(&pid, pointers[0]!, &actions, nil, pointers, environ)
    #expect(spawned == 0)
    try out.fileHandleForWriting.close()
    try err.fileHandleForWriting.close()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let exited = status & 0x7F == 0
    return CommandResult(status: exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), standardOutput: String(decoding: outData, as: UTF8.self),
                         standardError: String(decoding: errData, as: UTF8.self), seconds: Date().timeIntervalSince(started),
                         terminatedByExit: exited)
}

/// Creates a file whose path is given as raw bytes.
func writeRawNamed(_ path: [UInt8], contents: Data) throws {
    let fd = (path + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY | O_TRUNC, 0o644) } }
    #expect(fd >= 0)
    _ = contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// The raw names in a folder.
func rawEntries(_ path: String) -> [[UInt8]] {
    guard let directory = opendir(path) else { return [] }
    defer { closedir(directory) }
    var names: [[UInt8]] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
        if name != [46] && name != [46, 46] { names.append(name) }
    }
    return names
}

/// A tmpfs of a few kilobytes that the test mounts (as root), to fill the disk on demand: the
/// one fault the real file system cannot produce when asked.
final class SmallDisk {
    let path: String
    private var mounted = false

    init(kilobytes: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-disk-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try ExternalTool.run("mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
        guard result.status == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw SmallDiskError(message: "mount -t tmpfs failed (the fault tests run as root): \(result.standardError)")
        }
        mounted = true
    }

    func unmount() {
        guard mounted else { return }
        mounted = false
        _ = try? ExternalTool.run("umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { unmount() }
}

struct SmallDiskError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
