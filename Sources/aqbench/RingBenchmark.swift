import AQCore
import Foundation

/// Ring throughput against plain memcpy of the same bytes.
enum RingBenchmark {
    /// Single thread: write a chunk into the ring and read it out again, `rounds` times, against
    /// two `memcpy`s of the same chunk (in and out: the same bytes moved the same number of times).
    /// - Returns: seconds for the ring, seconds for memcpy, bytes moved per path.
    static func singleThread(chunkSamples: Int, rounds: Int) -> (ring: Double, memcpy: Double, bytes: Int) {
        let source = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunkSamples)
        let destination = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunkSamples)
        let middle = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunkSamples)
        defer { source.deallocate(); destination.deallocate(); middle.deallocate() }
        for index in 0 ..< chunkSamples { source[index] = Float(index) }
        let ring = SPSCRing<Float>(minimumCapacity: chunkSamples * 8)
        let producer = ring.producer
        let consumer = ring.consumer

        var best = (ring: Double.infinity, memcpy: Double.infinity)
        for _ in 0 ..< 5 {
            var start = Date()
            for _ in 0 ..< rounds {
                _ = producer.writeAll(UnsafeBufferPointer(source))
                _ = consumer.readAll(into: destination)
            }
            best.ring = min(best.ring, Date().timeIntervalSince(start))
            start = Date()
            for _ in 0 ..< rounds {
                memcpy(middle.baseAddress!, source.baseAddress!, chunkSamples * 4)
                memcpy(destination.baseAddress!, middle.baseAddress!, chunkSamples * 4)
            }
            best.memcpy = min(best.memcpy, Date().timeIntervalSince(start))
        }
        precondition(destination[chunkSamples - 1] == Float(chunkSamples - 1))
        return (best.ring, best.memcpy, chunkSamples * 4 * rounds)
    }

    /// Two threads: a producer and a consumer move `totalSamples` through a 64 Ki-sample ring.
    /// - Returns: seconds.
    static func twoThreads(totalSamples: Int, chunkSamples: Int) -> Double {
        let ring = SPSCRing<Float>(minimumCapacity: 65536)
        let producer = ring.producer
        let consumer = ring.consumer
        let done = DispatchGroup()
        let start = Date()
        done.enter()
        Thread.detachNewThread {
            let chunk = [Float](repeating: 1, count: chunkSamples)
            var sent = 0
            chunk.withUnsafeBufferPointer { buffer in
                while sent < totalSamples { sent += producer.write(buffer) }
            }
            done.leave()
        }
        done.enter()
        Thread.detachNewThread {
            var chunk = [Float](repeating: 0, count: chunkSamples)
            var received = 0
            chunk.withUnsafeMutableBufferPointer { buffer in
                while received < totalSamples { received += consumer.read(into: buffer) }
            }
            done.leave()
        }
        done.wait()
        return Date().timeIntervalSince(start)
    }
}
