import AQCore
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Testing

extension JackServerSuite {
    @Suite("Capture overruns")
    struct CaptureOverrunTests {
        @Test("a full ring drops whole cycles, counts them, and the next record reports exactly the gap")
        func overrunIsCountedAndReportedInBand() throws {
            // 1024 frames: 8 cycles of 128, then the ring is full because nobody reads.
            let pair = try GeneratorCapturePair(role: "overrun", channelCount: 2, capacityFrames: 1024)
            let capture = pair.capture
            usleep(200_000)
            let overrun = capture.processor.overrunFrameCount.load(ordering: .relaxed)
            #expect(overrun > 0)
            #expect(overrun % 128 == 0)   // whole cycles only

            // Drain exactly what was kept when we looked (the process thread refills the ring as
            // soon as we read, so later records belong to the next part): contiguous cycles.
            let keptCount = capture.reader.pendingCycleCount
            #expect(keptCount == 8)   // 1024 frames of ring = 8 cycles of 128
            var last: CaptureCycle?
            var verifier = TestSignalVerifier(channelCount: 2)
            for _ in 0 ..< keptCount {
                let record = try #require(capture.reader.readCycle { cycle, samples in verifier.check(cycle, samples); return cycle })
                if let last { #expect(record.frameTime == last.frameTime + UInt64(last.frameCount)) }
                #expect(record.droppedFramesBefore == 0)
                last = record
            }
            let kept = try #require(last)
            // The next cycle after the drain carries the drop count, equal to the frame-time gap.
            #expect(capture.reader.waitForCycle(milliseconds: 1000))
            let next = try #require(capture.reader.readCycle { cycle, _ in cycle })
            let gap = Int(next.frameTime - (kept.frameTime + UInt64(kept.frameCount)))
            #expect(next.droppedFramesBefore == gap)
            #expect(gap > 0)
            try capture.client.deactivate()
            #expect(capture.processor.overrunFrameCount.load(ordering: .relaxed) >= gap)
            _ = pair.generator
        }
    }
}
