import AQTestSupport
import AudioToolbox
import Foundation
import Testing

/// What a streaming player built on AudioFileStream sees: the properties in order, and the
/// packets (bytes and sizes).
final class StreamLog {
    var properties: [AudioFileStreamPropertyID] = []
    var packets: [[UInt8]] = []
    var variable = false
    var dataFormat = AudioStreamBasicDescription()
}

/// The callbacks as an Apple program writes them (C function pointers, client data as context).
let streamPropertyProc: AudioFileStream_PropertyListenerProc = { clientData, stream, propertyID, _ in
    let log = Unmanaged<StreamLog>.fromOpaque(clientData).takeUnretainedValue()
    log.properties.append(propertyID)
    if propertyID == kAudioFileStreamProperty_DataFormat {
        var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataFormat, &size, &log.dataFormat)
    }
}

let streamPacketsProc: AudioFileStream_PacketsProc = { clientData, numberBytes, numberPackets, inputData, packetDescriptions in
    let log = Unmanaged<StreamLog>.fromOpaque(clientData).takeUnretainedValue()
    let bytes = inputData.assumingMemoryBound(to: UInt8.self)
    if let packetDescriptions {
        log.variable = true
        for index in 0 ..< Int(numberPackets) {
            let description = packetDescriptions[index]
            log.packets.append(Array(UnsafeBufferPointer(start: bytes + Int(description.mStartOffset), count: Int(description.mDataByteSize))))
        }
    } else {
        // Constant-size packets (linear PCM): numberBytes / numberPackets each.
        let size = Int(numberBytes) / Int(numberPackets)
        for index in 0 ..< Int(numberPackets) { log.packets.append(Array(UnsafeBufferPointer(start: bytes + index * size, count: size))) }
    }
}

@Suite("AudioFileStream: WAVE, CAF, ADTS, MP3 and M4A fed in pieces of 1 byte to 64 KiB (no server needed)")
struct AudioFileStreamTests {
    /// Parses `data` in pieces of `chunk` bytes, from `start` (with a discontinuity).
    static func parse(_ data: [UInt8], chunk: Int, log: StreamLog = StreamLog(), stream existing: AudioFileStreamID? = nil,
                      from start: Int = 0) throws -> (StreamLog, AudioFileStreamID) {
        var stream = existing
        if stream == nil {
            try #require(AudioFileStreamOpen(Unmanaged.passUnretained(log).toOpaque(), streamPropertyProc, streamPacketsProc, 0, &stream) == noErr)
        }
        var position = start
        var flags: AudioFileStreamParseFlags = existing == nil ? [] : .discontinuity
        while position < data.count {
            let count = min(chunk, data.count - position)
            let status = data.withUnsafeBytes { AudioFileStreamParseBytes(stream!, UInt32(count), $0.baseAddress! + position, flags) }
            try #require(status == noErr, "ParseBytes at \(position): \(status)")
            flags = []
            position += count
        }
        return (log, stream!)
    }

    /// The packets aqjack's AudioFile reads from `path`.
    static func filePackets(_ path: String) throws -> [[UInt8]] {
        var file: AudioFileID?
        try #require(AudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, .readPermission, 0, &file) == noErr)
        defer { AudioFileClose(file!) }
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var descriptions = [AudioStreamPacketDescription](repeating: AudioStreamPacketDescription(), count: 64)
        while true {
            var bytes = UInt32(buffer.count)
            var count = UInt32(64)
            try #require(AudioFileReadPacketData(file!, false, &bytes, &descriptions, Int64(packets.count), &count, &buffer) == noErr)
            if count == 0 { break }
            for description in descriptions.prefix(Int(count)) {
                packets.append(Array(buffer[Int(description.mStartOffset) ..< Int(description.mStartOffset) + Int(description.mDataByteSize)]))
            }
        }
        return packets
    }

    /// A 3 s stereo 44.1 kHz multi-sine in `kind`: 16-bit WAVE (sox), PCM CAF, and through
    /// `aqjack convert`: AAC in ADTS, CAF and M4A; MP3 through ffmpeg's LAME.
    static func makeFile(_ kind: String) throws -> String {
        let wav = ExternalTool.temporaryPath("stream", extension: "wav")
        try #require(MultiSine.writeFile(wav, frameCount: 132_300, channelCount: 2, sampleRate: 44100, encoding: ["-b", "16", "-e", "signed-integer"]) == 0)
        if kind == "wav" { return wav }
        defer { try? FileManager.default.removeItem(atPath: wav) }
        let output = ExternalTool.temporaryPath("stream", extension: kind == "aac.caf" ? "caf" : kind)
        if kind == "mp3" {
            try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", "libmp3lame", "-b:a", "128k", output]).status == 0)
            return output
        }
        var arguments = ["convert", wav, output]
        if kind == "aac.caf" { arguments += ["--codec", "aac"] }
        let result = try AQJackCommand.run(arguments)
        try #require(result.status == 0, "\(result.standardError)")
        return output
    }

    @Test("Every piece size gives the same properties and packets; PCM is the file's frames bit for bit, AAC the packets AudioFile reads",
          arguments: ["wav", "caf", "aac", "aac.caf", "m4a", "mp3"])
    func chunkSizes(_ kind: String) throws {
        let path = try Self.makeFile(kind)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let (reference, referenceStream) = try Self.parse(data, chunk: 65536)
        AudioFileStreamClose(referenceStream)
        #expect(reference.properties.last == kAudioFileStreamProperty_ReadyToProducePackets)
        #expect(reference.properties.first == kAudioFileStreamProperty_FileFormat)
        #expect(reference.dataFormat.mChannelsPerFrame == 2 && reference.dataFormat.mSampleRate == 44100)
        for chunk in [1, 3, 1000, 4096] {
            let (log, stream) = try Self.parse(data, chunk: chunk)
            AudioFileStreamClose(stream)
            #expect(log.properties == reference.properties, "\(kind) in \(chunk)-byte pieces: properties")
            #expect(log.packets == reference.packets, "\(kind) in \(chunk)-byte pieces: \(log.packets.count) packets, \(reference.packets.count) in 64 KiB pieces")
        }
        switch kind {
        case "wav", "caf":
            #expect(!reference.variable && reference.packets.count == 132_300)
            // The frames as libsndfile reads them (16-bit: exact as Float).
            let samples = try SoundFileContents(path: path).samples
            let streamed = reference.packets.flatMap { frame in
                stride(from: 0, to: frame.count, by: 2).map { index -> Float in
                    let raw = UInt16(frame[index]) | UInt16(frame[index + 1]) << 8
                    return Float(Int16(bitPattern: kind == "caf" && reference.dataFormat.mFormatFlags & kAudioFormatFlagIsBigEndian != 0 ? raw.byteSwapped : raw)) / 32768
                }
            }
            #expect(streamed == samples)
        case "mp3":
            #expect(reference.variable && reference.dataFormat.mFormatID == 0x2E6D_7033)
            let probe = try ExternalTool.probe(path)
            #expect(String(reference.packets.count) == probe["nb_read_packets"], "\(reference.packets.count) frames, ffprobe \(probe["nb_read_packets"] ?? "?")")
        default:
            #expect(reference.variable && reference.dataFormat.mFormatID == kAudioFormatMPEG4AAC && reference.dataFormat.mFramesPerPacket == 1024)
            #expect(reference.packets == (try Self.filePackets(path)))
            #expect(String(reference.packets.count) == (try ExternalTool.probe(path))["nb_read_packets"])
            if kind != "aac" {
                // The packet table: aqjack's 1024 priming frames and exactly 3 s of audio.
                var stream: AudioFileStreamID?
                let log = StreamLog()
                try #require(AudioFileStreamOpen(Unmanaged.passUnretained(log).toOpaque(), streamPropertyProc, streamPacketsProc, 0, &stream) == noErr)
                defer { AudioFileStreamClose(stream!) }
                _ = try Self.parse(data, chunk: 65536, log: log, stream: stream)
                var table = AudioFilePacketTableInfo()
                var size = UInt32(MemoryLayout<AudioFilePacketTableInfo>.size)
                #expect(AudioFileStreamGetProperty(stream!, kAudioFileStreamProperty_PacketTableInfo, &size, &table) == noErr)
                #expect(table.mPrimingFrames == 1024 && table.mNumberValidFrames == 132_300)
            }
        }
    }

    @Test("Seek: WAVE, CAF and M4A give the exact offset of a packet; parsing from there starts with that packet")
    func seek() throws {
        for kind in ["wav", "aac.caf", "m4a"] {
            let path = try Self.makeFile(kind)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let (all, stream) = try Self.parse(data, chunk: 65536)
            defer { AudioFileStreamClose(stream) }
            var dataOffset: Int64 = 0
            var size = UInt32(8)
            #expect(AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataOffset, &size, &dataOffset) == noErr)
            var offset: Int64 = 0
            var flags = AudioFileStreamSeekFlags()
            #expect(AudioFileStreamSeek(stream, 100, &offset, &flags) == noErr)
            #expect(!flags.contains(.offsetIsEstimated))
            all.packets.removeAll()
            _ = try Self.parse(data, chunk: 5000, log: all, stream: stream, from: Int(dataOffset + offset))
            let (whole, wholeStream) = try Self.parse(data, chunk: 65536)
            AudioFileStreamClose(wholeStream)
            #expect(all.packets.first == whole.packets[100], "\(kind): first packet after a seek to 100")
            #expect(all.packets.count == whole.packets.count - 100, "\(kind)")
        }
        // Before the header: no seek.
        var stream: AudioFileStreamID?
        let log = StreamLog()
        AudioFileStreamOpen(Unmanaged.passUnretained(log).toOpaque(), streamPropertyProc, streamPacketsProc, 0, &stream)
        defer { AudioFileStreamClose(stream!) }
        var offset: Int64 = 0
        var flags = AudioFileStreamSeekFlags()
        #expect(AudioFileStreamSeek(stream!, 10, &offset, &flags) == kAudioFileStreamError_DataUnavailable)
        // Not audio: 'typ?' once 4 KiB say so, and the stream stays failed.
        let junk = [UInt8](repeating: 0x41, count: 5000)
        #expect(junk.withUnsafeBytes { AudioFileStreamParseBytes(stream!, 5000, $0.baseAddress, []) } == kAudioFileStreamError_UnsupportedFileType)
        #expect(junk.withUnsafeBytes { AudioFileStreamParseBytes(stream!, 10, $0.baseAddress, []) } == kAudioFileStreamError_UnsupportedFileType)
    }
}
