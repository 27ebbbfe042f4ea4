import Foundation

/// Packets of a compressed stream laid out as a CAF that streams (Apple's afconvert order:
/// 'desc', 'kuki', 'pakt', then 'data'), which ffmpeg's CAF muxer does not write (its 'pakt'
/// comes after 'data') and which it cannot write at all for AAC. Test-side, independent of
/// aqjack's CAF code: the tests feed these files to AudioFileStream and to ffmpeg.
public enum StreamingCAF {
    /// A CAF's stream description ('desc'): the fields Core Audio's ASBD has, big-endian.
    public struct Description {
        public var sampleRate: Double
        public var formatID: UInt32
        public var formatFlags: UInt32
        public var framesPerPacket: UInt32
        public var channels: UInt32
        public init(sampleRate: Double, formatID: UInt32, formatFlags: UInt32, framesPerPacket: UInt32, channels: UInt32) {
            (self.sampleRate, self.formatID, self.formatFlags, self.framesPerPacket, self.channels) = (sampleRate, formatID, formatFlags, framesPerPacket, channels)
        }
    }

    /// The description, cookie and packets of a CAF of constant frames per packet (ffmpeg's
    /// Opus or AC-3 CAF, say); nil when it is not one.
    public static func read(_ path: String) -> (description: Description, cookie: [UInt8], packets: [[UInt8]])? {
        guard let bytes = FileManager.default.contents(atPath: path).map(Array.init), bytes.count > 8, bytes[0 ..< 4] == Array("caff".utf8)[...] else { return nil }
        func be32(_ at: Int) -> UInt32 { bytes[at ..< at + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        func be64(_ at: Int) -> UInt64 { bytes[at ..< at + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        var description: Description?, cookie: [UInt8] = [], sizes: [Int] = [], data: ArraySlice<UInt8> = []
        var at = 8
        while at + 12 <= bytes.count {
            let type = String(decoding: bytes[at ..< at + 4], as: UTF8.self), size = Int(Int64(bitPattern: be64(at + 4)))
            let body = at + 12, end = size < 0 ? bytes.count : min(bytes.count, body + size)
            switch type {
            case "desc":
                description = Description(sampleRate: Double(bitPattern: be64(body)), formatID: be32(body + 8), formatFlags: be32(body + 12),
                                          framesPerPacket: be32(body + 20), channels: be32(body + 24))
            case "kuki": cookie = Array(bytes[body ..< end])
            case "pakt":
                var cursor = body + 24
                for _ in 0 ..< Int(be64(body)) {
                    var value = 0
                    while cursor < end {
                        let byte = bytes[cursor]
                        cursor += 1
                        value = value << 7 | Int(byte & 0x7F)
                        if byte & 0x80 == 0 { break }
                    }
                    sizes.append(value)
                }
            case "data": data = bytes[(body + 4) ..< end]
            default: break
            }
            at = end
        }
        guard let description, description.framesPerPacket > 0 else { return nil }
        var packets: [[UInt8]] = [], offset = data.startIndex
        for size in sizes where offset + size <= data.endIndex {
            packets.append(Array(data[offset ..< offset + size]))
            offset += size
        }
        return (description, cookie, packets)
    }

    /// The raw AAC payloads of an ADTS file's frames (headers, and CRCs where present, dropped).
    public static func adtsPayloads(_ path: String) -> [[UInt8]] {
        guard let bytes = FileManager.default.contents(atPath: path).map(Array.init) else { return [] }
        var payloads: [[UInt8]] = [], at = 0
        while at + 7 <= bytes.count, bytes[at] == 0xFF, bytes[at + 1] & 0xF0 == 0xF0 {
            let length = Int(bytes[at + 3] & 0x03) << 11 | Int(bytes[at + 4]) << 3 | Int(bytes[at + 5]) >> 5
            let header = bytes[at + 1] & 0x01 == 1 ? 7 : 9
            guard length > header, at + length <= bytes.count else { break }
            payloads.append(Array(bytes[(at + header) ..< (at + length)]))
            at += length
        }
        return payloads
    }

    /// Writes `packets` as a streaming CAF: every frame valid (no priming or remainder), so a
    /// player that trims nothing and ffmpeg decode the same frames.
    public static func write(_ path: String, description: Description, cookie: [UInt8], packets: [[UInt8]]) throws {
        func be(_ value: UInt64, _ bytes: Int) -> [UInt8] { (0 ..< bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] { Array(type.utf8) + be(UInt64(body.count), 8) + body }
        var desc = be(description.sampleRate.bitPattern, 8) + be(UInt64(description.formatID), 4) + be(UInt64(description.formatFlags), 4)
        desc += be(0, 4) + be(UInt64(description.framesPerPacket), 4) + be(UInt64(description.channels), 4) + be(0, 4)
        var table = be(UInt64(packets.count), 8) + be(UInt64(packets.count) * UInt64(description.framesPerPacket), 8) + be(0, 4) + be(0, 4)
        for packet in packets {
            var groups = [UInt8(packet.count & 0x7F)]
            var rest = packet.count >> 7
            while rest > 0 {
                groups.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            table += groups
        }
        var file = Array("caff".utf8) + [0, 1, 0, 0] + chunk("desc", desc)
        if !cookie.isEmpty { file += chunk("kuki", cookie) }
        file += chunk("pakt", table) + chunk("data", [0, 0, 0, 0] + packets.flatMap { $0 })
        try Data(file).write(to: URL(fileURLWithPath: path))
    }
}
