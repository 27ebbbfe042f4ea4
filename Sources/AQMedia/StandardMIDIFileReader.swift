/// A Standard MIDI File read for playing (`aqjack play FILE.mid`): format 0 or 1, every track's
/// channel messages and SysEx merged in time order, each at its time in seconds from the start
/// through the file's tempo map (metrical division) or its SMPTE division. Bounded and checked:
/// a damaged or hostile file is refused with what was wrong and where, never trusted for a size.
public struct StandardMIDIFileContents: Sendable {
    /// One event: seconds from the file's start, and its bytes as on the wire.
    public struct Event: Sendable, Equatable {
        public var seconds: Double
        public var bytes: [UInt8]
    }

    public let format: Int
    public let trackCount: Int
    public let events: [Event]
    /// The time of the last event or track end, seconds.
    public let duration: Double

    /// The most bytes read (a MIDI file is small; 64 MiB holds millions of events).
    public static let largestFile = 64 << 20
    /// The most events kept.
    public static let mostEvents = 4_000_000

    public struct ReadError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
        public init(message: String) { self.message = message }
    }

    /// Reads `bytes`.
    /// - Throws: ``ReadError`` naming what is wrong (not a MIDI file, format 2, a chunk longer
    ///   than the file, a running status with none before, a length that does not fit ...).
    public init(bytes: [UInt8]) throws(ReadError) {
        func fail(_ text: String) -> ReadError { ReadError(message: text) }
        guard bytes.count <= Self.largestFile else { throw fail("it is more than \(Self.largestFile) bytes; a MIDI file aqjack plays is at most that") }
        guard bytes.count >= 14, Array(bytes[0 ..< 4]) == Array("MThd".utf8) else {
            throw fail("it does not start with a Standard MIDI File header ('MThd'), expected a .mid file")
        }
        func be(_ at: Int, _ count: Int) -> Int { (at ..< at + count).reduce(0) { $0 << 8 | Int(bytes[$1]) } }
        let headerLength = be(4, 4)
        guard headerLength >= 6, 8 + headerLength <= bytes.count else { throw fail("its header claims \(headerLength) bytes; expected 6 within the file") }
        format = be(8, 2)
        let declaredTracks = be(10, 2)
        let division = be(12, 2)
        guard format <= 1 else { throw fail("it is format \(format); aqjack plays format 0 and 1 files (format 2 holds independent sequences)") }
        guard division != 0 else { throw fail("its division is 0 ticks a quarter note") }

        // Every track's events at ticks; tempo changes from all tracks.
        var timed: [(tick: UInt64, order: Int, bytes: [UInt8])] = []
        var tempos: [(tick: UInt64, microseconds: Int)] = []
        var at = 8 + headerLength, tracks = 0, lastTick: UInt64 = 0
        while at + 8 <= bytes.count, tracks < declaredTracks {
            let length = be(at + 4, 4)
            let body = at + 8
            guard length <= bytes.count - body else { throw fail("chunk \(tracks + 1) at byte \(at) claims \(length) bytes; the file has \(bytes.count - body) left") }
            defer { at = body + length }
            guard Array(bytes[at ..< at + 4]) == Array("MTrk".utf8) else { continue }   // unknown chunks are skipped
            tracks += 1
            var position = body, tick: UInt64 = 0, running: UInt8?
            let end = body + length
            func quantity() throws(ReadError) -> Int {
                var value = 0
                for count in 0 ..< 4 {
                    guard position < end else { throw fail("track \(tracks) ends inside a variable-length number at byte \(position)") }
                    let byte = bytes[position]
                    position += 1
                    value = value << 7 | Int(byte & 0x7F)
                    if byte & 0x80 == 0 { return value }
                    if count == 3 { throw fail("track \(tracks) has a variable-length number longer than 4 bytes at byte \(position - 4)") }
                }
                return value
            }
            while position < end {
                tick += UInt64(try quantity())
                guard position < end else { throw fail("track \(tracks) ends after a delta time at byte \(position)") }
                var status = bytes[position]
                if status < 0x80 {
                    guard let previous = running else { throw fail("track \(tracks) has a data byte with no status before it at byte \(position)") }
                    status = previous
                } else {
                    position += 1
                }
                switch status {
                case 0xFF:
                    guard position < end else { throw fail("track \(tracks) ends inside a meta event at byte \(position)") }
                    let kind = bytes[position]
                    position += 1
                    let size = try quantity()
                    guard size <= end - position else { throw fail("track \(tracks)'s meta event at byte \(position) claims \(size) bytes past its end") }
                    if kind == 0x51, size == 3 { tempos.append((tick, be(position, 3))) }
                    position += size
                    running = nil
                    if kind == 0x2F { position = end }
                case 0xF0, 0xF7:
                    let size = try quantity()
                    guard size <= end - position else { throw fail("track \(tracks)'s SysEx at byte \(position) claims \(size) bytes past its end") }
                    let payload = Array(bytes[position ..< position + size])
                    if status == 0xF0 { timed.append((tick, timed.count, [0xF0] + payload)) }
                    position += size
                    running = nil
                default:
                    guard status < 0xF0 else { throw fail("track \(tracks) has system message \(status) at byte \(position - 1), which a file cannot hold") }
                    let dataBytes = (status & 0xF0 == 0xC0 || status & 0xF0 == 0xD0) ? 1 : 2
                    guard dataBytes <= end - position else { throw fail("track \(tracks) ends inside a channel message at byte \(position)") }
                    let message = [status] + Array(bytes[position ..< position + dataBytes])
                    guard message.dropFirst().allSatisfy({ $0 < 0x80 }) else { throw fail("track \(tracks)'s message at byte \(position - 1) has a data byte of 128 or more") }
                    timed.append((tick, timed.count, message))
                    position += dataBytes
                    running = status
                }
                guard timed.count <= Self.mostEvents else { throw fail("it holds more than \(Self.mostEvents) events") }
            }
            lastTick = max(lastTick, tick)
        }
        guard tracks > 0 else { throw fail("it holds no track ('MTrk' chunk)") }
        trackCount = tracks

        // Ticks to seconds: SMPTE frames and ticks a frame, or quarters at the tempo map
        // (walked once, in order, beside the events in order).
        let sorted = timed.sorted { ($0.tick, $0.order) < ($1.tick, $1.order) }
        var times: [Double] = []
        times.reserveCapacity(sorted.count + 1)
        let ticks = sorted.map(\.tick) + [lastTick]
        if division & 0x8000 != 0 {
            let smpte = 256 - (division >> 8)
            let framesPerSecond = smpte == 29 ? 29.97 : Double(smpte)
            let ticksPerFrame = Double(division & 0xFF)
            guard ticksPerFrame > 0 else { throw fail("its SMPTE division has 0 ticks a frame") }
            times = ticks.map { Double($0) / (framesPerSecond * ticksPerFrame) }
        } else {
            let map = tempos.sorted { $0.tick < $1.tick }
            var next = 0, total = 0.0, from: UInt64 = 0, tempo = 500_000
            for tick in ticks {
                while next < map.count, map[next].tick <= tick {
                    total += Double(map[next].tick - from) * Double(tempo) / Double(division) / 1e6
                    from = map[next].tick
                    tempo = max(1, map[next].microseconds)
                    next += 1
                }
                times.append(total + Double(tick - from) * Double(tempo) / Double(division) / 1e6)
            }
        }
        events = zip(sorted, times).map { Event(seconds: $1, bytes: $0.bytes) }
        duration = times.last ?? 0
    }
}
