import AQCore
import AQTestSupport
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization
import Testing

extension JackServerSuite {
    @Suite("Recording at another rate (libsamplerate)")
    struct ResamplingTests {
        @Test("a 1 kHz sine recorded at 44.1 kHz from a 48 kHz server: SNR ≥ 90 dB against the ideal at the reported times")
        func sineAt44100() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("sinegen"), channelCount: 1,
                                                wavePeriod: GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.5, sampleRate: 48000))
            let format = pcmFormat(rate: 44100, channels: 1, bits: 32, float: true)
            let log = DeliveryLog()
            let queue = try AudioInputQueue(format: format, clientName: TestServer.uniqueClientName("sinerec")) { queue, buffer, startTime in
                let count = Int(buffer.pointee.mAudioDataByteSize) / 4
                log.append(.init(startTime: startTime, samples: (0 ..< count).map { buffer.pointee.mAudioData.load(fromByteOffset: $0 * 4, as: Float.self) }))
                try? queue.enqueue(buffer)
            }
            #expect(queue.isResampling)
            queue.currentDevice = generator.client.name
            for _ in 0 ..< 3 { try queue.enqueue(queue.allocateBuffer(byteCapacity: 4410 * 4)) }
            try queue.start()
            usleep(2_000_000)
            queue.stop()
            queue.dispose()
            let all = log.deliveries
            // Consecutive buffers continue each other on the device timeline (48000/44100 per
            // frame). A JACK xrun breaks the timeline (the 2-core VM reports one now and then):
            // then only the longest unbroken run is measured, and the break must be an xrun's.
            var runs: [[DeliveryLog.Delivery]] = [[]]
            for delivery in all {
                if let previous = runs[runs.count - 1].last {
                    let expected = previous.startTime.mSampleTime + Double(previous.samples.count) * 48000 / 44100
                    if abs(delivery.startTime.mSampleTime - expected) > 1e-6 { runs.append([]) }
                }
                runs[runs.count - 1].append(delivery)
            }
            let xruns = queue.driver.xrunCount
            #expect(runs.count == 1 || xruns > 0, "the timeline broke \(runs.count - 1) times without an xrun")
            let deliveries = runs.max { $0.count < $1.count } ?? []
            let first = try #require(deliveries.first)
            let samples = deliveries.flatMap(\.samples)
            #expect(samples.count > (xruns == 0 ? 44100 * 19 / 10 : 44100))
            // Output frame k is the 48 kHz sine at device time t0 + k·48000/44100.
            let t0 = first.startTime.mSampleTime
            let ideal = (0 ..< samples.count).map { 0.5 * sin(2 * Double.pi * 1000 * (t0 + Double($0) * 48000 / 44100) / 48000) }
            let margin = 2048   // the converter's start-up and flush-out
            let snr = SineAnalysis.snr(samples[margin ..< samples.count - margin], ideal: ideal[margin ..< samples.count - margin])
            print("resampled sine SNR \(snr) dB over \(samples.count - 2 * margin) frames")
            #expect(snr >= 90)
        }
    }
}
