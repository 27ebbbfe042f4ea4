import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

/// The Apple-style programs in `Tests/ApplePrograms` (issue 13), built unchanged as executables
/// of an outside package that depends on this one, in Swift 5 language mode as such ported code
/// is; and `Porter` (issue 10's products: `AudioToolbox` and `AudioQueue`, Swift 6 mode). Built
/// once per folder: the first test to ask builds them, the others reuse the build.
enum ApplePrograms {
    static let names = ["ExtAudioConvert", "StreamParse", "Recorder", "ConverterProc", "Player", "DispatchRecorder", "DispatchPlayer", "Porter",
                         "RunLoopRecorder", "StreamPlayer", "SessionRecorder", "DeviceWatcher"]

    /// Starts program `name` in the background with its standard output and error in one
    /// temporary file (two handles would each write from offset 0 over the other); returns the
    /// process, a reader of what it printed so far, and the file to remove.
    static func start(_ bin: String, _ name: String, _ arguments: [String], environment extra: [String: String]) throws -> (process: Process, text: () -> String, output: String) {
        let output = ExternalTool.temporaryPath(name, extension: "txt")
        FileManager.default.createFile(atPath: output, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bin + "/" + name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let handle = FileHandle(forWritingAtPath: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return (process, { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }, output)
    }

    /// Runs program `name` with `arguments` and extra environment; returns its status and output.
    static func run(_ bin: String, _ name: String, _ arguments: [String], environment extra: [String: String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bin + "/" + name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // A program that hangs fails its test instead of the run: killed after 120 s (each
        // takes a few seconds).
        let watchdog = DispatchWorkItem { kill(process.processIdentifier, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let processExit = process.exitStatus()
        watchdog.cancel()
        return (processExit.status, text)
    }

    /// Builds the programs (incrementally, in `.build/apple-programs`, kept between runs and
    /// between the test suites); returns the folder holding the executables and what the build
    /// printed. With `recompiling`, that program's source gets a line of its own so this build
    /// compiles it again and prints its warnings.
    static func build(recompiling: String? = nil) throws -> (bin: String, output: String) {
        let root = #filePath.components(separatedBy: "/Tests/")[0]
        let packageName = URL(fileURLWithPath: root).lastPathComponent
        // In our own build folder, not TMPDIR: the JACK suite runs each attempt with a TMPDIR of
        // its own, where the programs (and our package under them) were built again from nothing.
        let folder = root + "/.build/apple-programs"
        for name in names {
            try FileManager.default.createDirectory(atPath: folder + "/Sources/" + name, withIntermediateDirectories: true)
            var source = try String(contentsOfFile: root + "/Tests/ApplePrograms/\(name)/main.swift", encoding: .utf8)
            if name == recompiling { source += "// build \(UUID().uuidString)\n" }
            let target = folder + "/Sources/\(name)/main.swift"
            if (try? String(contentsOfFile: target, encoding: .utf8)) != source {
                try source.write(toFile: target, atomically: true, encoding: .utf8)
            }
        }
        let targets = names.map { name in
            name == "SessionRecorder" ? """
                    .executableTarget(name: "SessionRecorder", dependencies: [.product(name: "AVFoundation", package: "\(packageName)")],
                                      swiftSettings: [.swiftLanguageMode(.v5)]),
            """ : name == "Porter" ? """
                    .executableTarget(name: "Porter", dependencies: [.product(name: "AudioToolbox", package: "\(packageName)"),
                                                                     .product(name: "AudioQueue", package: "\(packageName)")]),
            """ : """
                    .executableTarget(name: "\(name)", dependencies: [.product(name: "AudioToolbox", package: "\(packageName)")],
                                      swiftSettings: [.swiftLanguageMode(.v5)]),
            """
        }.joined(separator: "\n")
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription

            let package = Package(
                name: "ApplePrograms",
                dependencies: [.package(path: "\(root)")],
                targets: [
            \(targets)
                ]
            )
            """
        if (try? String(contentsOfFile: folder + "/Package.swift", encoding: .utf8)) != manifest {
            try manifest.write(toFile: folder + "/Package.swift", atomically: true, encoding: .utf8)
        }
        var result = try ExternalTool.run("swift", ["build", "--package-path", folder])
        if result.status != 0 {
            // The kept build plan can miss a source file added to our package since (measured:
            // "cannot find type 'TransportChange'" after a new file): build once more from clean.
            try? FileManager.default.removeItem(atPath: folder + "/.build")
            result = try ExternalTool.run("swift", ["build", "--package-path", folder])
        }
        guard result.status == 0 else {
            throw NSError(domain: "ApplePrograms", code: Int(result.status),
                          userInfo: [NSLocalizedDescriptionKey: "the Apple-style programs did not build: \(result.standardOutput.suffix(4000)) \(result.standardError.suffix(2000))"])
        }
        return (folder + "/.build/debug", result.standardOutput + result.standardError)
    }
}

@Suite("Apple-style programs built unchanged against AudioToolbox (no server needed)")
struct AppleProgramsTests {
    @Test("ExtAudioFile converter (Learning Core Audio ch. 6), AudioFileStream parser, AudioConverter input proc over UnsafeMutableAudioBufferListPointer: built unchanged, their output checked")
    func offlinePrograms() throws {
        let bin = try ApplePrograms.build().bin

        // The converter: 48 kHz float WAV to 16-bit big-endian 44.1 kHz AIFF, as aqjack convert does it.
        let source = ExternalTool.temporaryPath("apple-src", extension: "wav")
        let converted = ExternalTool.temporaryPath("apple-out", extension: "aiff")
        let reference = ExternalTool.temporaryPath("apple-ref", extension: "aiff")
        defer { for path in [source, converted, reference] { try? FileManager.default.removeItem(atPath: path) } }
        try #require(MultiSine.writeFile(source, frameCount: 96000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "floating-point", "-b", "32"]) == 0)
        let convert = try ExternalTool.run(bin + "/ExtAudioConvert", [source, converted])
        #expect(convert.status == 0 && convert.standardOutput.contains("converted 88200 frames"), "\(convert.standardOutput) \(convert.standardError)")
        let aqjack = try AQJackCommand.run(["convert", source, reference, "-r", "44100", "-b", "16"])
        try #require(aqjack.status == 0, "\(aqjack.standardError)")
        let ours = try SoundFileContents(path: converted)
        #expect(ours.sampleRate == 44100 && ours.frames == 88200)
        #expect(ours.samples == (try SoundFileContents(path: reference)).samples, "the program's AIFF differs from aqjack convert's")

        // The stream parser on M4A and MP3: every packet ffprobe counts.
        let m4a = ExternalTool.temporaryPath("apple-stream", extension: "m4a")
        let mp3 = ExternalTool.temporaryPath("apple-stream", extension: "mp3")
        defer { for path in [m4a, mp3] { try? FileManager.default.removeItem(atPath: path) } }
        try #require(try AQJackCommand.run(["convert", source, m4a]).status == 0)
        try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source, "-c:a", "libmp3lame", mp3]).status == 0)
        for (path, format) in [(m4a, "aac "), (mp3, ".mp3")] {
            let parse = try ExternalTool.run(bin + "/StreamParse", [path])
            let packets = try #require(try ExternalTool.probe(path)["nb_read_packets"])
            #expect(parse.status == 0 && parse.standardOutput.contains("format \(format) 48000 Hz 2 ch") && parse.standardOutput.contains("ready true, packets \(packets),"),
                    "\(parse.standardOutput) \(parse.standardError) (ffprobe: \(packets) packets)")
        }

        // The input proc: float to 16-bit, Core Audio's rounding.
        let wav = ExternalTool.temporaryPath("apple-proc", extension: "wav")
        defer { try? FileManager.default.removeItem(atPath: wav) }
        let proc = try ExternalTool.run(bin + "/ConverterProc", [wav])
        #expect(proc.status == 0 && proc.standardOutput.contains("converted 48000 frames"), "\(proc.standardOutput) \(proc.standardError)")
        let expected = (0 ..< 48000).flatMap { index -> [Float] in
            let value = Float(0.5 * sin(2 * Double.pi * 440 * Double(index) / 48000))
            return [value, -value].map { Float(Int16((Double($0) * 32768).rounded())) / 32768 }
        }
        #expect(try SoundFileContents(path: wav).samples == expected)
    }
}

extension JackServerSuite {
    @Suite("Apple-style recorder (Learning Core Audio ch. 4) on the server, unchanged")
    struct AppleRecorderTests {
        @Test("The recorder asks the HAL for the rate, records 16-bit PCM bit-exact from the ports AQJACK_CONNECT names, and AAC that ffprobe reads")
        func recorder() throws {
            let bin = try ApplePrograms.build().bin
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("lcagen"), channelCount: 2, integerBits: 16)
            let wav = ExternalTool.temporaryPath("lca", extension: "wav")
            let caf = ExternalTool.temporaryPath("lca", extension: "caf")
            defer { for path in [wav, caf] { try? FileManager.default.removeItem(atPath: path) } }
            let environment = ["AQJACK_CONNECT": generator.client.name + ":out_*", "AQJACK_CLIENT_NAME": TestServer.uniqueClientName("lca")]
            for (path, codec) in [(wav, "lpcm"), (caf, "aac")] {
                let result = try ApplePrograms.run(bin, "Recorder", [path, "1", codec], environment: environment)
                #expect(result.status == 0 && result.output.contains("Recording at \(generator.client.sampleRate) Hz"), "\(result.output)")
            }
            let pcm = try SoundFileContents(path: wav)
            #expect(pcm.channels == 2 && pcm.frames > generator.client.sampleRate / 2, "\(pcm.frames) frames")
            #expect(integerSignalStart(pcm.samples, channels: 2, bits: 16) != nil, "the recording is not the generator's signal, frame for frame")
            let probe = try ExternalTool.probe(caf)
            #expect(probe["codec_name"] == "aac" && probe["channels"] == "2" && probe["sample_rate"] == String(generator.client.sampleRate), "\(probe)")
            let decoded = try ExternalTool.decodeWithFFmpeg(caf)
            #expect(decoded.count / 2 > generator.client.sampleRate / 2, "ffmpeg decoded \(decoded.count / 2) frames")
        }
    }
}

extension JackServerSuite {
    @Suite("Apple-style recorder on Foundation's run loop (issue 36), unchanged")
    struct AppleRunLoopRecorderTests {
        @Test("a recorder class whose queue calls back on the main run loop while the program runs RunLoop.main.run(until:) with a metering Timer, and again under CFRunLoopRun stopped by a Timer: every frame of the generator recorded, in order, no gap; the meter Timer fires throughout; a program that runs its loop only after 3 s is told so once on standard error")
        func recordsOnFoundationRunLoop() throws {
            let bin = try ApplePrograms.build().bin
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("rlgen"), channelCount: 2, integerBits: 16)
            for style in ["runloop", "cfrunlooprun"] {
                let wav = ExternalTool.temporaryPath("runloop-rec", extension: "wav")
                defer { try? FileManager.default.removeItem(atPath: wav) }
                let result = try ApplePrograms.run(bin, "RunLoopRecorder", [wav, "1.5", style], environment: [
                    "AQJACK_CONNECT": generator.client.name + ":out_*", "AQJACK_CLIENT_NAME": TestServer.uniqueClientName("rlrec")])
                #expect(result.status == 0, "\(style): \(result.output)")
                let counts = result.output.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
                let pcm = try SoundFileContents(path: wav)
                print("RunLoopRecorder \(style): \(result.output.trimmingCharacters(in: .whitespacesAndNewlines)); the file \(pcm.frames) frames")
                // 1.5 s less what the three 0.1 s buffers held when the queue stopped at once.
                #expect(pcm.frames >= 48_000 && counts.first == pcm.frames, "\(style): \(result.output), \(pcm.frames) frames in the file")
                #expect(integerSignalStart(pcm.samples, channels: 2, bits: 16) != nil, "\(style): not the generator's signal frame for frame (a gap or a wrong frame)")
                #expect(counts.count == 3 && counts[2] >= 10, "\(style): the meter Timer fired \(counts.count == 3 ? counts[2] : -1) times")
                #expect(!result.output.contains("waited more than"), "\(style): \(result.output)")
            }
            // A program busy for 3 s before it runs its loop: told once on standard error.
            let wav = ExternalTool.temporaryPath("runloop-late", extension: "wav")
            defer { try? FileManager.default.removeItem(atPath: wav) }
            let late = try ApplePrograms.run(bin, "RunLoopRecorder", [wav, "0.5", "late"], environment: [
                "AQJACK_CONNECT": generator.client.name + ":out_*", "AQJACK_CLIENT_NAME": TestServer.uniqueClientName("rlrec")])
            #expect(late.status == 0 && late.output.components(separatedBy: "audio queue callbacks have waited more than 2 s for their run loop").count == 2,
                    "\(late.output)")
        }
    }
}

extension JackServerSuite {
    @Suite("An internet-radio-style player (AudioFileStream + output queue) on the server, unchanged (issue 36)")
    struct AppleStreamPlayerTests {
        @Test("MP3 (48 kHz stereo, 192 kbit/s, by libmp3lame) fed in 2 KiB pieces to AudioFileStream and played by a queue made with its format (kAudioFormatMPEGLayer3): every frame of ffmpeg's decode, sample for sample, in order, nothing else")
        func playsMP3() throws {
            let source = ExternalTool.temporaryPath("radio-src", extension: "wav")
            let mp3 = ExternalTool.temporaryPath("radio", extension: "mp3")
            defer { for path in [source, mp3] { try? FileManager.default.removeItem(atPath: path) } }
            try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "floating-point", "-b", "32"]) == 0)
            // No Xing/LAME header: ffmpeg then trims nothing, as a queue fed the frames trims nothing.
            try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source, "-c:a", "libmp3lame", "-b:a", "192k", "-write_xing", "0", mp3]).status == 0)
            let packets = try #require(ExternalTool.probe(mp3)["nb_read_packets"].flatMap { Int($0) })
            try Self.playsAsFFmpegDecodes(mp3, packets: packets, heAAC: false)
        }

        /// The formats issue 36 adds, each in a CAF laid out for streaming (desc, kuki, pakt, data).
        enum StreamedFormat: String, CaseIterable, CustomTestStringConvertible {
            case heAAC, opus, ac3
            var testDescription: String { rawValue }
        }

        @Test("HE-AAC (explicitly signalled: object type 5, a 24 kHz AAC-LC core from ffmpeg, 48 kHz out; Debian has no encoder that writes SBR data, so the SBR tool runs without any), Opus (libopus, 48 kHz) and AC-3 (ffmpeg, 48 kHz), each in a streaming CAF fed in 2 KiB pieces: the player picks 'aach' from kAudioFileStreamProperty_FormatList for HE-AAC, and every frame of ffmpeg's decode of the same file is played, sample for sample, in order, nothing else", arguments: StreamedFormat.allCases)
        func playsStreamedFormat(_ format: StreamedFormat) throws {
            let source = ExternalTool.temporaryPath("radio-src", extension: "wav")
            let encoded = ExternalTool.temporaryPath("radio-enc", extension: format == .heAAC ? "aac" : "caf")
            let caf = ExternalTool.temporaryPath("radio", extension: "caf")
            defer { for path in [source, encoded, caf] { try? FileManager.default.removeItem(atPath: path) } }
            try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "floating-point", "-b", "32"]) == 0)
            let codec: [String] = switch format {
            case .heAAC: ["-ar", "24000", "-c:a", "aac", "-b:a", "64k"]
            case .opus: ["-c:a", "libopus", "-b:a", "128k"]
            case .ac3: ["-c:a", "ac3", "-b:a", "192k"]
            }
            try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source] + codec + [encoded]).status == 0)
            let packets: Int
            if format == .heAAC {
                let payloads = StreamingCAF.adtsPayloads(encoded)
                try #require(payloads.count > 20, "\(payloads.count) ADTS frames")
                // ES_Descriptor in Apple's style (4-byte lengths, which ffmpeg's CAF reader
                // expects): ES_ID 0; DecoderConfig (MPEG-4 audio, stream type 5); the
                // AudioSpecificConfig 2B 11 88 00 (object type 5, core 24 kHz stereo, SBR 48 kHz,
                // core AAC-LC); SLConfig 2.
                let cookie: [UInt8] = [0x03, 0x80, 0x80, 0x80, 0x24, 0x00, 0x00, 0x00, 0x04, 0x80, 0x80, 0x80, 0x16, 0x40, 0x15, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                       0x05, 0x80, 0x80, 0x80, 0x04, 0x2B, 0x11, 0x88, 0x00, 0x06, 0x80, 0x80, 0x80, 0x01, 0x02]
                try StreamingCAF.write(caf, description: .init(sampleRate: 24000, formatID: 0x6161_6320, formatFlags: 2, framesPerPacket: 1024, channels: 2),
                                       cookie: cookie, packets: payloads)
                packets = payloads.count
            } else {
                let stream = try #require(StreamingCAF.read(encoded), "ffmpeg's CAF")
                try StreamingCAF.write(caf, description: stream.description, cookie: stream.cookie, packets: stream.packets)
                packets = stream.packets.count
            }
            try Self.playsAsFFmpegDecodes(caf, packets: packets, heAAC: format == .heAAC)
        }

        /// The formats issue 36 adds that MPEG-4 carries besides AAC.
        enum MPEG4Format: String, CaseIterable, CustomTestStringConvertible {
            case opus, flac, eac3
            var testDescription: String { rawValue }
            var codec: [String] {
                switch self {
                case .opus: ["-c:a", "libopus", "-b:a", "128k"]
                case .flac: ["-c:a", "flac", "-strict", "-2"]
                case .eac3: ["-c:a", "eac3", "-b:a", "192k"]
                }
            }
        }

        @Test("Opus ('Opus' with 'dOps'), FLAC ('fLaC' with 'dfLa') and E-AC-3 ('ec-3' with 'dec3') in MPEG-4 files made by ffmpeg for streaming, fed in 2 KiB pieces: the queue made with the stream's format plays every frame of ffmpeg's decode (its edit list ignored, as the player trims nothing), sample for sample, nothing else", arguments: MPEG4Format.allCases)
        func playsMPEG4Format(_ format: MPEG4Format) throws {
            let source = ExternalTool.temporaryPath("radio-src", extension: "wav")
            let mp4 = ExternalTool.temporaryPath("radio", extension: "mp4")
            defer { for path in [source, mp4] { try? FileManager.default.removeItem(atPath: path) } }
            try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "signed-integer", "-b", "16"]) == 0)
            try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source] + format.codec + ["-movflags", "+faststart", mp4]).status == 0)
            let packets = try #require(ExternalTool.probe(mp4)["nb_read_packets"].flatMap { Int($0) })
            try Self.playsAsFFmpegDecodes(mp4, packets: packets, heAAC: false, ffmpegInput: ["-ignore_editlist", "1"])
        }

        @Test("AC-3 whose every packet is garbage (the sizes kept, the bytes 0x55): the queue skips each, says so once on standard error, plays nothing, and still stops after its last buffer (IsRunning drops; it hung before): the program exits 0 within 20 s")
        func undecodablePackets() throws {
            let bin = try ApplePrograms.build().bin
            let source = ExternalTool.temporaryPath("radio-src", extension: "wav")
            let encoded = ExternalTool.temporaryPath("radio-enc", extension: "caf")
            let caf = ExternalTool.temporaryPath("radio-bad", extension: "caf")
            defer { for path in [source, encoded, caf] { try? FileManager.default.removeItem(atPath: path) } }
            try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "floating-point", "-b", "32"]) == 0)
            try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source, "-c:a", "ac3", encoded]).status == 0)
            let stream = try #require(StreamingCAF.read(encoded), "ffmpeg's CAF")
            try StreamingCAF.write(caf, description: stream.description, cookie: stream.cookie, packets: stream.packets.map { [UInt8](repeating: 0x55, count: $0.count) })
            let (recorder, log) = try startFloatRecorder(channels: 2, role: "badrec")
            let started = Date()
            let result = try ApplePrograms.run(bin, "StreamPlayer", [caf], environment: [
                "AQJACK_CONNECT": recorder.driver.name + ":in_*", "AQJACK_CLIENT_NAME": TestServer.uniqueClientName("badradio")])
            let took = Date().timeIntervalSince(started)
            recorder.stop()
            recorder.dispose()
            #expect(result.status == 0 && took < 20 && result.output.contains("played \(stream.packets.count) packets"), "\(took) s: \(result.output)")
            #expect(result.output.components(separatedBy: "skips packets it cannot decode").count == 2, "\(result.output)")
            let loud = log.deliveries.flatMap(\.samples).filter { $0 != 0 }.count
            #expect(loud == 0, "\(loud) samples not silent")
        }

        /// Plays `path` with the StreamPlayer program into a float recorder and checks that
        /// every frame of ffmpeg's decode was played, sample for sample, from the first frame
        /// that is not silence, and nothing after.
        static func playsAsFFmpegDecodes(_ path: String, packets: Int, heAAC: Bool, ffmpegInput: [String] = [], program: String = "StreamPlayer") throws {
            let bin = try ApplePrograms.build().bin
            let reference = try ExternalTool.decodeWithFFmpeg(path, inputOptions: ffmpegInput)
            try #require(reference.count > 2 * 40000, "ffmpeg decoded \(reference.count / 2) frames")
            let (recorder, log) = try startFloatRecorder(channels: 2, role: "radiorec")
            let result = try ApplePrograms.run(bin, program, [path], environment: [
                "AQJACK_CONNECT": recorder.driver.name + ":in_*", "AQJACK_CLIENT_NAME": TestServer.uniqueClientName("radio")])
            usleep(200_000)
            recorder.stop()
            recorder.dispose()
            #expect(result.status == 0 && result.output.contains("played \(packets) packets" + (heAAC ? " as HE-AAC" : "\n")), "\(result.output)")
            let played = log.deliveries.flatMap(\.samples)
            // Both from the first frame that is not silence.
            func firstSound(_ samples: [Float]) -> Int? { (0 ..< samples.count / 2).first { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 } }
            let soundStarts = (played: firstSound(played), reference: firstSound(reference))
            let playedStart = try #require(soundStarts.played, "nothing was played")
            let referenceStart = try #require(soundStarts.reference)
            let frames = reference.count / 2 - referenceStart
            #expect(played.count / 2 - playedStart >= frames, "\(played.count / 2 - playedStart) frames played of \(frames)")
            var wrong = 0
            for frame in 0 ..< min(frames, played.count / 2 - playedStart) {
                for channel in 0 ..< 2 where played[2 * (playedStart + frame) + channel] != reference[2 * (referenceStart + frame) + channel] { wrong += 1 }
            }
            #expect(wrong == 0, "\(wrong) samples differ from ffmpeg's decode")
            let silentAfter = played[(2 * (playedStart + frames))...].allSatisfy { $0 == 0 }
            #expect(silentAfter, "sound after the stream's end")
        }
    }
}

extension JackServerSuite {
    @Suite("An iOS-style recorder with AVAudioSession on the server, unchanged (issue 36)", .serialized)
    struct AppleSessionRecorderTests {
        @Test("import AVFoundation: category, mode, preferred rate and buffer kept, the server's rate, period and channels answered, permission granted; currentRoute holds the physical capture ports as one line input and the playback ports as one line output, each channel a port, and setPreferredInput takes the available input; a connection to the server's playback ports posts a route change (routeConfigurationChange) within a second; killing jackd posts the interruption (began) and DeviceIsAlive 0 through the HAL listener within a second; the server started again posts the end (should resume) and DeviceIsAlive 1; the queue stops and disposes without hanging")
        func sessionAndInterruptions() throws {
            let bin = try ApplePrograms.build().bin
            let name = "aqjack-avsession-\(getpid())-\(Int.random(in: 0 ..< 1_000_000))"
            let driver = ["dummy", "-r", "48000", "-p", "256"]
            var server: JackServerProcess? = try JackServerProcess(name: name, realtime: false, serverOptions: [], driver: driver)
            defer { server?.stop() }
            let (process, text, output) = try ApplePrograms.start(bin, "SessionRecorder", ["6"], environment: [
                "AQJACK_SERVER": name, "AQJACK_CLIENT_NAME": TestServer.uniqueClientName("avrec")])
            defer { try? FileManager.default.removeItem(atPath: output) }
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, !text().contains("ready at"), process.isRunning { usleep(50_000) }
            try #require(text().contains("ready at"), "\(text())")
            // A player connecting to the server's playback ports: a route change.
            let player = try JackClient(name: TestServer.uniqueClientName("avroute"), server: name)
            let port = try player.registerPort("out", direction: .output)
            try player.activate()
            let connected = Date().timeIntervalSince1970
            _ = try player.connect(port.name, to: "system:playback_1")
            usleep(500_000)
            player.close()
            sleep(1)
            let killed = Date().timeIntervalSince1970
            server?.stop()
            server = nil
            sleep(2)
            let restarted = Date().timeIntervalSince1970
            server = try JackServerProcess(name: name, realtime: false, serverOptions: [], driver: driver)
            let end = Date().addingTimeInterval(30)
            while Date() < end, process.isRunning { usleep(50_000) }
            #expect(!process.isRunning, "the program did not end (stop or dispose hung): \(text())")
            let log = text()
            print(log)
            /// The time printed after `prefix` on its first line.
            func time(_ prefix: String) -> Double? {
                guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
                return Double(line.dropFirst(prefix.count).prefix { $0 != "," })
            }
            #expect(log.contains("session: category playAndRecord, mode measurement, rate 48000 Hz (preferred 44100), buffer 5333 us, inputs 2, outputs 2, permission granted"), "\(log)")
            #expect(log.contains("record permission granted: true"))
            #expect(log.contains("route: inputs LineIn 'JACK '\(name)' capture' system [system:capture_1 system:capture_2]; "
                                 + "outputs LineOut 'JACK '\(name)' playback' system [system:playback_1 system:playback_2]; headphones false"), "\(log)")
            #expect(log.contains("preferred input: system"), "\(log)")
            let began = time("interruption began at "), dead = time("device is alive: 0 at ")
            let ended = time("interruption ended at "), back = time("device is alive: 1 at ")
            let routes = log.split(separator: "\n").filter { $0.hasPrefix("route change (reason 8) at ") }
                .compactMap { Double($0.dropFirst("route change (reason 8) at ".count)) }
            #expect(routes.contains { $0 >= connected && $0 - connected < 1 }, "no route change within a second of the connection: \(routes.map { $0 - connected })")
            print("AVAudioSession: interruption began \(began.map { String(format: "%.3f", $0 - killed) } ?? "-") s and DeviceIsAlive 0 \(dead.map { String(format: "%.3f", $0 - killed) } ?? "-") s after jackd's SIGTERM; ended \(ended.map { String(format: "%.3f", $0 - restarted) } ?? "-") s and DeviceIsAlive 1 \(back.map { String(format: "%.3f", $0 - restarted) } ?? "-") s after its restart began")
            #expect(began.map { $0 - killed >= 0 && $0 - killed < 1 } == true, "interruption began \(began.map { $0 - killed } ?? -1) s after the kill")
            #expect(dead.map { $0 - killed >= 0 && $0 - killed < 1 } == true, "DeviceIsAlive 0 \(dead.map { $0 - killed } ?? -1) s after the kill")
            #expect(ended.map { $0 - restarted >= 0 && $0 - restarted < 1.5 } == true && log.contains("should resume"), "interruption ended \(ended.map { $0 - restarted } ?? -1) s after the restart")
            #expect(back.map { $0 - restarted >= 0 && $0 - restarted < 1.5 } == true)
            #expect(log.contains("recorded ") && !log.contains("recorded 0 frames"), "\(log)")
        }
    }
}

extension JackServerSuite {
    @Suite("Apple-style players and a dispatch-queue recorder on the server, unchanged")
    struct ApplePlayerTests {
        @Test("Learning Core Audio's player and a dispatch-queue player play a 16-bit file into the ports AQJACK_CONNECT names, every frame bit-exact and nothing after; Learning Core Audio's player plays ffmpeg's Opus and AC-3 CAFs and FLAC and Opus MPEG-4 files sample for sample as ffmpeg decodes them; a dispatch-queue recorder records the generator bit-exact")
        func players() throws {
            let bin = try ApplePrograms.build().bin
            let path = ExternalTool.temporaryPath("lca-play", extension: "wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try writeIntegerSignalWave(path, frames: 24000)
            for program in ["Player", "DispatchPlayer"] {
                let (recorder, log) = try startFloatRecorder(channels: 2, role: "lcarec")
                let result = try ApplePrograms.run(bin, program, [path], environment: [
                    "AQJACK_CONNECT": recorder.driver.name + ":in_*", "AQJACK_CLIENT_NAME": TestServer.uniqueClientName("lcaplay")])
                usleep(200_000)
                recorder.stop()
                recorder.dispose()
                #expect(result.status == 0 && result.output.contains("played 24000 packets"), "\(program): \(result.output)")
                let samples = log.deliveries.flatMap(\.samples)
                let first = try #require((0 ..< samples.count / 2).first { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 }, "\(program): nothing arrived")
                var wrong = 0
                for frame in 0 ..< 24000 where first + frame < samples.count / 2 {
                    for channel in 0 ..< 2 where samples[2 * (first + frame) + channel] != TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16) {
                        wrong += 1
                    }
                }
                #expect(samples.count / 2 >= first + 24000 && wrong == 0, "\(program): \(wrong) samples wrong")
                #expect(samples[(2 * (first + 24000))...].allSatisfy { $0 == 0 }, "\(program): sound after the file's end")
            }

            // Opus and AC-3 in CAFs as ffmpeg writes them (packet table after the data, no
            // priming), FLAC and Opus in MPEG-4: AudioFile reads them as packets and the queue
            // decodes them (Opus's pre-skip dropped by the decoder, as ffmpeg's).
            for (codec, container) in [(["-c:a", "libopus", "-b:a", "128k"], "caf"), (["-c:a", "ac3", "-b:a", "192k"], "caf"),
                                       (["-c:a", "flac", "-strict", "-2"], "mp4"), (["-c:a", "libopus", "-b:a", "128k"], "mp4")] {
                let source = ExternalTool.temporaryPath("lca-src", extension: "wav")
                let caf = ExternalTool.temporaryPath("lca-" + codec[1], extension: container)
                defer { for file in [source, caf] { try? FileManager.default.removeItem(atPath: file) } }
                try #require(MultiSine.writeFile(source, frameCount: 48000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "signed-integer", "-b", "16"]) == 0)
                try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", source] + codec + [caf]).status == 0)
                let packets = try #require(ExternalTool.probe(caf)["nb_read_packets"].flatMap { Int($0) })
                try AppleStreamPlayerTests.playsAsFFmpegDecodes(caf, packets: packets, heAAC: false, program: "Player")
            }

            let generator = try GeneratorClient(name: TestServer.uniqueClientName("dqgen"), channelCount: 2, integerBits: 16)
            let wav = ExternalTool.temporaryPath("dq-rec", extension: "wav")
            defer { try? FileManager.default.removeItem(atPath: wav) }
            let result = try ApplePrograms.run(bin, "DispatchRecorder", [wav, "1"], environment: [
                "AQJACK_CONNECT": generator.client.name + ":out_*", "AQJACK_CLIENT_NAME": TestServer.uniqueClientName("dqrec")])
            #expect(result.status == 0, "\(result.output)")
            let pcm = try SoundFileContents(path: wav)
            #expect(pcm.frames > 24000 && integerSignalStart(pcm.samples, channels: 2, bits: 16) != nil, "\(pcm.frames) frames")
        }
    }
}

extension JackServerSuite {
    @Suite("A device watcher in SDL's style (HAL listeners as C functions) on a private server, unchanged (issue 36)", .serialized)
    struct AppleDeviceWatcherTests {
        @Test("DeviceWatcher: the default output device's rate and period; jack_bufsize 256 reaches its BufferFrameSize listener within a second with 256 readable; stopping jackd reaches its DeviceIsAlive listener (0) and the system object's Devices listener (0 devices) within a second; every listener is removed again")
        func watchesTheServer() throws {
            let bin = try ApplePrograms.build().bin
            let server = try PrivateJackServer(rate: 48000, period: 128)
            var stopped = false
            defer { if !stopped { server.stop() } }
            let (process, text, output) = try ApplePrograms.start(bin, "DeviceWatcher", ["5"], environment: ["AQJACK_SERVER": server.name])
            defer { try? FileManager.default.removeItem(atPath: output) }
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline, !text().contains("watching at"), process.isRunning { usleep(20_000) }
            try #require(text().contains("watching at"), "\(text())")
            usleep(500_000)   // the HAL's watching client opens
            let resized = Date().timeIntervalSince1970
            let resize = try ExternalTool.run("env", ["JACK_DEFAULT_SERVER=\(server.name)", "jack_bufsize", "256"], timeout: 20)
            #expect(resize.status == 0, "\(resize.standardError)")
            usleep(1_000_000)
            let killed = Date().timeIntervalSince1970
            server.stop()
            stopped = true
            let end = Date().addingTimeInterval(20)
            while Date() < end, process.isRunning { usleep(50_000) }
            #expect(!process.isRunning, "the program did not end: \(text())")
            let log = text()
            print(log)
            func time(_ prefix: String) -> Double? {
                guard let line = log.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
                return Double(line.dropFirst(prefix.count).split(separator: " ").last ?? "")
            }
            #expect(log.contains("default output device 3: 48000 Hz, 128 frames"), "\(log)")
            let period = time("buffer frame size: 256 at"), dead = time("device is alive: 0 at"), gone = time("devices changed: 0 devices at")
            #expect(period.map { $0 >= resized && $0 - resized < 1 } == true, "BufferFrameSize: \(String(describing: period.map { $0 - resized }))")
            #expect(dead.map { $0 >= killed && $0 - killed < 1 } == true, "DeviceIsAlive: \(String(describing: dead.map { $0 - killed }))")
            #expect(gone.map { $0 >= killed && $0 - killed < 1 } == true, "Devices: \(String(describing: gone.map { $0 - killed }))")
            #expect(log.contains("removed: all"), "\(log)")
        }
    }
}
