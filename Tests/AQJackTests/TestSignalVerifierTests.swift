import AQCore
import AQTestSupport
import Testing

/// The verifier must catch what it is there to catch: a lost cycle, a moved channel, a dropped
/// count, altered samples. Synthetic cycles, no JACK.
@Suite("Test-signal verifier catches faults")
struct TestSignalVerifierTests {
    static let channels = 3
    static let period = 4

    /// One cycle labelled `frameTime` of exact test signal starting at `signalFrame` (by default
    /// the label), with `edit` applied to the samples.
    static func feed(_ verifier: inout TestSignalVerifier, frameTime: UInt64, signalFrame: UInt64? = nil, dropped: Int = 0,
                     edit: (inout [Float]) -> Void = { _ in }) {
        var samples = [Float](repeating: 0, count: period * channels)
        let start = UInt32(signalFrame ?? frameTime)
        for frame in 0 ..< period {
            for channel in 0 ..< channels {
                samples[frame * channels + channel] = TestSignal.sample(channel: channel, frame: start + UInt32(frame))
            }
        }
        edit(&samples)
        samples.withUnsafeMutableBufferPointer { buffer in
            let regions = RingRegions(first: UnsafeMutableBufferPointer(rebasing: buffer[0 ..< 5]),
                                      second: UnsafeMutableBufferPointer(rebasing: buffer[5...]))
            verifier.check(CaptureCycle(frameTime: frameTime, frameCount: period, droppedFramesBefore: dropped,
                                        cycleStartMicros: 0, nextCycleStartMicros: 0), regions)
        }
    }

    @Test("clean cycles pass")
    func clean() {
        var verifier = TestSignalVerifier(channelCount: Self.channels)
        for cycle in 0 ..< 5 { Self.feed(&verifier, frameTime: 100 + UInt64(cycle * Self.period)) }
        #expect(verifier.isClean)
        #expect(verifier.verifiedFrameCount == 20)
        #expect(verifier.firstFrameTime == 100)
    }

    @Test("a lost cycle is a discontinuity")
    func lostCycle() {
        var verifier = TestSignalVerifier(channelCount: Self.channels)
        Self.feed(&verifier, frameTime: 0)
        Self.feed(&verifier, frameTime: 8)
        #expect(verifier.discontinuityCount == 1)
        #expect(!verifier.isClean)
    }

    @Test("a repeated cycle is a discontinuity")
    func repeatedCycle() {
        var verifier = TestSignalVerifier(channelCount: Self.channels)
        Self.feed(&verifier, frameTime: 0)
        Self.feed(&verifier, frameTime: 0)
        #expect(verifier.discontinuityCount == 1)
    }

    @Test("a cycle labelled with a jumped frame time but carrying on the samples is relabelled, not wrong; a real gap in the samples is wrong")
    func relabelledCycle() {
        var verifier = TestSignalVerifier(channelCount: Self.channels)
        Self.feed(&verifier, frameTime: 0)
        Self.feed(&verifier, frameTime: 8, signalFrame: 4)   // a jump of one cycle in the label only
        Self.feed(&verifier, frameTime: 8)   // a repeated label, samples back on the labels
        #expect(verifier.wrongSampleCount == 0, "\(verifier.summary)")
        #expect(verifier.relabelledCycleCount == 1)
        #expect(verifier.discontinuityCount == 2)
        #expect(!verifier.isClean)
        // A cycle whose samples neither carry on nor match its label is wrong.
        Self.feed(&verifier, frameTime: 12, signalFrame: 52)
        #expect(verifier.wrongSampleCount == Self.period * Self.channels)
    }

    @Test("swapped channels and a one-bit change are wrong samples")
    func alteredSamples() {
        var verifier = TestSignalVerifier(channelCount: Self.channels)
        Self.feed(&verifier, frameTime: 0)
        Self.feed(&verifier, frameTime: 4) { $0.swapAt(0, 1) }
        Self.feed(&verifier, frameTime: 8) { $0[7] = Float(bitPattern: $0[7].bitPattern ^ 1) }
        #expect(verifier.wrongSampleCount == 3)
    }

    @Test("frames the process thread dropped are reported")
    func dropped() {
        var verifier = TestSignalVerifier(channelCount: Self.channels)
        Self.feed(&verifier, frameTime: 0)
        Self.feed(&verifier, frameTime: 4, dropped: 4)
        #expect(verifier.droppedFrameCount == 4)
        #expect(!verifier.isClean)
    }

    @Test("leading silence is allowed only before the signal, and garbage never")
    func leading() {
        var verifier = TestSignalVerifier(channelCount: Self.channels)
        Self.feed(&verifier, frameTime: 0) { $0 = $0.map { _ in 0 } }
        Self.feed(&verifier, frameTime: 4) { $0[2] = 0 }          // partly connected
        #expect(verifier.isClean && verifier.leadingCycleCount == 2)
        Self.feed(&verifier, frameTime: 8)
        Self.feed(&verifier, frameTime: 12) { $0[2] = 0 }         // silence after the start
        #expect(verifier.wrongSampleCount == 1)
        var garbage = TestSignalVerifier(channelCount: Self.channels)
        Self.feed(&garbage, frameTime: 0) { $0[0] = 0.5 }
        #expect(garbage.wrongSampleCount == 1)
        // Before the start, a cycle whose samples are those of one cycle earlier (JACK told the
        // generator another frame time) is not yet the start, and not wrong; two cycles off is.
        var lead = TestSignalVerifier(channelCount: Self.channels)
        Self.feed(&lead, frameTime: 8, signalFrame: 4) { $0[2] = 0 }
        #expect(lead.wrongSampleCount == 0 && lead.leadingCycleCount == 1 && lead.firstFrameTime == nil)
        Self.feed(&lead, frameTime: 16, signalFrame: 8) { $0[2] = 0 }
        #expect(lead.wrongSampleCount == Self.period * Self.channels - 1)   // all but the silent one
    }
}
