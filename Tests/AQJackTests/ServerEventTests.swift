import AQCore
import AQJack
import AQServerSuite
import AQTestSupport
import Foundation
import Synchronization
import Testing

extension JackServerSuite {
    /// Notifications that need a server of the test's own: it changes the period, then dies.
    @Suite("Server events on a private server")
    struct ServerEventTests {
        @Test("a period change reaches the buffer-size handler and the processor; the server's death reaches the shutdown handler")
        func bufferSizeChangeAndShutdown() throws {
            let server = try PrivateJackServer(period: 128)
            let generator = try GeneratorClient(name: "gen", channelCount: 1, server: server.name)
            let capture = try CaptureClient(name: "cap", channelCount: 1, capacityFrames: 1 << 14, server: server.name)
            let newPeriods = Mutex<[Int]>([])
            let shutdownReasons = Mutex<[String]>([])
            capture.client.notifications.onBufferSizeChange { frames in newPeriods.withLock { $0.append(frames) } }
            capture.client.notifications.onShutdown { reason in shutdownReasons.withLock { $0.append(reason) } }
            try capture.activate()
            try capture.connect(from: generator.portNames)

            try capture.client.setBufferSize(256)
            var deadline = Date().addingTimeInterval(5)
            while !newPeriods.withLock({ $0.contains(256) }) && Date() < deadline { usleep(5_000) }
            #expect(newPeriods.withLock { $0.last } == 256)
            #expect(capture.client.bufferSize == 256)
            // The next cycles arrive with 256 frames, contiguous among themselves. (At the switch
            // jackd2 1.9.21 advances its frame time by one old period more than it delivered,
            // e.g. 3200 -> 3328: the capture reports JACK's frame times as they are.)
            var longCycles = 0
            var last: CaptureCycle?
            deadline = Date().addingTimeInterval(5)
            while longCycles < 4 && Date() < deadline {
                if let cycle = capture.reader.readCycle({ cycle, _ in cycle }) {
                    if let last, last.frameCount == cycle.frameCount {
                        #expect(cycle.frameTime == last.frameTime + UInt64(last.frameCount))
                    }
                    #expect(cycle.droppedFramesBefore == 0)
                    if cycle.frameCount == 256 { longCycles += 1 }
                    last = cycle
                } else {
                    usleep(1_000)
                }
            }
            #expect(longCycles == 4)

            server.stop()
            deadline = Date().addingTimeInterval(5)
            while !capture.client.notifications.hasShutDown.load(ordering: .acquiring) && Date() < deadline { usleep(5_000) }
            let hasShutDown = capture.client.notifications.hasShutDown.load(ordering: .acquiring)
            #expect(hasShutDown)
            #expect(shutdownReasons.withLock { $0.count } == 1)
            // Closing after the server died returns at once and does not crash.
            let closing = Date()
            capture.client.close()
            generator.client.close()
            #expect(Date().timeIntervalSince(closing) < 2)
        }

        @Test("an input connected to a physical capture port reports its capture latency")
        func captureLatency() throws {
            let capture = try CaptureClient(name: TestServer.uniqueClientName("lat"), channelCount: 1, capacityFrames: 4096)
            let updates = Mutex(0)
            capture.client.notifications.onLatencyChange { _ in updates.withLock { $0 += 1 } }
            try capture.activate()
            try capture.client.connect("system:capture_1", to: capture.ports[0].name)
            let deadline = Date().addingTimeInterval(2)
            while capture.ports[0].latency != 128 ... 128 && Date() < deadline { usleep(5_000) }
            // The dummy backend's capture ports report one period (128 frames) of latency.
            #expect(capture.ports[0].latency == 128 ... 128)
            #expect(updates.withLock { $0 } > 0)
        }
    }
}
