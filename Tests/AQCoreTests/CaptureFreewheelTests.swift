import AQCore
import Foundation
import Testing

/// The capture processor's freewheel behaviour, without a server: cycles pushed as fast as a
/// loop goes (what freewheel does) into a ring of two cycles, read by a slower thread. Run under
/// ThreadSanitizer by Scripts/sanitize.sh.
@Suite("capture processor in freewheel")
struct CaptureFreewheelTests {
    static let period = 128
    static let cycleCount = 200

    /// Pushes `cycleCount` cycles of a 2-channel ramp (sample = frame index) and reads them on a
    /// thread that sleeps 1 ms a cycle; returns the overrun frames and the frames read, in order.
    /// The reader is a thread of its own, not a task: it sleeps and waits, and on the cooperative
    /// pool (two threads here) the other tests of a parallel run held it off for longer than the
    /// processor's freewheel wait (2 s), so a cycle was dropped as in real time.
    static func run(waitsWhenFull: Bool) -> (overrun: Int, readFrames: [Float]) {
        let (processor, reader) = CaptureProcessor.make(channelCount: 2, capacityFrames: 2 * period)
        processor.setWaitsWhenFull(waitsWhenFull)
        let total = cycleCount * period
        let readFrames = UnsafeSendableBox<[Float]>([])
        let readerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { readerDone.signal() }
            var frames: [Float] = []
            defer { readFrames.value = frames }
            let deadline = Date().addingTimeInterval(20)
            while frames.count < total && Date() < deadline {
                guard reader.waitForCycle(milliseconds: 50) else {
                    if processor.recordedCycleCount.load(ordering: .relaxed) * period + processor.overrunFrameCount.load(ordering: .relaxed) >= total,
                       reader.pendingCycleCount == 0 { break }
                    continue
                }
                usleep(1000)
                _ = reader.readCycle { record, samples in
                    for frame in 0 ..< record.frameCount { frames.append(samples[2 * frame]) }
                }
            }
        }
        let left = UnsafeMutablePointer<Float>.allocate(capacity: period)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: period)
        let table = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 2)
        table[0] = UnsafePointer(left)
        table[1] = UnsafePointer(right)
        for index in 0 ..< cycleCount {
            for frame in 0 ..< period {
                left[frame] = Float(index * period + frame)
                right[frame] = -left[frame]
            }
            processor.process(ProcessCycle(frameCount: period, frameTime: UInt32(index * period), cycleStartMicros: 0, nextCycleStartMicros: 0,
                                           inputs: UnsafeBufferPointer(start: table, count: 2),
                                           outputs: UnsafeBufferPointer(start: nil, count: 0)))
        }
        readerDone.wait()
        let frames = readFrames.value
        left.deallocate()
        right.deallocate()
        table.deallocate()
        return (processor.overrunFrameCount.load(ordering: .relaxed), frames)
    }

    @Test("waiting when full (freewheel): 0 frames dropped, every frame read in order")
    func waitsForTheReader() {
        let result = Self.run(waitsWhenFull: true)
        #expect(result.overrun == 0)
        #expect(result.readFrames == (0 ..< Self.cycleCount * Self.period).map(Float.init))
    }

    @Test("without the wait (real time) the same pace drops whole cycles: the control")
    func dropsInRealTime() {
        let result = Self.run(waitsWhenFull: false)
        #expect(result.overrun > 0 && result.overrun % Self.period == 0)
        #expect(result.readFrames.count + result.overrun == Self.cycleCount * Self.period)
    }
}
