import AQCore
import AQJack
import AQTestSupport
import Foundation
import Synchronization
import Testing

extension JackServerSuite {
    /// generator client → JACK → our capture client → ring → consumer thread, checked bit for bit.
    @Suite("Capture path, bit-exact")
    struct CaptureBitExactTests {
        /// Runs a generator and a capture client of `channelCount` channels until the sink has
        /// verified `seconds` of audio, optionally pacing the server's freewheel mode so the
        /// consumer keeps up (the ring is the only buffer; nothing ever waits on the process thread).
        static func run(channelCount: Int, seconds: Double, freewheel: Bool) throws -> (TestSignalVerifier, overruns: Int, xruns: Int, rate: Int) {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("gen"), channelCount: channelCount)
            let capture = try CaptureClient(name: TestServer.uniqueClientName("cap"), channelCount: channelCount,
                                            capacityFrames: 1 << 17)
            let rate = capture.client.sampleRate
            let targetFrames = Int(seconds * Double(rate))
            let verifier = Mutex(TestSignalVerifier(channelCount: channelCount))
            let verified = Atomic<Int>(0)
            let sink = CaptureSink(reader: capture.reader) { cycle, samples in
                let total = verifier.withLock { verifier in
                    verifier.check(cycle, samples)
                    return verifier.verifiedFrameCount
                }
                verified.store(total, ordering: .releasing)
            }
            try capture.activate()
            try capture.connect(from: generator.portNames)
            let capacity = capture.reader.sampleCapacity
            var freewheeling = false
            let deadline = Date().addingTimeInterval(seconds * 4 + 60)
            while verified.load(ordering: .acquiring) < targetFrames && Date() < deadline {
                if freewheel {
                    // Hysteresis on the ring's fill level: freewheel while the consumer keeps up.
                    let fill = Double(capture.reader.pendingSampleCount) / Double(capacity)
                    if !freewheeling && fill < 0.125 {
                        try capture.client.setFreewheel(true)
                        freewheeling = true
                    } else if freewheeling && fill > 0.5 {
                        try capture.client.setFreewheel(false)
                        freewheeling = false
                    }
                }
                usleep(2_000)
            }
            // What was checked up to now. Deactivation disconnects the ports first, so the last
            // cycle or two before it may really be silence: they are not part of the run.
            let checked = verifier.withLock { $0 }
            if freewheeling { try capture.client.setFreewheel(false) }
            try capture.client.deactivate()
            sink.stop()
            try generator.client.deactivate()
            let overruns = capture.processor.overrunFrameCount.load(ordering: .relaxed)
            let xruns = capture.client.notifications.xrunCount.load(ordering: .relaxed)
            return (checked, overruns, xruns, rate)
        }

        @Test("64 channels, 60 s of audio in freewheel mode: every sample bit-exact, frame times contiguous")
        func sixtyFourChannelsFreewheel() throws {
            let (verifier, overruns, _, rate) = try Self.run(channelCount: 64, seconds: 60, freewheel: true)
            #expect(verifier.verifiedFrameCount >= 60 * rate, "\(verifier.summary)")
            #expect(verifier.isClean, "\(verifier.summary)")
            #expect(verifier.wrongSampleCount == 0)
            #expect(verifier.discontinuityCount == 0)
            #expect(overruns == 0)
            // The first verified frame is a cycle boundary on the JACK timeline.
            #expect((verifier.firstFrameTime ?? 1) % 128 == 0)
            print("capture 64 ch freewheel: \(verifier.summary)")
        }

        @Test("8 channels for 10 s in real time at period 128: bit-exact, contiguous, no overrun")
        func realTimePeriod128() throws {
            let probe = try JackClient(name: TestServer.uniqueClientName("period"))
            #expect(probe.bufferSize == 128)
            probe.close()
            let (verifier, overruns, xruns, rate) = try Self.run(channelCount: 8, seconds: 10, freewheel: false)
            #expect(verifier.verifiedFrameCount >= 10 * rate, "\(verifier.summary)")
            #expect(verifier.isClean, "\(verifier.summary); xruns \(xruns)")
            #expect(overruns == 0)
            print("capture 8 ch real time: \(verifier.summary); server xruns \(xruns)")
        }
    }
}
