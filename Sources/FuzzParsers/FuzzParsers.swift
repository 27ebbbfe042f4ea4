// A libFuzzer target for the parsers: OSC datagrams, AAC magic cookies (ES_Descriptor / AudioSpecificConfig),
// ADTS headers, the ADTS, CAF and MPEG-4 packet readers on whole files, every file the CLI opens
// (libsndfile's WAVE/AIFF/CAF/FLAC with our header checks, decoded to frames), growing
// prefixes of files (partial input), and Apple's three entry points for untrusted bytes as a
// program uses them: AudioFileStreamParseBytes in chunks with seeks and property queries,
// AudioFileOpenWithCallbacks with short reads, and ExtAudioFileOpenURL read to the end; and a
// Standard MIDI File as `aqjack play FILE.mid` reads it.
// Built and run by Scripts/fuzz.sh:
//
//   swift build --product FuzzParsers --sanitize fuzzer --sanitize address
//
// In a normal build this is a no-op executable (libFuzzer supplies main when fuzzing). The first
// input byte picks the parser (``FuzzSelector``; the seeds in Scripts/fuzz.sh and the regression
// corpus in Tests/FuzzCorpus carry these values); the rest is its input. Any crash, trap or
// sanitizer report is a bug: every parser must answer bad input with an error.
import AQCodecs
import AQControl
import AQMedia
import AudioToolbox
import CAudioTypes
import Foundation
import Glibc

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParsers(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch FuzzSelector(rawValue: data[0] % FuzzSelector.count)! {
    case .cookie:
        // The magic cookie as AudioFile, the converter and the queue read it.
        if let descriptor = try? ElementaryStreamDescriptor(parsing: body) {
            _ = try? ElementaryStreamDescriptor(parsing: descriptor.bytes)
        }
    case .config:
        _ = try? AudioSpecificConfig(parsing: body)
    case .adtsHeaders:
        // Every ADTS header in the bytes, as the reader walks them.
        body.withUnsafeBytes { bytes in
            var offset = 0
            while offset + 7 <= bytes.count {
                if let header = ADTSHeader(parsing: UnsafeRawBufferPointer(rebasing: bytes[offset...])), header.frameLength > 0 {
                    _ = try? header.audioSpecificConfig
                    offset += header.frameLength
                } else {
                    offset += 1
                }
            }
        }
    case .packetFile:
        // A whole file through the packet readers (ADTS, CAF, MPEG-4 by their first bytes).
        withFile(body) { readPackets(at: $0) }
    case .frames:
        // A whole file as `aqjack info`, `convert` and `play` open it: the packet readers or
        // libsndfile (WAVE, AIFF, CAF, FLAC, ...) and our header checks, then every frame.
        withFile(body) { readFrames(at: $0) }
    case .midiFile:
        // A Standard MIDI File as `aqjack play FILE.mid` reads it: refused or read, in order.
        if let contents = try? StandardMIDIFileContents(bytes: body) {
            precondition(zip(contents.events, contents.events.dropFirst()).allSatisfy { $0.seconds <= $1.seconds } && contents.events.allSatisfy { $0.seconds >= 0 })
        }
    case .osc:
        // An OSC datagram as `aqjack record --osc` receives it; what decodes must re-encode
        // to a message that decodes the same.
        if let message = try? OSCMessage(decoding: body) {
            precondition((try? OSCMessage(decoding: message.encoded)) == message || message.arguments.contains {
                if case .float32(let value) = $0 { return value.isNaN } else { return false }
            }, "an OSC message did not survive its own encoding")
        }
    case .partial:
        // Partial input, as a file still being written or a stream still arriving
        // (AudioFileStream's case): growing prefixes of the file, each opened and read.
        for eighths in [1, 2, 3, 5, 8] {
            withFile(Array(body.prefix(body.count * eighths / 8))) { readFrames(at: $0) }
        }
    case .stream:
        // The second byte picks the chunk sizes and where to seek (``StreamSchedule``).
        guard let schedule = body.first else { return 0 }
        parseStream(Array(body.dropFirst()), schedule: StreamSchedule(schedule))
    case .callbacks:
        guard let readLimit = body.first else { return 0 }
        openWithCallbacks(Array(body.dropFirst()), readLimit: Int(readLimit) + 1)
    case .extAudioFile:
        withFile(body) { readExtAudioFile(at: $0) }
    }
    return 0
}

/// The first input byte's meaning (taken modulo ``count``).
enum FuzzSelector: UInt8, CaseIterable {
    case cookie = 0, config, adtsHeaders, packetFile, frames, osc, partial, stream, callbacks, extAudioFile, midiFile
    static var count: UInt8 { UInt8(allCases.count) }
}

/// Runs `body` with `bytes` in a file of their own.
private func withFile(_ bytes: [UInt8], _ body: (String) -> Void) {
    let path = "/dev/shm/aqjack-fuzz-\(getpid())"
    guard let file = fopen(path, "wb") else { return }
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
    defer { unlink(path) }
    body(path)
}

/// Opens a file as the CLI does and decodes every frame (at most 2^20, so a header claiming
/// hours of audio cannot make one input run for minutes).
private func readFrames(at path: String) {
    guard let source = try? FrameSource.open(path) else { return }
    let chunk = 4096
    let samples = UnsafeMutablePointer<Float>.allocate(capacity: chunk * max(1, source.channelCount))
    defer { samples.deallocate() }
    var total = 0
    while total < 1 << 20, let frames = try? source.read(into: samples, maximumFrames: chunk), frames > 0 { total += frames }
}

private func readPackets(at path: String) {
    guard let reader = (try? AudioFile.open(path: path))?.packetReader else { return }
    withPacketScratch { buffer, capacity, descriptions in
        var packet: Int64 = 0
        while let read = try? reader.readPackets(startPacket: packet, packetCount: 64, into: buffer, capacity: capacity, descriptions: descriptions),
              read.packets > 0 {
            packet += Int64(read.packets)
        }
    }
    _ = try? ElementaryStreamDescriptor(parsing: reader.magicCookie)
}

/// Runs `body` with a 64 KiB packet buffer and room for 64 packet descriptions.
private func withPacketScratch(_ body: (UnsafeMutableRawPointer, Int, UnsafeMutablePointer<AudioStreamPacketDescription>) -> Void) {
    let capacity = 1 << 16
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    let descriptions = UnsafeMutablePointer<AudioStreamPacketDescription>.allocate(capacity: 64)
    defer {
        buffer.deallocate()
        descriptions.deallocate()
    }
    body(buffer, capacity, descriptions)
}

// MARK: Apple's entry points

/// How a stream is fed: schedules 0-3 use one chunk size (1, 13, 4,096 or 65,536 bytes) and seek
/// once to the middle; other values draw chunk sizes and seeks from a generator seeded by the
/// byte, as a network player's reads and a listener's scrubbing would.
struct StreamSchedule {
    private var state: UInt64
    private let fixed: Int?

    init(_ byte: UInt8) {
        state = UInt64(byte) &* 0x9E37_79B9_7F4A_7C15 | 1
        fixed = byte < 4 ? [1, 13, 4096, 65536][Int(byte)] : nil
    }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    mutating func chunk() -> Int { fixed ?? [1, 2, 7, 13, 64, 500, 4096, 65536][Int(next() % 8)] }
    /// A packet to seek to now (nil: keep reading): values around and far past the stream's end.
    mutating func seek(afterChunks chunks: Int) -> Int64? {
        if fixed != nil { return chunks == 8 ? 2 : nil }
        guard next() % 16 == 0 else { return nil }
        return [0, 1, 5, 1000, -1, 1 << 31, 1 << 60, Int64.max][Int(next() % 8)]
    }
}

/// What the listener and packet callbacks see: the client data of the stream under test.
private final class StreamState {
    var stream: AudioFileStreamID?
    var packets = 0
}

/// Feeds `bytes` through AudioFileStream as `schedule` says, reading every property as a
/// program's listener would, and the translations after each seek.
private func parseStream(_ bytes: [UInt8], schedule: StreamSchedule) {
    var schedule = schedule
    let state = StreamState()
    var stream: AudioFileStreamID?
    let client = Unmanaged.passUnretained(state).toOpaque()
    guard AudioFileStreamOpen(client, { client, stream, property, _ in
        readStreamProperty(stream, property)
    }, { client, _, _, _, _ in
        Unmanaged<StreamState>.fromOpaque(client).takeUnretainedValue().packets += 1
    }, 0, &stream) == noErr, let stream else { return }
    state.stream = stream
    defer { AudioFileStreamClose(stream) }
    var position = 0
    var chunks = 0
    var flags = AudioFileStreamParseFlags()
    // At most 100,000 chunks (1-byte chunks of a 100 KB input), so no input runs for minutes.
    while position < bytes.count, chunks < 100_000 {
        let count = min(schedule.chunk(), bytes.count - position)
        let status = bytes.withUnsafeBytes { AudioFileStreamParseBytes(stream, UInt32(count), $0.baseAddress! + position, flags) }
        flags = []
        position += count
        chunks += 1
        if status != noErr { break }
        if let packet = schedule.seek(afterChunks: chunks) {
            var offset: Int64 = 0
            var seekFlags = AudioFileStreamSeekFlags()
            translate(stream, packet: packet)
            if AudioFileStreamSeek(stream, packet, &offset, &seekFlags) == noErr {
                var dataOffset: Int64 = 0
                var size = UInt32(8)
                AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_DataOffset, &size, &dataOffset)
                let (target, overflow) = dataOffset.addingReportingOverflow(offset)
                guard !overflow, target >= 0, target <= Int64(bytes.count) else { break }
                position = Int(target)
                flags = .discontinuity
            }
        }
    }
}

/// Reads property `property` as a listener does: its size, then its value into that many bytes.
private func readStreamProperty(_ stream: AudioFileStreamID, _ property: AudioFileStreamPropertyID) {
    var size: UInt32 = 0
    var writable: DarwinBoolean = false
    guard AudioFileStreamGetPropertyInfo(stream, property, &size, &writable) == noErr, size <= 1 << 24 else { return }
    let value = UnsafeMutableRawPointer.allocate(byteCount: max(1, Int(size)), alignment: 16)
    defer { value.deallocate() }
    AudioFileStreamGetProperty(stream, property, &size, value)
    for other in [kAudioFileStreamProperty_MaximumPacketSize, kAudioFileStreamProperty_PacketSizeUpperBound,
                  kAudioFileStreamProperty_AverageBytesPerPacket, kAudioFileStreamProperty_BitRate,
                  kAudioFileStreamProperty_AudioDataByteCount, kAudioFileStreamProperty_AudioDataPacketCount] {
        var scratch = (UInt64(0), UInt64(0))
        var scratchSize = UInt32(16)
        AudioFileStreamGetProperty(stream, other, &scratchSize, &scratch)
    }
}

/// The packet, frame and byte translations a player makes around a seek to `packet`.
private func translate(_ stream: AudioFileStreamID, packet: Int64) {
    var size = UInt32(24)
    var frames = (packet, packet, UInt32(0), UInt32(0))
    AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_PacketToFrame, &size, &frames)
    frames = (packet, 0, 0, 0)
    AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_FrameToPacket, &size, &frames)
    frames = (0, packet, 0, 0)
    AudioFileStreamGetProperty(stream, kAudioFileStreamProperty_PacketToByte, &size, &frames)
}

/// The bytes an AudioFileOpenWithCallbacks client serves, at most `readLimit` per read.
private final class CallbackSource {
    let bytes: [UInt8]
    let readLimit: Int
    init(_ bytes: [UInt8], readLimit: Int) { (self.bytes, self.readLimit) = (bytes, readLimit) }
}

/// Opens `bytes` through AudioFileOpenWithCallbacks (short reads of at most `readLimit`
/// bytes), then reads its properties and every packet.
private func openWithCallbacks(_ bytes: [UInt8], readLimit: Int) {
    let source = CallbackSource(bytes, readLimit: readLimit)
    var file: AudioFileID?
    let status = AudioFileOpenWithCallbacks(Unmanaged.passUnretained(source).toOpaque(), { client, position, count, buffer, actual in
        let source = Unmanaged<CallbackSource>.fromOpaque(client).takeUnretainedValue()
        guard position >= 0, position <= Int64(source.bytes.count) else { return kAudioFilePositionError }
        let take = min(Int(count), source.readLimit, source.bytes.count - Int(position))
        source.bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + Int(position), byteCount: take) }
        actual.pointee = UInt32(take)
        return noErr
    }, nil, { client in
        Int64(Unmanaged<CallbackSource>.fromOpaque(client).takeUnretainedValue().bytes.count)
    }, nil, 0, &file)
    guard status == noErr, let file else { return }
    defer { AudioFileClose(file) }
    for property in [kAudioFilePropertyDataFormat, kAudioFilePropertyAudioDataPacketCount, kAudioFilePropertyAudioDataByteCount,
                     kAudioFilePropertyMaximumPacketSize, kAudioFilePropertyPacketTableInfo, kAudioFilePropertyEstimatedDuration,
                     kAudioFilePropertyMagicCookieData] {
        var size: UInt32 = 0
        var writable: UInt32 = 0
        guard AudioFileGetPropertyInfo(file, property, &size, &writable) == noErr, size <= 1 << 24 else { continue }
        let value = UnsafeMutableRawPointer.allocate(byteCount: max(1, Int(size)), alignment: 16)
        AudioFileGetProperty(file, property, &size, value)
        value.deallocate()
    }
    withPacketScratch { buffer, capacity, descriptions in
        var packet: Int64 = 0
        for _ in 0 ..< 4096 {
            var bytes = UInt32(capacity)
            var packets = UInt32(64)
            guard AudioFileReadPacketData(file, false, &bytes, descriptions, packet, &packets, buffer) == noErr, packets > 0 else { break }
            packet += Int64(packets)
        }
    }
}

/// Opens a file with ExtAudioFileOpenURL, asks for float frames, and reads at most 2^20 of them.
private func readExtAudioFile(at path: String) {
    var file: ExtAudioFileRef?
    guard ExtAudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, &file) == noErr, let file else { return }
    defer { ExtAudioFileDispose(file) }
    var format = AudioStreamBasicDescription()
    var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    guard ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileDataFormat, &size, &format) == noErr else { return }
    var frames: Int64 = 0
    size = 8
    ExtAudioFileGetProperty(file, kExtAudioFileProperty_FileLengthFrames, &size, &frames)
    let channels = max(1, min(Int(format.mChannelsPerFrame), 64))
    var client = AudioStreamBasicDescription(mSampleRate: format.mSampleRate, mFormatID: kAudioFormatLinearPCM,
                                             mFormatFlags: kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked,
                                             mBytesPerPacket: UInt32(4 * channels), mFramesPerPacket: 1, mBytesPerFrame: UInt32(4 * channels),
                                             mChannelsPerFrame: UInt32(channels), mBitsPerChannel: 32, mReserved: 0)
    guard ExtAudioFileSetProperty(file, kExtAudioFileProperty_ClientDataFormat, UInt32(MemoryLayout<AudioStreamBasicDescription>.size),
                                  &client) == noErr else { return }
    let chunk = 4096
    let samples = UnsafeMutableRawPointer.allocate(byteCount: 4 * chunk * channels, alignment: 16)
    defer { samples.deallocate() }
    var total = 0
    while total < 1 << 20 {
        var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: UInt32(channels),
                                                                              mDataByteSize: UInt32(4 * chunk * channels), mData: samples))
        var count = UInt32(chunk)
        guard ExtAudioFileRead(file, &count, &list) == noErr, count > 0 else { break }
        total += Int(count)
    }
    ExtAudioFileSeek(file, frames / 2)
}
