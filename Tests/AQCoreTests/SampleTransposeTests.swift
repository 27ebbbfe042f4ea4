import AQCore
import Testing

/// The tiled planar ⇄ interleaved copies, and the two rings that use them, sample for sample
/// against the plain definition: channel counts on and off the 16-channel tile (and the 4 KiB
/// stride of 1024 channels), frame counts on and off the 4-frame vectors and the tiles, ring
/// blocks that wrap.
@Suite("Planar and interleaved samples")
struct SampleTransposeTests {
    static let channelCounts = [1, 3, 15, 16, 17, 33, 1024, 2040]
    static let frameCounts = [1, 3, 4, 5, 8, 9, 17, 128, 131]

    /// A sample that names its channel and frame, exact in a Float (below 2^24).
    static func sample(channel: Int, frame: Int) -> Float { Float(channel * 4096 + frame + 1) }

    @Test("interleave puts planar sample (c, f) at f × channels + c", arguments: channelCounts)
    func interleave(channelCount: Int) {
        for frameCount in Self.frameCounts {
            for padding in [0, 7] {
                let stride = frameCount + padding
                let planar = (0 ..< channelCount * stride).map { Self.sample(channel: $0 / stride, frame: $0 % stride) }
                var interleaved = [Float](repeating: -1, count: channelCount * frameCount)
                planar.withUnsafeBufferPointer { source in
                    interleaved.withUnsafeMutableBufferPointer { target in
                        SampleTranspose.interleave(source.baseAddress!, channelStride: stride, frameCount: frameCount,
                                                   channelCount: channelCount, into: target.baseAddress!)
                    }
                }
                let wrong = (0 ..< channelCount * frameCount).filter {
                    interleaved[$0] != Self.sample(channel: $0 % channelCount, frame: $0 / channelCount)
                }
                #expect(wrong.isEmpty, "\(channelCount) channels, \(frameCount) frames, stride \(stride): \(wrong.count) samples wrong, first at \(wrong.first ?? -1)")
            }
        }
    }

    @Test("deinterleave puts interleaved sample f × channels + c at (c, f), and nothing between runs", arguments: channelCounts)
    func deinterleave(channelCount: Int) {
        for frameCount in Self.frameCounts {
            for padding in [0, 7] {
                let stride = frameCount + padding
                let interleaved = (0 ..< channelCount * frameCount).map { Self.sample(channel: $0 % channelCount, frame: $0 / channelCount) }
                var planar = [Float](repeating: -1, count: channelCount * stride)
                interleaved.withUnsafeBufferPointer { source in
                    planar.withUnsafeMutableBufferPointer { target in
                        SampleTranspose.deinterleave(source.baseAddress!, frameCount: frameCount, channelCount: channelCount,
                                                     into: target.baseAddress!, channelStride: stride)
                    }
                }
                let wrong = (0 ..< channelCount * stride).filter {
                    let frame = $0 % stride
                    return planar[$0] != (frame < frameCount ? Self.sample(channel: $0 / stride, frame: frame) : -1)
                }
                #expect(wrong.isEmpty, "\(channelCount) channels, \(frameCount) frames, stride \(stride): \(wrong.count) samples wrong, first at \(wrong.first ?? -1)")
            }
        }
    }

    @Test("the capture reader interleaves every cycle exactly, blocks that wrap the ring included", arguments: [17, 1024])
    func captureReaderAcrossWraps(channelCount: Int) {
        let period = 128
        // A ring of a few cycles, so blocks wrap at many different points.
        let (processor, reader) = CaptureProcessor.make(channelCount: channelCount, capacityFrames: 3 * period + 5)
        let inputs = UnsafeMutablePointer<Float>.allocate(capacity: channelCount * period)
        defer { inputs.deallocate() }
        let table = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channelCount)
        defer { table.deallocate() }
        for channel in 0 ..< channelCount { table[channel] = UnsafePointer(inputs + channel * period) }
        var wrongCycles: [Int] = []
        for cycleIndex in 0 ..< 40 {
            for channel in 0 ..< channelCount {
                for frame in 0 ..< period { inputs[channel * period + frame] = Self.sample(channel: channel, frame: frame) + Float(cycleIndex) }
            }
            processor.process(ProcessCycle(frameCount: period, frameTime: UInt32(cycleIndex * period),
                                           cycleStartMicros: 0, nextCycleStartMicros: 0,
                                           inputs: UnsafeBufferPointer(start: table, count: channelCount),
                                           outputs: UnsafeBufferPointer(start: nil, count: 0)))
            let exact = reader.readCycle { record, samples in
                record.frameCount == period && samples.count == period * channelCount
                    && (0 ..< period * channelCount).allSatisfy {
                        samples[$0] == Self.sample(channel: $0 % channelCount, frame: $0 / channelCount) + Float(cycleIndex)
                    }
            }
            if exact != true { wrongCycles.append(cycleIndex) }
        }
        #expect(wrongCycles.isEmpty, "cycles read wrong: \(wrongCycles)")
    }

    @Test("the planar ring takes interleaved frames exactly across its wrap", arguments: [3, 1024])
    func planarRingAcrossWraps(channelCount: Int) {
        var ring = PlanarFrameRing(channelCount: channelCount, minimumFrames: 300)
        let capacity = ring.consumer.capacityFrames
        var written = 0
        var wrong = 0
        for chunk in [1, 5, 128, 131, 17, 300, 64, 250, 299] {
            let frames = (0 ..< chunk * channelCount).map {
                Self.sample(channel: $0 % channelCount, frame: (written + $0 / channelCount) % 4096)
            }
            frames.withUnsafeBufferPointer { ring.producer.writeInterleaved($0.baseAddress!, frameCount: chunk) }
            for channel in 0 ..< channelCount {
                let run = ring.consumer.channelRun(channel, count: chunk)
                wrong += (0 ..< chunk).count(where: { run[$0] != Self.sample(channel: channel, frame: (written + $0) % 4096) })
            }
            ring.consumer.commitRead(chunk)
            written += chunk
        }
        #expect(written > capacity, "the chunks must wrap the ring")
        #expect(wrong == 0, "\(wrong) samples read back wrong")
    }
}
