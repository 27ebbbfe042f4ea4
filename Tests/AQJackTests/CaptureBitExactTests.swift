import AQCore
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Synchronization
import Testing

extension JackServerSuite {
    /// generator client → JACK → our capture client → ring → consumer thread, checked bit for bit.
    @Suite("Capture path, bit-exact")
    struct CaptureBitExactTests {
        /// Runs a generator and a capture client of `channelCount` channels until the sink has
        /// verified `seconds` of audio.
        ///
        /// With `freewheel`, the server freewheels for the whole run, switched on before the
        /// capture client starts and off after the last checked frame: jackd2 1.9.21 repeats or
        /// skips a cycle's frame time when the mode switches (seen as "frame time 2475776,
        /// expected 2475648" then "... expected 2475904" when this test toggled it to pace the
        /// consumer), so the switches stay outside the checked run, and the ring is made large
        /// enough to hold the whole run whatever the consumer's pace.
        static func run(channelCount: Int, seconds: Double, freewheel: Bool) throws -> (TestSignalVerifier, overruns: Int, xruns: Int, rate: Int) {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("gen"), channelCount: channelCount)
            let rate = generator.client.sampleRate
            let targetFrames = Int(seconds * Double(rate))
            let capacityFrames = freewheel ? targetFrames + rate * 10 : rate * 2
            let capture = try CaptureClient(name: TestServer.uniqueClientName("cap"), channelCount: channelCount,
                                            capacityFrames: capacityFrames)
            let verifier = Mutex(TestSignalVerifier(channelCount: channelCount, frameLimit: targetFrames))
            let verified = Atomic<Int>(0)
            let sink = CaptureSink(reader: capture.reader) { cycle, samples in
                let total = verifier.withLock { verifier in
                    verifier.check(cycle, samples)
                    return verifier.verifiedFrameCount
                }
                verified.store(total, ordering: .releasing)
            }
            if freewheel {
                try generator.client.setFreewheel(true)
                let switched = Date().addingTimeInterval(5)
                while !generator.client.notifications.isFreewheeling.load(ordering: .relaxed) && Date() < switched { usleep(1000) }
            }
            try capture.activate()
            try capture.connect(from: generator.portNames)
            let deadline = Date().addingTimeInterval(seconds * 4 + 60)
            while verified.load(ordering: .acquiring) < targetFrames && Date() < deadline { usleep(10_000) }
            if freewheel {
                try generator.client.setFreewheel(false)
                // Leave the server running in real time again before the next test: the first
                // cycles after freewheel ends may be reported as xruns.
                let switched = Date().addingTimeInterval(5)
                while generator.client.notifications.isFreewheeling.load(ordering: .relaxed) && Date() < switched { usleep(1000) }
                usleep(1_000_000)
            }
            // Deactivation disconnects the ports first, so the last cycles before it may really be
            // silence: the verifier has stopped checking at its frame limit by then.
            try capture.client.deactivate()
            sink.stop()
            try generator.client.deactivate()
            let overruns = capture.processor.overrunFrameCount.load(ordering: .relaxed)
            let xruns = capture.client.notifications.xrunCount.load(ordering: .relaxed)
            return (verifier.withLock { $0 }, overruns, xruns, rate)
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

        @Test("8 channels for 10 s in real time at period 128: bit-exact, nothing dropped, frame times contiguous between xruns")
        func realTimePeriod128() throws {
            let probe = try JackClient(name: TestServer.uniqueClientName("period"))
            #expect(probe.bufferSize == 128)
            #expect(probe.sampleRate == 48000)
            probe.close()
            let (verifier, overruns, xruns, rate) = try Self.run(channelCount: 8, seconds: 10, freewheel: false)
            #expect(verifier.verifiedFrameCount >= 10 * rate, "\(verifier.summary)")
            #expect(verifier.wrongSampleCount == 0, "\(verifier.summary)")
            #expect(verifier.droppedFrameCount == 0 && overruns == 0, "\(verifier.summary)")
            // On this 2-core VM the dummy server itself reports an occasional xrun in real time
            // (0-4 per 10 s run, also with nothing else running), and JACK then skips or repeats a
            // cycle's frame time. Such a break is the server's, and the samples still match the
            // frame times JACK reported; without an xrun there must be none.
            // One break is tolerated even unreported (a stall of the whole dummy server, seen once
            // in a clean-clone CI run); more need reported xruns.
            #expect(verifier.discontinuityCount <= max(1, 2 * xruns), "\(verifier.summary); xruns \(xruns)")
            // At such a break the generator and the capture client may be told different frame
            // times for one cycle (a CI run: 3 xruns, one cycle's samples those of the frame time
            // before the jump). The samples must still run on unbroken, and only at a break.
            #expect(verifier.relabelledCycleCount <= verifier.discontinuityCount, "\(verifier.summary)")
            #expect(xruns > 0 || verifier.relabelledCycleCount == 0, "\(verifier.summary)")
            print("capture 8 ch real time: \(verifier.summary); server xruns \(xruns)")
        }
    }
}
