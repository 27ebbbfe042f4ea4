@_spi(Testing) import AQCore
import Testing

/// Every small ring layout: capacity × start index (including indices about to wrap Int) × chunk
/// size, written and read back in different chunk sizes, element for element.
@Suite("SPSC ring layouts")
struct RingLayoutTests {
    static let capacities = [1, 2, 4, 8, 16]

    /// Start indices covering every position in the storage, twice, and the Int overflow.
    static func startIndices(capacity: Int) -> [Int] {
        Array(0 ..< 2 * capacity) + [Int.max - capacity, Int.max - 1, Int.max, Int.min]
    }

    @Test("write and read in every chunk size from every start index", arguments: capacities)
    func everyLayout(capacity: Int) {
        for start in Self.startIndices(capacity: capacity) {
            for writeChunk in 1 ... capacity + 1 {
                for readChunk in 1 ... capacity + 1 {
                    let ring = SPSCRing<Int32>(capacity: capacity, startIndex: start)
                    let producer = ring.producer
                    let consumer = ring.consumer
                    var next: Int32 = 0
                    var expected: Int32 = 0
                    let total: Int32 = Int32(3 * capacity + 1)
                    var rounds = 0
                    while expected < total {
                        rounds += 1
                        #expect(rounds < 1000, "no progress")
                        if rounds >= 1000 { return }
                        // Write one chunk (or what fits), checking the free count first.
                        let free = producer.writableCount
                        #expect(free == capacity - consumer.readableCount)
                        let chunk = (0 ..< min(writeChunk, Int(total - next))).map { next + Int32($0) }
                        let written = chunk.withUnsafeBufferPointer { producer.write($0) }
                        #expect(written == min(chunk.count, free))
                        next += Int32(written)
                        // Read one chunk.
                        var out = [Int32](repeating: -1, count: readChunk)
                        let available = consumer.readableCount
                        let read = out.withUnsafeMutableBufferPointer { consumer.read(into: $0) }
                        #expect(read == min(readChunk, available))
                        for value in out[0 ..< read] {
                            #expect(value == expected, "capacity \(capacity) start \(start) chunks \(writeChunk)/\(readChunk)")
                            expected += 1
                        }
                    }
                    #expect(consumer.readableCount == 0)
                    #expect(producer.writableCount == capacity)
                }
            }
        }
    }

    @Test("regions split exactly at the end of the storage", arguments: capacities)
    func regionsSplitAtWrap(capacity: Int) {
        for start in Self.startIndices(capacity: capacity) {
            let ring = SPSCRing<UInt8>(capacity: capacity, startIndex: start)
            let producer = ring.producer
            let consumer = ring.consumer
            let offset = start & (capacity - 1)
            let writable = producer.writableRegions()
            #expect(writable.count == capacity)
            #expect(writable.first.count == capacity - offset)
            #expect(writable.second.count == offset)
            for index in 0 ..< capacity { writable[index] = UInt8(index) }
            producer.commitWrite(capacity)
            #expect(producer.writableCount == 0)
            #expect(producer.writableRegions().count == 0)
            let readable = consumer.readableRegions()
            #expect(readable.count == capacity)
            #expect(readable.first.baseAddress == writable.first.baseAddress)
            for index in 0 ..< capacity { #expect(readable[index] == UInt8(index)) }
            consumer.commitRead(capacity)
            #expect(consumer.readableCount == 0)
        }
    }

    @Test("writeAll and readAll move everything or nothing")
    func allOrNothing() {
        let ring = SPSCRing<Float>(capacity: 8, startIndex: 5)
        let producer = ring.producer
        let consumer = ring.consumer
        let six: [Float] = [1, 2, 3, 4, 5, 6]
        #expect(six.withUnsafeBufferPointer { producer.writeAll($0) })
        #expect(!six.withUnsafeBufferPointer { producer.writeAll($0) })
        #expect(consumer.readableCount == 6)
        var seven = [Float](repeating: 0, count: 7)
        #expect(!seven.withUnsafeMutableBufferPointer { consumer.readAll(into: $0) })
        var four = [Float](repeating: 0, count: 4)
        #expect(four.withUnsafeMutableBufferPointer { consumer.readAll(into: $0) })
        #expect(four == [1, 2, 3, 4])
        #expect(producer.writableCount == 6)
    }

    @Test("capacity rounds up to a power of two", arguments: [(1, 1), (2, 2), (3, 4), (1000, 1024), (1024, 1024), (1025, 2048)])
    func capacityRoundsUp(requested: Int, actual: Int) {
        let ring = SPSCRing<Int16>(minimumCapacity: requested)
        #expect(ring.producer.capacity == actual)
    }
}
