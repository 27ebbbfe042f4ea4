import AQTestSupport
import AudioToolbox
import Foundation
import Testing

/// ExtAudioFile as Apple-style code calls it (issue 13), checked against `aqjack convert` (the
/// same conversion, run as a command), libsndfile and ffmpeg.
@Suite("ExtAudioFile (no server needed)")
struct ExtAudioFileTests {
    /// A client format: float or 16-bit, interleaved or not.
    static func clientFormat(rate: Double, channels: UInt32, float: Bool, interleaved: Bool = true) -> AudioStreamBasicDescription {
        let bytes: UInt32 = float ? 4 : 2
        let perFrame = interleaved ? bytes * channels : bytes
        return AudioStreamBasicDescription(
            mSampleRate: rate, mFormatID: kAudioFormatLinearPCM,
            mFormatFlags: (float ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger) | kAudioFormatFlagIsPacked
                | (interleaved ? 0 : kAudioFormatFlagIsNonInterleaved),
            mBytesPerPacket: perFrame, mFramesPerPacket: 1, mBytesPerFrame: perFrame, mChannelsPerFrame: channels,
            mBitsPerChannel: bytes * 8, mReserved: 0)
    }

    /// Reads the whole file through ExtAudioFile in `client` format, `chunk` frames per call,
    /// as interleaved Floats (16-bit samples divided by 32768: exact).
    static func readAll(_ path: String, client: AudioStreamBasicDescription, chunk: Int = 4096) throws -> [Float] {
        var file: ExtAudioFileRef?
        try check(ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file), "open \(path)")
        defer { ExtAudioFileDispose(file!) }
        var format = client
        try check(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, UInt32(MemoryLayout.size(ofValue: format)), &format), "client format")
        let channels = Int(client.mChannelsPerFrame)
        let interleaved = client.mFormatFlags & kAudioFormatFlagIsNonInterleaved == 0
        let bytes = Int(client.mBitsPerChannel / 8)
        let buffers = interleaved ? 1 : channels
        let list = AudioBufferList.allocate(maximumBuffers: buffers)
        defer { free(list.unsafeMutablePointer) }
        let storage = UnsafeMutableRawPointer.allocate(byteCount: chunk * channels * bytes, alignment: 16)
        defer { storage.deallocate() }
        var result: [Float] = []
        while true {
            for index in 0 ..< buffers {
                let size = interleaved ? chunk * channels * bytes : chunk * bytes
                list[index] = AudioBuffer(mNumberChannels: interleaved ? UInt32(channels) : 1, mDataByteSize: UInt32(size),
                                          mData: storage + index * chunk * bytes)
            }
            var frames = UInt32(chunk)
            try check(ExtAudioFileRead(file!, &frames, list.unsafeMutablePointer), "read")
            if frames == 0 { break }
            for frame in 0 ..< Int(frames) {
                for channel in 0 ..< channels {
                    let offset = interleaved ? (frame * channels + channel) * bytes : channel * chunk * bytes + frame * bytes
                    result.append(bytes == 4 ? storage.load(fromByteOffset: offset, as: Float.self)
                                  : Float(storage.load(fromByteOffset: offset, as: Int16.self)) / 32768)
                }
            }
        }
        return result
    }

    static func check(_ status: OSStatus, _ what: String) throws {
        guard status == noErr else { throw NSError(domain: "ExtAudioFile", code: Int(status), userInfo: [NSLocalizedDescriptionKey: "\(what): \(status)"]) }
    }

    /// A 3 s stereo 48 kHz multi-sine source in `ext` (float WAV, 24-bit WAV, and through
    /// `aqjack convert`: FLAC, AAC in M4A and ADTS, ALAC in CAF).
    static func makeSource(_ ext: String) throws -> String {
        let floatWAV = ExternalTool.temporaryPath("ext-float", extension: "wav")
        try #require(MultiSine.writeFile(floatWAV, frameCount: 144_000, channelCount: 2, sampleRate: 48000, encoding: ["-e", "floating-point", "-b", "32"]) == 0)
        if ext == "float.wav" { return floatWAV }
        defer { try? FileManager.default.removeItem(atPath: floatWAV) }
        let output = ExternalTool.temporaryPath("ext-src", extension: ext == "alac.caf" ? "caf" : ext)
        var arguments = ["convert", floatWAV, output]
        switch ext {
        case "wav": arguments += ["-b", "24"]
        case "flac": arguments += ["-b", "24"]
        case "alac.caf": arguments += ["--codec", "alac", "-b", "24"]
        default: break
        }
        let result = try AQJackCommand.run(arguments)
        try #require(result.status == 0, "\(result.standardError)")
        return output
    }

    @Test("Reading any file aqjack reads at 44.1 kHz matches aqjack convert -r 44100 sample for sample (float, 16-bit, non-interleaved)",
          arguments: ["float.wav", "wav", "flac", "m4a", "aac", "alac.caf"])
    func readMatchesConvert(_ ext: String) throws {
        let source = try Self.makeSource(ext)
        let floatOut = ExternalTool.temporaryPath("ext-conv", extension: "wav")
        let shortOut = ExternalTool.temporaryPath("ext-conv16", extension: "wav")
        defer { for path in [source, floatOut, shortOut] { try? FileManager.default.removeItem(atPath: path) } }
        // convert writes float for float and lossy sources, the source's depth for integers.
        let integerSource = ["wav", "flac", "alac.caf"].contains(ext)
        let converted16 = try AQJackCommand.run(["convert", source, shortOut, "-r", "44100", "-b", "16"])
        try #require(converted16.status == 0, "\(converted16.standardError)")
        let expected16 = try SoundFileContents(path: shortOut).samples
        let read16 = try Self.readAll(source, client: Self.clientFormat(rate: 44100, channels: 2, float: false), chunk: 1000)
        #expect(read16.count == expected16.count)
        #expect(read16 == expected16, "16-bit client: first difference at \(String(describing: zip(read16, expected16).enumerated().first { $0.element.0 != $0.element.1 }?.offset))")
        if !integerSource {
            let converted = try AQJackCommand.run(["convert", source, floatOut, "-r", "44100"])
            try #require(converted.status == 0, "\(converted.standardError)")
            let expected = try SoundFileContents(path: floatOut).samples
            let readFloat = try Self.readAll(source, client: Self.clientFormat(rate: 44100, channels: 2, float: true))
            let readPlanar = try Self.readAll(source, client: Self.clientFormat(rate: 44100, channels: 2, float: true, interleaved: false), chunk: 777)
            #expect(readFloat.count == expected.count && readFloat == expected)
            #expect(readPlanar == expected)
        }
        // The length at the client rate: 3 s of 44.1 kHz, whatever the codec (ADTS has no
        // priming information: its length is its packets').
        if ext != "aac" { #expect(read16.count == 2 * 132_300, "\(read16.count / 2) frames") }
    }

    @Test("FileLengthFrames, FileDataFormat and PacketTable of an AAC file; Seek then Read equals the same frames read through")
    func seekAndProperties() throws {
        for ext in ["m4a", "wav"] {
            let source = try Self.makeSource(ext)
            defer { try? FileManager.default.removeItem(atPath: source) }
            var file: ExtAudioFileRef?
            try Self.check(ExtAudioFileOpenURL(URL(fileURLWithPath: source) as CFURL, &file), "open")
            defer { ExtAudioFileDispose(file!) }
            var length: Int64 = 0
            var size = UInt32(MemoryLayout<Int64>.size)
            try Self.check(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_FileLengthFrames, &size, &length), "length")
            #expect(length == 144_000)
            var fileFormat = AudioStreamBasicDescription()
            size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            try Self.check(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_FileDataFormat, &size, &fileFormat), "format")
            #expect(fileFormat.mFormatID == (ext == "m4a" ? kAudioFormatMPEG4AAC : kAudioFormatLinearPCM) && fileFormat.mChannelsPerFrame == 2)
            var table = AudioFilePacketTableInfo()
            size = UInt32(MemoryLayout<AudioFilePacketTableInfo>.size)
            let tableStatus = ExtAudioFileGetProperty(file!, kExtAudioFileProperty_PacketTable, &size, &table)
            if ext == "m4a" {
                #expect(tableStatus == noErr && table.mPrimingFrames == 1024 && table.mNumberValidFrames == 144_000)
                // No client format yet: an encoded file cannot be read as it is.
                var frames: UInt32 = 16
                let list = AudioBufferList.allocate(maximumBuffers: 1)
                defer { free(list.unsafeMutablePointer) }
                var bytes = [Float](repeating: 0, count: 32)
                let status = bytes.withUnsafeMutableBytes { raw in
                    list[0] = AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(raw.count), mData: raw.baseAddress)
                    return ExtAudioFileRead(file!, &frames, list.unsafeMutablePointer)
                }
                #expect(status == kExtAudioFileError_NonPCMClientFormat && frames == 0)
            } else {
                #expect(tableStatus == kExtAudioFileError_InvalidProperty)
            }
            #expect(ExtAudioFileSeek(file!, 144_001) == kExtAudioFileError_InvalidSeek)
            #expect(ExtAudioFileSeek(file!, -1) == kExtAudioFileError_InvalidSeek)
        }
        // A seek lands on the same frames as reading through (AAC: decoded from the start).
        for ext in ["m4a", "flac"] {
            let source = try Self.makeSource(ext)
            defer { try? FileManager.default.removeItem(atPath: source) }
            let client = Self.clientFormat(rate: 48000, channels: 2, float: true)
            let whole = try Self.readAll(source, client: client)
            var file: ExtAudioFileRef?
            try Self.check(ExtAudioFileOpenURL(URL(fileURLWithPath: source) as CFURL, &file), "open")
            defer { ExtAudioFileDispose(file!) }
            var format = client
            try Self.check(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, 40, &format), "client")
            try Self.check(ExtAudioFileSeek(file!, 50_000), "seek")
            var position: Int64 = 0
            try Self.check(ExtAudioFileTell(file!, &position), "tell")
            #expect(position == 50_000)
            var frames: UInt32 = 2048
            var samples = [Float](repeating: 0, count: 4096)
            let list = AudioBufferList.allocate(maximumBuffers: 1)
            defer { free(list.unsafeMutablePointer) }
            let status = samples.withUnsafeMutableBytes { raw in
                list[0] = AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(raw.count), mData: raw.baseAddress)
                return ExtAudioFileRead(file!, &frames, list.unsafeMutablePointer)
            }
            #expect(status == noErr && frames == 2048)
            #expect(samples == Array(whole[100_000 ..< 104_096]), "\(ext): frames after a seek to 50000")
            try Self.check(ExtAudioFileTell(file!, &position), "tell")
            #expect(position == 52_048)
        }
    }

    /// Writes 3 s of the multi-sine from a float client (`interleaved` or not) in 1000-frame
    /// calls, asynchronously when `async`.
    static func write(_ path: String, fileType: AudioFileTypeID, fileFormat: AudioStreamBasicDescription, clientRate: Double,
                      interleaved: Bool, async: Bool) throws -> [Float] {
        var file: ExtAudioFileRef?
        var format = fileFormat
        try check(ExtAudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, fileType, &format, nil, AudioFileFlags.eraseFile.rawValue, &file), "create")
        var client = clientFormat(rate: clientRate, channels: 2, float: true, interleaved: interleaved)
        try check(ExtAudioFileSetProperty(file!, kExtAudioFileProperty_ClientDataFormat, 40, &client), "client")
        let frames = Int(3 * clientRate)
        let samples = MultiSine.interleaved(frameCount: frames, channelCount: 2, sampleRate: clientRate)
        if async { try check(ExtAudioFileWriteAsync(file!, 0, nil), "prime") }
        let list = AudioBufferList.allocate(maximumBuffers: interleaved ? 1 : 2)
        defer { free(list.unsafeMutablePointer) }
        var planar = [Float](repeating: 0, count: 2000)
        var start = 0
        while start < frames {
            let count = min(1000, frames - start)
            let status = samples.withUnsafeBufferPointer { interleavedSamples in
                planar.withUnsafeMutableBufferPointer { planes in
                    if interleaved {
                        list[0] = AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(count * 8),
                                              mData: UnsafeMutableRawPointer(mutating: interleavedSamples.baseAddress! + 2 * start))
                    } else {
                        for frame in 0 ..< count {
                            planes[frame] = interleavedSamples[2 * (start + frame)]
                            planes[1000 + frame] = interleavedSamples[2 * (start + frame) + 1]
                        }
                        list[0] = AudioBuffer(mNumberChannels: 1, mDataByteSize: UInt32(count * 4), mData: UnsafeMutableRawPointer(planes.baseAddress!))
                        list[1] = AudioBuffer(mNumberChannels: 1, mDataByteSize: UInt32(count * 4), mData: UnsafeMutableRawPointer(planes.baseAddress! + 1000))
                    }
                    return async ? ExtAudioFileWriteAsync(file!, UInt32(count), list.unsafePointer)
                        : ExtAudioFileWrite(file!, UInt32(count), list.unsafePointer)
                }
            }
            try check(status, "write at \(start)")
            start += count
        }
        try check(ExtAudioFileDispose(file!), "dispose")
        return samples
    }

    @Test("Writing 16-bit AIFF from a non-interleaved float client is bit-exact; WriteAsync gives the same file")
    func writePCM() throws {
        var aiff16 = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                                 mFormatFlags: kAudioFormatFlagIsBigEndian | kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked,
                                                 mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 2,
                                                 mBitsPerChannel: 16, mReserved: 0)
        for async in [false, true] {
            let path = ExternalTool.temporaryPath("ext-write", extension: "aiff")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let samples = try Self.write(path, fileType: kAudioFileAIFFType, fileFormat: aiff16, clientRate: 48000, interleaved: false, async: async)
            let contents = try SoundFileContents(path: path)
            #expect(contents.frames == 144_000 && contents.channels == 2 && contents.sampleRate == 48000)
            // Core Audio's float → 16-bit: scaled by 32768, rounded to nearest, clipped.
            let expected = samples.map { Float(Int16(max(-32768, min(32767, (Double($0) * 32768).rounded())))) / 32768 }
            #expect(contents.samples == expected, "async \(async)")
        }
        // An existing file without kAudioFileFlags_EraseFile is refused and left as it was.
        let existing = ExternalTool.temporaryPath("ext-existing", extension: "wav")
        _ = FileManager.default.createFile(atPath: existing, contents: Data("keep".utf8))
        defer { try? FileManager.default.removeItem(atPath: existing) }
        var file: ExtAudioFileRef?
        aiff16.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked
        #expect(ExtAudioFileCreateWithURL(URL(fileURLWithPath: existing) as CFURL, kAudioFileWAVEType, &aiff16, nil, 0, &file) == kAudioFilePermissionsError)
        #expect(FileManager.default.contents(atPath: existing) == Data("keep".utf8))
    }

    @Test("Writing AAC (rate 0: the client's) from 44.1 kHz float: ffprobe reads exactly 3 s from M4A, ExtAudioFile reads exactly 3 s back from M4A and CAF, SNR ≥ 20 dB",
          arguments: [kAudioFileM4AType, kAudioFileCAFType])
    func writeAAC(_ fileType: AudioFileTypeID) throws {
        let path = ExternalTool.temporaryPath("ext-aac", extension: fileType == kAudioFileM4AType ? "m4a" : "caf")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let aac = AudioStreamBasicDescription(mSampleRate: 0, mFormatID: kAudioFormatMPEG4AAC, mFormatFlags: 0, mBytesPerPacket: 0,
                                              mFramesPerPacket: 1024, mBytesPerFrame: 0, mChannelsPerFrame: 2, mBitsPerChannel: 0, mReserved: 0)
        let samples = try Self.write(path, fileType: fileType, fileFormat: aac, clientRate: 44100, interleaved: true, async: true)
        let probe = try ExternalTool.probe(path)
        #expect(probe["codec_name"] == "aac" && probe["sample_rate"] == "44100" && probe["channels"] == "2", "\(probe)")
        // M4A: ffprobe reads the edit list's exact length, and ffmpeg trims the priming (FFmpeg
        // 5.1 leaves the remainder). CAF: FFmpeg ignores 'pakt', so its decode starts with the
        // 1024 priming frames; aqjack's reader below gives the exact length from 'pakt'.
        let isM4A = fileType == kAudioFileM4AType
        if isM4A { #expect(probe["duration"] == "3.000000", "\(probe)") }
        let decoded = try ExternalTool.decodeWithFFmpeg(path)
        #expect(decoded.count / 2 >= samples.count / 2 + (isM4A ? 0 : 1024), "ffmpeg decoded \(decoded.count / 2) frames, wrote \(samples.count / 2)")
        let snr = MultiSine.snr(Array(decoded.prefix(samples.count + (isM4A ? 0 : 2048))), reference: samples, channelCount: 2, lag: isM4A ? 0 : 1024)
        #expect(snr >= 20, "SNR \(snr) dB")
        // Read back through ExtAudioFile: the same length, trimmed by the packet table.
        let back = try Self.readAll(path, client: Self.clientFormat(rate: 44100, channels: 2, float: true))
        #expect(back.count == samples.count)
    }

    @Test("Wrapping an AudioFileID opened for reading reads it; the ID stays open after Dispose")
    func wrapForReading() throws {
        let source = try Self.makeSource("wav")
        defer { try? FileManager.default.removeItem(atPath: source) }
        var id: AudioFileID?
        try Self.check(AudioFileOpenURL(URL(fileURLWithPath: source) as CFURL, .readPermission, 0, &id), "open")
        var file: ExtAudioFileRef?
        try Self.check(ExtAudioFileWrapAudioFileID(id!, false, &file), "wrap")
        var length: Int64 = 0
        var size: UInt32 = 8
        try Self.check(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_FileLengthFrames, &size, &length), "length")
        #expect(length == 144_000)
        var wrapped: AudioFileID?
        size = UInt32(MemoryLayout<AudioFileID?>.size)
        try Self.check(ExtAudioFileGetProperty(file!, kExtAudioFileProperty_AudioFile, &size, &wrapped), "file")
        #expect(wrapped == id)
        #expect(ExtAudioFileDispose(file!) == noErr)
        #expect(ExtAudioFileDispose(file!) == kAudio_ParamError)
        var packets: UInt64 = 0
        size = 8
        #expect(AudioFileGetProperty(id!, kAudioFilePropertyAudioDataPacketCount, &size, &packets) == noErr && packets == 144_000)
        #expect(AudioFileClose(id!) == noErr)
        #expect(ExtAudioFileWrapAudioFileID(id!, false, &file) == kAudioFileNotOpenError)
    }
}
