import AQCore
import Foundation
import Testing

/// One producer thread and one consumer thread move 10^8 samples through a small ring in
/// irregular chunks; the consumer checks every value in order and both sides keep checksums.
/// Run under ThreadSanitizer by Scripts/sanitize.sh.
@Suite("SPSC ring, two threads")
struct RingStressTests {
    static let sampleCount = 100_000_000

    @Test("10^8 samples arrive in order with matching checksums")
    func twoThreadStress() async throws {
        let ring = SPSCRing<UInt32>(minimumCapacity: 4096)
        let producerEnd = ring.producer
        let consumerEnd = ring.consumer
        let total = Self.sampleCount

        let producerChecksum = UnsafeSendableBox(UInt64(0))
        let produce: @Sendable () -> Void = {
            var scratch = [UInt32](repeating: 0, count: 1600)
            var next = 0
            var checksum: UInt64 = 0
            var chunk = 1
            while next < total {
                chunk = chunk % 1499 + 7   // 8 ... 1499, never a power of two for long
                let count = min(chunk, total - next)
                for index in 0 ..< count {
                    let value = UInt32(truncatingIfNeeded: (next + index) &* 2_654_435_761)
                    scratch[index] = value
                    checksum &+= UInt64(value)
                }
                var offset = 0
                while offset < count {
                    offset += scratch.withUnsafeBufferPointer {
                        producerEnd.write(UnsafeBufferPointer(rebasing: $0[offset ..< count]))
                    }
                }
                next += count
            }
            producerChecksum.value = checksum
        }
        let mismatches = UnsafeSendableBox(0)
        let consumerChecksum = UnsafeSendableBox(UInt64(0))
        let consume: @Sendable () -> Void = {
            var received = 0
            var checksum: UInt64 = 0
            var bad = 0
            var chunk = 3
            var scratch = [UInt32](repeating: 0, count: 2048)
            while received < total {
                chunk = chunk % 2039 + 5
                let count = scratch.withUnsafeMutableBufferPointer {
                    consumerEnd.read(into: UnsafeMutableBufferPointer(rebasing: $0[0 ..< chunk]))
                }
                for index in 0 ..< count {
                    let value = scratch[index]
                    if value != UInt32(truncatingIfNeeded: (received + index) &* 2_654_435_761) { bad += 1 }
                    checksum &+= UInt64(value)
                }
                received += count
            }
            mismatches.value = bad
            consumerChecksum.value = checksum
        }
        let done = DispatchGroup()
        for body in [produce, consume] {
            done.enter()
            Thread.detachNewThread {
                body()
                done.leave()
            }
        }
        done.wait()
        #expect(mismatches.value == 0)
        #expect(producerChecksum.value == consumerChecksum.value)
        #expect(producerChecksum.value != 0)
    }
}

/// A value written by one thread and read after that thread is joined.
final class UnsafeSendableBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
