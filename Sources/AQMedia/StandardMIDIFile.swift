/// A Standard MIDI File (format 1) made from events at frames: one tick is one frame, so each
/// event keeps its exact frame (tick → frame exact) when the file is read at the tempo it gives.
/// Used by `aqjack record -m`: track 0 carries the tempo, each further track one port's events
/// and its name.
public enum StandardMIDIFile {
    /// Ticks per quarter note (the header's division) and microseconds per quarter (the tempo)
    /// making one tick one frame at `sampleRate`: 24,000 and 500,000 (120 bpm) at 48 kHz,
    /// 22,050 and 500,000 at 44.1 kHz, 24,000 and 250,000 at 96 kHz. `exact` is false for a rate
    /// no whole tempo fits (the tick is then within 1 µs a quarter of a frame).
    public static func timing(sampleRate: Int) -> (division: Int, tempo: Int, exact: Bool) {
        for step in 1 ... 1000 where sampleRate % step == 0 && sampleRate / step <= 32767 && 1_000_000 % step == 0 {
            return (sampleRate / step, 1_000_000 / step, true)
        }
        let step = (sampleRate + 32766) / 32767
        let division = max(1, sampleRate / step)
        return (division, Int((1e6 * Double(division) / Double(sampleRate)).rounded()), false)
    }

    /// One track: its name and events at ticks (in order; bytes as on the wire: a channel
    /// message, or a SysEx starting with F0). System real-time and common messages other than
    /// SysEx have no place in a file and are left out.
    public struct Track {
        public var name: String
        public var events: [(tick: UInt64, bytes: [UInt8])]
        public init(name: String, events: [(tick: UInt64, bytes: [UInt8])]) {
            self.name = name
            self.events = events
        }
    }

    /// The file's bytes: the header, a tempo track, `tracks`, each ending at `lengthTicks` (the
    /// audio file's length) or its last event.
    public static func data(tracks: [Track], sampleRate: Int, lengthTicks: UInt64) -> [UInt8] {
        let (division, tempo, _) = timing(sampleRate: sampleRate)
        var file: [UInt8] = Array("MThd".utf8) + be32(6) + be16(1) + be16(UInt16(tracks.count + 1)) + be16(UInt16(division))
        let tempoTrack: [UInt8] = [0, 0xFF, 0x51, 3, UInt8(tempo >> 16 & 0xFF), UInt8(tempo >> 8 & 0xFF), UInt8(tempo & 0xFF)]
            + delta(lengthTicks) + [0xFF, 0x2F, 0]
        file += chunk(tempoTrack)
        for track in tracks {
            let name = Array(track.name.utf8.prefix(255))
            var body: [UInt8] = [0, 0xFF, 0x03] + vlq(UInt64(name.count)) + name
            var last: UInt64 = 0
            for event in track.events {
                guard let status = event.bytes.first, status >= 0x80 else { continue }
                let payload: [UInt8]
                if status == 0xF0 {
                    payload = [0xF0] + vlq(UInt64(event.bytes.count - 1)) + event.bytes.dropFirst()
                } else if status < 0xF0 {
                    payload = event.bytes
                } else {
                    continue
                }
                body += delta(event.tick - last) + payload
                last = event.tick
            }
            body += delta(max(lengthTicks, last) - last) + [0xFF, 0x2F, 0]
            file += chunk(body)
        }
        return file
    }

    private static func chunk(_ body: [UInt8]) -> [UInt8] { Array("MTrk".utf8) + be32(UInt32(body.count)) + body }
    private static func be32(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    private static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    /// A delta time before an event: a variable-length quantity (7 bits a byte, most significant
    /// first, at most 4 bytes); one longer than 0x0FFFFFFF ticks (93 minutes at 48 kHz between
    /// two events) is carried by empty text events (FF 01 00) every 0x0FFFFFFF ticks.
    static func delta(_ ticks: UInt64) -> [UInt8] {
        var left = ticks, bytes: [UInt8] = []
        while left > 0x0FFF_FFFF {
            bytes += vlq(0x0FFF_FFFF) + [0xFF, 0x01, 0]
            left -= 0x0FFF_FFFF
        }
        return bytes + vlq(left)
    }

    static func vlq(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes = [UInt8(value & 0x7F)]
        value >>= 7
        while value > 0 {
            bytes.insert(UInt8(value & 0x7F) | 0x80, at: 0)
            value >>= 7
        }
        return bytes
    }
}
