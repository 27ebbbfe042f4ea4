// A libFuzzer target for the parsers: OSC datagrams, AAC magic cookies (ES_Descriptor / AudioSpecificConfig),
// ADTS headers, the ADTS, CAF and MPEG-4 packet readers on whole files, every file the CLI opens
// (libsndfile's WAVE/AIFF/CAF/FLAC with our header checks, decoded to frames), and growing
// prefixes of files (partial input). Built and run by Scripts/fuzz.sh:
//
//   swift build --product FuzzParsers --sanitize fuzzer --sanitize address
//
// In a normal build this is a no-op executable (libFuzzer supplies main when fuzzing). The first
// input byte picks the parser; the rest is its input. Any crash, trap or sanitizer report is a
// bug: every parser must answer bad input with an error.
import AQCodecs
import AQControl
import AQMedia
import CAudioTypes
import Glibc

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParsers(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch data[0] % 7 {
    case 0:
        // The magic cookie as AudioFile, the converter and the queue read it.
        if let descriptor = try? ElementaryStreamDescriptor(parsing: body) {
            _ = try? ElementaryStreamDescriptor(parsing: descriptor.bytes)
        }
    case 1:
        _ = try? AudioSpecificConfig(parsing: body)
    case 2:
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
    case 3:
        // A whole file through the packet readers (ADTS, CAF, MPEG-4 by their first bytes).
        withFile(body) { readPackets(at: $0) }
    case 4:
        // A whole file as `aqjack info`, `convert` and `play` open it: the packet readers or
        // libsndfile (WAVE, AIFF, CAF, FLAC, ...) and our header checks, then every frame.
        withFile(body) { readFrames(at: $0) }
    case 5:
        // An OSC datagram as `aqjack record --osc` receives it; what decodes must re-encode
        // to a message that decodes the same.
        if let message = try? OSCMessage(decoding: body) {
            precondition((try? OSCMessage(decoding: message.encoded)) == message || message.arguments.contains {
                if case .float32(let value) = $0 { return value.isNaN } else { return false }
            }, "an OSC message did not survive its own encoding")
        }
    default:
        // Partial input, as a file still being written or a stream still arriving
        // (AudioFileStream's case): growing prefixes of the file, each opened and read.
        for eighths in [1, 2, 3, 5, 8] {
            withFile(Array(body.prefix(body.count * eighths / 8))) { readFrames(at: $0) }
        }
    }
    return 0
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
    let capacity = 1 << 16
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    let descriptions = UnsafeMutablePointer<AudioStreamPacketDescription>.allocate(capacity: 64)
    defer {
        buffer.deallocate()
        descriptions.deallocate()
    }
    var packet: Int64 = 0
    while let read = try? reader.readPackets(startPacket: packet, packetCount: 64, into: buffer, capacity: capacity, descriptions: descriptions),
          read.packets > 0 {
        packet += Int64(read.packets)
    }
    _ = try? ElementaryStreamDescriptor(parsing: reader.magicCookie)
}
