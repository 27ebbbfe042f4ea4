import AQCore
import AQTestSupport
import Testing

@Suite("Test signal encoding")
struct TestSignalTests {
    @Test("every channel and frame decodes back, and every sample is finite, normal and below 2 in magnitude")
    func roundTrip() {
        let frames: [UInt32] = [0, 1, 127, 128, 65535, 1 << 21, (1 << 22) - 1, 1 << 22, UInt32.max]
        for channel in 0 ..< TestSignal.maximumChannelCount {
            for frame in frames {
                let sample = TestSignal.sample(channel: channel, frame: frame)
                #expect(sample.isNormal && abs(sample) < 2)
                let decoded = TestSignal.decode(sample)
                #expect(decoded?.channel == channel)
                #expect(decoded?.frame == frame % TestSignal.framePeriod)
            }
        }
        #expect(TestSignal.decode(0) == nil)
        #expect(TestSignal.decode(2) == nil)      // exponent beyond the 64 used
        #expect(TestSignal.decode(.nan) == nil)
        #expect(TestSignal.decode(1e-30) == nil)  // exponent below them
    }

    @Test("neighbouring frames and channels give different samples")
    func distinct() {
        var seen = Set<UInt32>()
        for channel in 0 ..< 64 {
            for frame in UInt32(1000) ..< 1200 { seen.insert(TestSignal.sample(channel: channel, frame: frame).bitPattern) }
        }
        #expect(seen.count == 64 * 200)
    }

    @Test("the generator logs each cycle whose frame time does not follow on, forward or back, and only those")
    func jumpLog() {
        let generator = SignalGeneratorProcessor()
        let period = 128
        let output = UnsafeMutablePointer<Float>.allocate(capacity: period)
        defer { output.deallocate() }
        let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
        defer { outputs.deallocate() }
        outputs[0] = output
        // 0, 128, (skip 256) 512, 640, (back 128) 640, 768: two jumps.
        for frameTime: UInt32 in [0, 128, 512, 640, 640, 768] {
            generator.process(ProcessCycle(frameCount: period, frameTime: frameTime, cycleStartMicros: 0, nextCycleStartMicros: 0,
                                           inputs: UnsafeBufferPointer(start: nil, count: 0),
                                           outputs: UnsafeBufferPointer(start: outputs, count: 1)))
        }
        let (jumps, total) = generator.jumps.jumps(from: 0)
        #expect(total == 2)
        #expect(jumps.map(\.frameTime) == [512, 640] && jumps.map(\.skippedFrames) == [256, -128])
        #expect(generator.jumps.jumps(from: 1).jumps.map(\.frameTime) == [640])
        #expect(output[0] == TestSignal.sample(channel: 0, frame: 768))
    }
}

