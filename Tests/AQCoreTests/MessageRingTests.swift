import AQCore
import Testing

/// The byte-message ring the LV2 worker's requests and responses take: whole messages in order,
/// across the ring's wrap (the length itself split by it), a message that does not fit refused
/// whole.
@Suite("Message ring")
struct MessageRingTests {
    @Test("messages of 0 ... 40 bytes through a 64-byte ring, many times round: each read back whole, in order, byte for byte; one that does not fit is refused and the ring unchanged")
    func wholeMessagesInOrder() {
        let ring = MessageRing(minimumBytes: 64)
        let writer = ring.writer, reader = ring.reader
        #expect(writer.capacity == 64)
        var scratch = [UInt8](repeating: 0, count: 64)
        var sent = 0, received = 0
        var pending: [[UInt8]] = []
        for round in 0 ..< 500 {
            let length = round % 41
            let message = (0 ..< length).map { UInt8(truncatingIfNeeded: round &* 7 &+ $0) }
            let accepted = message.withUnsafeBytes { writer.write($0) }
            if accepted { pending.append(message); sent += 1 }
            // Read every other round, so the ring fills and a write is refused now and then.
            if round % 2 == 1 || !accepted {
                while let count = scratch.withUnsafeMutableBytes({ reader.read(into: $0) }) {
                    #expect(!pending.isEmpty && Array(scratch[0 ..< count]) == pending.first, "message \(received)")
                    if !pending.isEmpty { pending.removeFirst() }
                    received += 1
                }
            }
        }
        #expect(sent > 300 && received == sent && pending.isEmpty)
        // 4 bytes of length + 61 > 64: refused whole, nothing written.
        let tooLong = [UInt8](repeating: 1, count: 61)
        #expect(!tooLong.withUnsafeBytes { writer.write($0) })
        #expect(scratch.withUnsafeMutableBytes { reader.read(into: $0) } == nil)
        let fits = [UInt8](repeating: 2, count: 60)
        #expect(fits.withUnsafeBytes { writer.write($0) })
        #expect(scratch.withUnsafeMutableBytes { reader.read(into: $0) } == 60 && scratch[0 ..< 60].allSatisfy { $0 == 2 })
    }
}
