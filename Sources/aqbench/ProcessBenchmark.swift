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

extension ProcessBenchmark {
    /// The capture cycle as the process thread meets it at scale: a ring of `ringSeconds` at
    /// 48 kHz (so the written part is never in cache) and input buffers written afresh before
    /// every cycle, as the source client does. Returns ns per cycle (mean over `cycles`) for the
    /// processor, and for a plain planar copy of every input into a ring as large (the floor).
    static func coldCaptureCycle(channelCount: Int, period: Int, cycles: Int, ringSeconds: Int) -> (processor: Double, planarCopy: Double) {
        let (processor, reader) = CaptureProcessor.make(channelCount: channelCount, capacityFrames: 48000 * ringSeconds)
        let ports = BenchmarkInputs(channelCount: channelCount, period: period)
        let inputs = ports.samples
        let planarCount = channelCount * 48000 * ringSeconds
        let planar = UnsafeMutablePointer<Float>.allocate(capacity: planarCount)
        planar.initialize(repeating: 0, count: planarCount)
        defer { planar.deallocate() }
        var processNanoseconds: UInt64 = 0, copyNanoseconds: UInt64 = 0
        var planarOffset = 0
        for cycleIndex in 0 ..< cycles {
            for sample in 0 ..< channelCount * period { inputs[sample] = Float(sample &+ cycleIndex) }
            let cycle = ports.cycle(cycleIndex)
            var start = DispatchTime.now().uptimeNanoseconds
            processor.process(cycle)
            processNanoseconds += DispatchTime.now().uptimeNanoseconds - start
            _ = reader.readCycle { _, _ in }
            for sample in 0 ..< channelCount * period { inputs[sample] = Float(sample &- cycleIndex) }
            start = DispatchTime.now().uptimeNanoseconds
            if planarOffset + channelCount * period > planarCount { planarOffset = 0 }
            for channel in 0 ..< channelCount {
                (planar + planarOffset + channel * period).update(from: ports.table[channel], count: period)
            }
            planarOffset += channelCount * period
            copyNanoseconds += DispatchTime.now().uptimeNanoseconds - start
        }
        return (Double(processNanoseconds) / Double(cycles), Double(copyNanoseconds) / Double(cycles))
    }
}

extension ProcessBenchmark {
    /// The playback cycle at scale: a ring of `ringSeconds` at 48 kHz filled by the feeder before
    /// every cycle (so what the process thread reads was just written, far from where it read
    /// last), outputs of `period` frames. Returns ns per cycle (mean over `cycles`) for the
    /// processor, and for a plain planar copy out of a ring as large (the floor).
    static func coldPlaybackCycle(channelCount: Int, period: Int, cycles: Int, ringSeconds: Int) -> (processor: Double, planarCopy: Double) {
        let (processor, feeder) = PlaybackProcessor.make(channelCount: channelCount, capacityFrames: 48000 * ringSeconds)
        processor.play(fromFrame: 0)
        let outputs = UnsafeMutablePointer<Float>.allocate(capacity: channelCount * period)
        outputs.initialize(repeating: 0, count: channelCount * period)
        defer { outputs.deallocate() }
        let outputTable = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channelCount)
        defer { outputTable.deallocate() }
        for channel in 0 ..< channelCount { outputTable[channel] = outputs + channel * period }
        let planarCount = channelCount * 48000 * ringSeconds
        let planar = UnsafeMutablePointer<Float>.allocate(capacity: planarCount)
        planar.initialize(repeating: 1, count: planarCount)
        defer { planar.deallocate() }
        var processNanoseconds: UInt64 = 0, copyNanoseconds: UInt64 = 0
        var planarOffset = 0
        for cycleIndex in 0 ..< cycles {
            _ = feeder.write(frameCount: period) { run, before in
                for index in 0 ..< run.count { run[index] = Float(index &+ before &+ cycleIndex) }
            }
            let cycle = ProcessCycle(frameCount: period, frameTime: UInt32(truncatingIfNeeded: cycleIndex * period),
                                     cycleStartMicros: 0, nextCycleStartMicros: 0,
                                     inputs: UnsafeBufferPointer(start: nil, count: 0),
                                     outputs: UnsafeBufferPointer(start: outputTable, count: channelCount))
            var start = DispatchTime.now().uptimeNanoseconds
            processor.process(cycle)
            processNanoseconds += DispatchTime.now().uptimeNanoseconds - start
            if planarOffset + channelCount * period > planarCount { planarOffset = 0 }
            for index in 0 ..< channelCount * period { planar[planarOffset + index] = Float(index &- cycleIndex) }
            start = DispatchTime.now().uptimeNanoseconds
            for channel in 0 ..< channelCount {
                outputTable[channel].update(from: planar + planarOffset + channel * period, count: period)
            }
            planarOffset += channelCount * period
            copyNanoseconds += DispatchTime.now().uptimeNanoseconds - start
        }
        precondition(processor.underrunFrameCount.load(ordering: .relaxed) == 0)
        return (Double(processNanoseconds) / Double(cycles), Double(copyNanoseconds) / Double(cycles))
    }
}

extension ProcessBenchmark {
    /// The consumer's side of a capture: `CaptureReader.readCycle`, which interleaves each
    /// cycle's planar block, on a ring of `ringSeconds` at 48 kHz filled a cycle ahead by the
    /// processor (as the queue thread finds it: just written, not in this core's cache). Returns
    /// ns per cycle (mean over `cycles`) for the read, and for a plain copy of the same bytes out
    /// of a ring as large (the floor: what the consumer cannot avoid touching).
    static func readerCycle(channelCount: Int, period: Int, cycles: Int, ringSeconds: Int) -> (reader: Double, copy: Double) {
        let (processor, reader) = CaptureProcessor.make(channelCount: channelCount, capacityFrames: 48000 * ringSeconds)
        let ports = BenchmarkInputs(channelCount: channelCount, period: period)
        let inputs = ports.samples
        let ringCount = channelCount * 48000 * ringSeconds
        let ring = UnsafeMutablePointer<Float>.allocate(capacity: ringCount)
        ring.initialize(repeating: 1, count: ringCount)
        defer { ring.deallocate() }
        let target = UnsafeMutablePointer<Float>.allocate(capacity: channelCount * period)
        defer { target.deallocate() }
        var checksum: Float = 0
        var readNanoseconds: UInt64 = 0, copyNanoseconds: UInt64 = 0
        var ringOffset = 0
        for cycleIndex in 0 ..< cycles {
            for sample in 0 ..< channelCount * period { inputs[sample] = Float(sample &+ cycleIndex) }
            processor.process(ports.cycle(cycleIndex))
            var start = DispatchTime.now().uptimeNanoseconds
            _ = reader.readCycle { _, samples in checksum += samples[cycleIndex % samples.count] }
            readNanoseconds += DispatchTime.now().uptimeNanoseconds - start
            if ringOffset + channelCount * period > ringCount { ringOffset = 0 }
            start = DispatchTime.now().uptimeNanoseconds
            target.update(from: ring + ringOffset, count: channelCount * period)
            copyNanoseconds += DispatchTime.now().uptimeNanoseconds - start
            checksum += target[cycleIndex % (channelCount * period)]
            ringOffset += channelCount * period
        }
        precondition(checksum.isFinite)
        return (Double(readNanoseconds) / Double(cycles), Double(copyNanoseconds) / Double(cycles))
    }
}

extension ProcessBenchmark {
    /// The playback feeder's side: `PlanarRingProducer.writeInterleaved` of `chunk` frames at a
    /// time out of an interleaved buffer of 2 s (a queue buffer's layout, not in cache) into a
    /// ring of `ringSeconds` at 48 kHz, drained after each write. Returns ns per chunk (mean over
    /// `chunks`) for the write, and for a plain copy of the same bytes (the floor).
    static func feederWrite(channelCount: Int, chunk: Int, chunks: Int, ringSeconds: Int) -> (feeder: Double, copy: Double) {
        let ring = PlanarFrameRing(channelCount: channelCount, minimumFrames: 48000 * ringSeconds)
        let sourceCount = channelCount * 48000 * 2
        let source = UnsafeMutablePointer<Float>.allocate(capacity: sourceCount)
        for index in 0 ..< sourceCount { source[index] = Float(index % 1000) }
        defer { source.deallocate() }
        let target = UnsafeMutablePointer<Float>.allocate(capacity: sourceCount)
        target.initialize(repeating: 0, count: sourceCount)
        defer { target.deallocate() }
        var writeNanoseconds: UInt64 = 0, copyNanoseconds: UInt64 = 0
        var offset = 0
        for _ in 0 ..< chunks {
            if offset + channelCount * chunk > sourceCount { offset = 0 }
            var start = DispatchTime.now().uptimeNanoseconds
            ring.producer.writeInterleaved(source + offset, frameCount: chunk)
            writeNanoseconds += DispatchTime.now().uptimeNanoseconds - start
            ring.consumer.commitRead(chunk)
            start = DispatchTime.now().uptimeNanoseconds
            (target + offset).update(from: source + offset, count: channelCount * chunk)
            copyNanoseconds += DispatchTime.now().uptimeNanoseconds - start
            offset += channelCount * chunk
        }
        return (Double(writeNanoseconds) / Double(chunks), Double(copyNanoseconds) / Double(chunks))
    }
}

/// `channelCount` input buffers of `period` frames in one block, and the pointer table a
/// `ProcessCycle` hands the capture processor, as JACK's port buffers would be.
final class BenchmarkInputs {
    let channelCount: Int
    let period: Int
    /// Channel c's buffer is `samples + c * period`.
    let samples: UnsafeMutablePointer<Float>
    let table: UnsafeMutablePointer<UnsafePointer<Float>>

    init(channelCount: Int, period: Int) {
        self.channelCount = channelCount
        self.period = period
        samples = .allocate(capacity: channelCount * period)
        samples.initialize(repeating: 0, count: channelCount * period)
        table = .allocate(capacity: channelCount)
        for channel in 0 ..< channelCount { table[channel] = UnsafePointer(samples + channel * period) }
    }

    deinit {
        samples.deallocate()
        table.deallocate()
    }

    /// Cycle `index` (frame time `index × period`) over these buffers, with no outputs.
    func cycle(_ index: Int) -> ProcessCycle {
        ProcessCycle(frameCount: period, frameTime: UInt32(truncatingIfNeeded: index * period),
                     cycleStartMicros: 0, nextCycleStartMicros: 0,
                     inputs: UnsafeBufferPointer(start: table, count: channelCount),
                     outputs: UnsafeBufferPointer(start: nil, count: 0))
    }
}
