import AQTestSupport
import AQWeb
import Foundation
import Synchronization
import Testing

/// The `/live` WebSocket's pushes with clients that stop reading, against the real civetweb
/// server and a client of Python's standard library (Scripts/ws-check.py).
@Suite("live pushes")
struct LivePushTests {
    @Test("two WebSocket clients that never read (their buffers full within a second of 64 KiB pushes every 10 ms) hold up no other: a reading client gets a push at least every second for 6 s, over 200 of them; the server then stops within 12 s (a write under way waits at most civetweb's 10 s timeout)")
    func stalledClientsHoldUpNoOther() throws {
        var options = HTTPServer.Options()
        options.liveInterval = 0.01
        let server = try HTTPServer(options: options) { _ in .json("{}") }
        let running = Atomic<Bool>(true), ended = Atomic<Bool>(false)
        let publisher = Thread {
            var count = 0
            while running.load(ordering: .acquiring) {
                count += 1
                server.publish("{\"n\":\(count),\"pad\":\"" + String(repeating: "x", count: 64 * 1024) + "\"}")
                usleep(10_000)
            }
            ended.store(true, ordering: .releasing)
        }
        publisher.start()
        defer {
            running.store(false, ordering: .releasing)
            while !ended.load(ordering: .acquiring) { usleep(1000) }
        }
        let result = try ExternalTool.run("python3", ["Scripts/ws-check.py", "\(server.port)", "--stalled", "2", "--seconds", "6"], timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        let report = (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]) ?? [:]
        let messages = report["messages"] as? Int ?? 0, gap = report["maxGap"] as? Double ?? .infinity
        #expect(messages > 200 && gap < 1, "\(result.standardOutput)")
        let stopping = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - stopping < .seconds(12), "the server took \(ContinuousClock.now - stopping) to stop")
    }
}
