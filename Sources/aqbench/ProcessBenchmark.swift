import AQCore
import AQTestSupport
import Foundation

/// Cost of one process cycle of the capture path, measured off-line on this thread with the
/// same buffers JACK would hand over (the processor cannot tell the difference).
enum ProcessBenchmark {
    /// - Returns: nanoseconds per cycle (best of several runs) for `channelCount` channels at
    ///   `period` frames, the ring drained after every cycle as a consumer would.
    static func captureCycle(channelCount: Int, period: Int, cycles: Int) -> Double {
        let (processor, reader) = CaptureProcessor.make(channelCount: channelCount, capacityFrames: period * 64)
        let inputs = (0 ..< channelCount).map { channel -> UnsafeMutablePointer<Float> in
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: period)
            for frame in 0 ..< period { buffer[frame] = TestSignal.sample(channel: channel, frame: UInt32(frame)) }
            return buffer
        }
        defer { inputs.forEach { $0.deallocate() } }
        let inputTable = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channelCount)
        defer { inputTable.deallocate() }
        for (index, buffer) in inputs.enumerated() { inputTable[index] = UnsafePointer(buffer) }
        var best = Double.infinity
        for _ in 0 ..< 5 {
            var processNanoseconds: UInt64 = 0
            for cycleIndex in 0 ..< cycles {
                let cycle = ProcessCycle(frameCount: period, frameTime: UInt32(truncatingIfNeeded: cycleIndex * period),
                                         cycleStartMicros: 0, nextCycleStartMicros: 0,
                                         inputs: UnsafeBufferPointer(start: inputTable, count: channelCount),
                                         outputs: UnsafeBufferPointer(start: nil, count: 0))
                let start = DispatchTime.now().uptimeNanoseconds
                processor.process(cycle)
                processNanoseconds += DispatchTime.now().uptimeNanoseconds - start
                _ = reader.readCycle { _, _ in }
            }
            best = min(best, Double(processNanoseconds) / Double(cycles))
        }
        precondition(processor.overrunFrameCount.load(ordering: .relaxed) == 0)
        return best
    }
}
