import CCivetweb
import Foundation
import Glibc
import Synchronization

/// The latest text for the WebSocket clients and its number (1, 2, ... as published), shared by
/// the server and every ``LiveClient``. Any thread.
final class LiveText: Sendable {
    private let latest = Mutex<(number: Int, text: String)?>(nil)

    func publish(_ text: String) {
        latest.withLock { $0 = (($0?.number ?? 0) + 1, text) }
    }

    var current: (number: Int, text: String)? { latest.withLock { $0 } }
}

/// One WebSocket client of `/live` and the thread of its own that pushes it the latest text, at
/// most every `interval` seconds and only when a newer one was published. A client that stops
/// reading holds up only its own thread: once its socket's buffers are full a write waits for
/// civetweb's write timeout (`request_timeout_ms`), and a write that fails or times out ends the
/// pushes to that client; the connection stays until the client or the server closes it.
///
/// Threads: made and stopped on civetweb's threads (the connection's ready and close handlers)
/// or the server's owner at stop; the pushes on the client's thread.
final class LiveClient: @unchecked Sendable {
    /// The civetweb connection, valid until ``stop()`` has returned.
    private let connection: OpaquePointer
    private let text: LiveText
    private let interval: UInt32
    private let running = Atomic<Bool>(true)
    private let finished = Atomic<Bool>(false)

    init(connection: OpaquePointer, text: LiveText, intervalSeconds: Double) {
        self.connection = connection
        self.text = text
        interval = UInt32(max(0.001, intervalSeconds) * 1_000_000)
    }

    func start() {
        let thread = Thread { [self] in
            var sent = 0
            while running.load(ordering: .acquiring) {
                if let latest = text.current, latest.number != sent {
                    sent = latest.number
                    let written = latest.text.withCString { mg_websocket_write(connection, Int32(MG_WEBSOCKET_OPCODE_TEXT), $0, strlen($0)) }
                    if written <= 0 { break }
                }
                usleep(interval)
            }
            finished.store(true, ordering: .releasing)
        }
        thread.name = "aqjack-live"
        thread.start()
    }

    /// Ends the pushes and waits for the thread (at most a write's timeout, when one is under way).
    func stop() {
        running.store(false, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(1000) }
    }
}
