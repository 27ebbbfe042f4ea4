import AQTestSupport
import AudioToolbox
import Foundation
import Glibc
import Testing

/// The codes a parse, seek or property read of untrusted bytes may answer: Apple's.
private let appleCodes: Set<OSStatus> = [
    noErr, kAudio_ParamError, kAudioFileStreamError_UnsupportedFileType, kAudioFileStreamError_UnsupportedDataFormat,
    kAudioFileStreamError_UnsupportedProperty, kAudioFileStreamError_BadPropertySize, kAudioFileStreamError_NotOptimized,
    kAudioFileStreamError_InvalidPacketOffset, kAudioFileStreamError_InvalidFile, kAudioFileStreamError_ValueUnknown,
    kAudioFileStreamError_DataUnavailable, kAudioFileStreamError_IllegalOperation, kAudioFileStreamError_UnspecifiedError,
]

/// What a stream parse of `bytes` answered: the first status that was not noErr (or noErr), and
/// every status a property read or seek answered along the way.
private final class StreamRun {
    var statuses: [OSStatus] = []
    var packets = 0
}

/// Parses `bytes` through AudioFileStream in `chunk`-byte pieces, reading every property the
/// listener hears of, with a seek to packet 2 and its translations after the eighth piece, as
/// the fuzz target does; returns every status seen.
private func parse(_ bytes: [UInt8], chunk: Int) -> [OSStatus] {
    let run = StreamRun()
    var stream: AudioFileStreamID?
    let opened = AudioFileStreamOpen(Unmanaged.passUnretained(run).toOpaque(), { client, stream, property, _ in
        let run = Unmanaged<StreamRun>.fromOpaque(client).takeUnretainedValue()
        var size: UInt32 = 0
        var writable: DarwinBoolean = false
        run.statuses.append(AudioFileStreamGetPropertyInfo(stream, property, &size, &writable))
        let value = UnsafeMutableRawPointer.allocate(byteCount: max(16, Int(min(size, 1 << 20))), alignment: 16)
        defer { value.deallocate() }
        var capacity = max(16, min(size, 1 << 20))
        run.statuses.append(AudioFileStreamGetProperty(stream, property, &capacity, value))
        for other in [kAudioFileStreamProperty_MaximumPacketSize, kAudioFileStreamProperty_AudioDataByteCount,
                      kAudioFileStreamProperty_AudioDataPacketCount, kAudioFileStreamProperty_AverageBytesPerPacket] {
            var scratch = (UInt64(0), UInt64(0))
            var scratchSize = UInt32(16)
            run.statuses.append(AudioFileStreamGetProperty(stream, other, &scratchSize, &scratch))
        }
    }, { client, _, packets, _, _ in
        Unmanaged<StreamRun>.fromOpaque(client).takeUnretainedValue().packets += Int(packets)
    }, 0, &stream)
    guard opened == noErr, let stream else { return [opened] }
    defer { AudioFileStreamClose(stream) }
    var position = 0, pieces = 0
    var flags = AudioFileStreamParseFlags()
    while position < bytes.count {
        let count = min(chunk, bytes.count - position)
        let status = bytes.withUnsafeBytes { AudioFileStreamParseBytes(stream, UInt32(count), $0.baseAddress! + position, flags) }
        run.statuses.append(status)
        flags = []
        position += count
        pieces += 1
        if status != noErr { break }
        if pieces == 8 {
            var offset: Int64 = 0, seekFlags = AudioFileStreamSeekFlags()
            var translation = (Int64(2), Int64(2), UInt32(0), UInt32(0))
            var size = UInt32(24)
            run.statuses.append(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_PacketToFrame, &size, &translation))
            let seek = AudioFileStreamSeek(stream, 2, &offset, &seekFlags)
            run.statuses.append(seek)
            var dataOffset: Int64 = 0
            var dataSize = UInt32(8)
            if seek == noErr, AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataOffset, &dataSize, &dataOffset) == noErr,
               case let (target, false) = dataOffset.addingReportingOverflow(offset), target >= 0, target <= Int64(bytes.count) {
                position = Int(target)
                flags = .discontinuity
            }
        }
    }
    return run.statuses
}

/// The package's root folder (this file is Tests/aqjackTests/HostileStreamTests.swift).
private let packageRoot = #filePath.components(separatedBy: "/Tests/")[0]

@Suite("Hardening II: Audio File Stream Services and the file readers on hostile bytes (no server needed)")
struct HostileStreamTests {
    /// The inputs of Tests/FuzzCorpus/regressions.tar.xz (each crashed or hung a parser before
    /// this issue's fixes), unpacked into a fresh folder: (name, bytes) with the selector byte.
    static func regressionInputs() throws -> [(String, [UInt8])] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-regressions-\(getpid())").path
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tar = try ExternalTool.run("tar", ["-C", folder, "-xJf", packageRoot + "/Tests/FuzzCorpus/regressions.tar.xz"])
        #expect(tar.status == 0, "\(tar.standardError)")
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { name in
            (name, try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))))
        }
    }

    @Test("defect01StreamParsersSurviveTheCampaign: every stream input that crashed or hung the parsers (CAF, RF64, MP3, M4A, fragmented MP4: sizes near 2^63, negative and huge varints, 2^32 entries, nesting 100,000 deep, seeks past 2^63) now parses to an Apple code, each within 5 s")
    func streamInputsReplayed() throws {
        let inputs = try Self.regressionInputs().filter { $0.1.first == 7 && $0.1.count > 2 }
        #expect(inputs.count > 300, "\(inputs.count) stream inputs")
        for (name, input) in inputs {
            // The schedule byte's chunk size; large inputs in larger pieces (same bytes, same
            // parser states; a debug build parses a byte at a time slowly).
            let chunk = max([1, 13, 4096, 65536][Int(input[1] % 4)], input.count > 100_000 ? 4096 : 1)
            let started = Date()
            let statuses = parse(Array(input.dropFirst(2)), chunk: chunk)
            let seconds = Date().timeIntervalSince(started)
            let strangers = statuses.filter { !appleCodes.contains($0) }
            #expect(strangers.isEmpty, "\(name): codes \(strangers) are not Apple's")
            #expect(seconds < 5, "\(name): \(seconds) s")
        }
    }

    @Test("defect01FileEntryPointsSurviveTheCampaign: every input that crashed AudioFileOpenWithCallbacks or ExtAudioFileOpenURL opens to an Apple code or reads to its end")
    func fileInputsReplayed() throws {
        let inputs = try Self.regressionInputs().filter { ($0.1.first == 8 || $0.1.first == 9) && $0.1.count > 2 }
        for (name, input) in inputs {
            let path = temporaryPath("regression-\(name)")
            try Data(input.dropFirst(input[0] == 8 ? 2 : 1)).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            var file: ExtAudioFileRef?
            let status = ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file)
            if status == noErr, let file {
                var frames: Int64 = 0
                var size = UInt32(8)
                ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileLengthFrames, &size, &frames)
                ExtAudioFileDispose(file)
            } else {
                #expect(status != noErr, "\(name)")
            }
        }
    }

    /// A valid stream of each self-framed and chunked kind, made by sox, aqjack and ffmpeg.
    static func validStreams() throws -> [(String, [UInt8])] {
        let wav = temporaryPath("valid.wav"), aac = temporaryPath("valid.aac"), mp3 = temporaryPath("valid.mp3")
        defer { [wav, aac, mp3].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        #expect(try ExternalTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "0.5", "sine", "440"]).status == 0)
        #expect(try AQJackCommand.run(["convert", wav, aac]).status == 0)
        #expect(try ExternalTool.run("ffmpeg", ["-loglevel", "error", "-y", "-i", wav, "-c:a", "libmp3lame", mp3]).status == 0)
        return try [("WAVE", wav), ("ADTS", aac), ("MP3", mp3)].map { ($0.0, try [UInt8](Data(contentsOf: URL(fileURLWithPath: $0.1)))) }
    }

    @Test("defect01CallerValuesAnswerParamError: Seek(Int64.max), Seek(2^60), PacketToFrame(Int64.max/2), FrameToPacket(-1) and PacketToByte(Int64.max) answer kAudio_ParamError on WAVE, ADTS and MP3 streams")
    func callerValues() throws {
        for (kind, bytes) in try Self.validStreams() {
            var stream: AudioFileStreamID?
            #expect(AudioFileStreamOpen(nil, { _, _, _, _ in }, { _, _, _, _, _ in }, 0, &stream) == noErr)
            let id = try #require(stream)
            defer { AudioFileStreamClose(id) }
            #expect(bytes.withUnsafeBytes { AudioFileStreamParseBytes(id, UInt32($0.count), $0.baseAddress, []) } == noErr, "\(kind)")
            var offset: Int64 = 0, flags = AudioFileStreamSeekFlags()
            #expect(AudioFileStreamSeek(id, .max, &offset, &flags) == kAudio_ParamError, "\(kind) Seek(Int64.max)")
            #expect(AudioFileStreamSeek(id, -1, &offset, &flags) == kAudio_ParamError, "\(kind) Seek(-1)")
            if kind != "WAVE" {
                #expect(AudioFileStreamSeek(id, 1 << 60, &offset, &flags) == kAudio_ParamError, "\(kind) Seek(2^60)")
                var size = UInt32(24)
                var translation = (Int64(0), Int64.max / 2, UInt32(0), UInt32(0))
                #expect(AudioFileStreamGetProperty(id, kAudioFileStreamProperty_PacketToFrame, &size, &translation) == kAudio_ParamError, "\(kind) PacketToFrame")
                translation = (-1, 0, 0, 0)
                #expect(AudioFileStreamGetProperty(id, kAudioFileStreamProperty_FrameToPacket, &size, &translation) == kAudio_ParamError, "\(kind) FrameToPacket(-1)")
            }
            var size = UInt32(24)
            var translation = (Int64(0), Int64.max, UInt32(0), UInt32(0))
            #expect(AudioFileStreamGetProperty(id, kAudioFileStreamProperty_PacketToByte, &size, &translation) == kAudio_ParamError, "\(kind) PacketToByte")
            // The stream stays usable: a valid seek still works.
            #expect(AudioFileStreamSeek(id, 1, &offset, &flags) == noErr, "\(kind) Seek(1)")
        }
    }

    @Test("defect02CAFNegativePriming: a CAF whose 'pakt' priming is -1 is refused by convert and info (exit 1, naming the field, no partial output) and by ExtAudioFileOpenURL ('dta?')")
    func cafNegativePriming() throws {
        let wav = temporaryPath("priming.wav"), caf = temporaryPath("priming.caf"), out = temporaryPath("priming-out.wav")
        defer { [wav, caf, out, out + ".partial"].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        #expect(try ExternalTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "0.3", "sine", "440"]).status == 0)
        #expect(try AQJackCommand.run(["convert", wav, caf, "--codec", "aac"]).status == 0)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: caf)))
        let pakt = try #require((8 ..< bytes.count - 4).first { bytes[$0 ..< $0 + 4].elementsEqual("pakt".utf8) })
        // 'pakt' type, 8-byte size, then packets (8), valid frames (8), priming (4), remainder (4).
        for index in 0 ..< 4 { bytes[pakt + 12 + 16 + index] = 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: caf))
        let convert = try AQJackCommand.run(["convert", caf, out])
        #expect(convert.status == 1 && convert.standardError.contains("priming"), "\(convert.status) \(convert.standardError)")
        #expect(!FileManager.default.fileExists(atPath: out) && !FileManager.default.fileExists(atPath: out + ".partial"))
        let info = try AQJackCommand.run(["info", caf])
        #expect(info.status == 1 && !info.standardOutput.contains("priming frames: -1"), "\(info.status) \(info.standardOutput) \(info.standardError)")
        var file: ExtAudioFileRef?
        #expect(ExtAudioFileOpenURL(URL(fileURLWithPath: caf) as CFURL, &file) == kAudioFileInvalidFileError)
    }

    @Test("defect10FuzzerReachesTheStreams: FuzzParsers has AudioFileStream, callback and ExtAudioFile targets; fuzz.sh seeds every target with its own selector and replays the regression corpus")
    func fuzzerTargets() throws {
        let target = try String(contentsOfFile: packageRoot + "/Sources/FuzzParsers/FuzzParsers.swift", encoding: .utf8)
        #expect(target.contains("case cookie = 0, config, adtsHeaders, packetFile, frames, osc, partial, stream, callbacks, extAudioFile"))
        #expect(target.contains("AudioFileStreamParseBytes") && target.contains("AudioFileOpenWithCallbacks") && target.contains("ExtAudioFileOpenURL"))
        let script = try String(contentsOfFile: packageRoot + "/Scripts/fuzz.sh", encoding: .utf8)
        #expect(script.contains(#"printf '\x06'; cat "$work/small.$ext"; } > "$seeds/partial-$ext""#))
        #expect(script.contains(#"printf '\x05/aqjack/status"#))
        #expect(script.contains(#"\\x07"#) && script.contains(#"'\x08\x0c'"#) && script.contains(#"printf '\x09'"#))
        #expect(script.contains("Tests/FuzzCorpus/regressions.tar.xz") && script.contains("-dict=Scripts/fuzz.dict"))
        // The campaign's failures came through the stream (7) and ExtAudioFile (9) targets; the
        // callback target reads the same files as ExtAudioFile's.
        let selectors = Set(try Self.regressionInputs().compactMap(\.1.first))
        #expect(selectors.isSuperset(of: [7, 9]), "\(selectors)")
    }
}
