import AQJack
import Foundation

/// The JACK server the tests run against: the one `Scripts/test.sh` (or
/// `Scripts/with-dummy-jack.sh`) started and named in `JACK_DEFAULT_SERVER`.
public enum TestServer {
    /// The server's name. A test that needs JACK and finds none fails; it does not skip.
    public static var name: String { JackServer.resolvedName(nil) }

    /// A client name unique to this process and call, e.g. `aqtest-gen-1234-7`.
    public static func uniqueClientName(_ role: String) -> String {
        let serial = counter.add(1)
        return "aqtest-\(role)-\(getpid())-\(serial)"
    }

    private static let counter = SerialCounter()
}

/// A thread-safe counter.
final class SerialCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add(_ amount: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += amount
        return value
    }
}
