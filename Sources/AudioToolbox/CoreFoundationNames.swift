import AQMedia
import Foundation

// The few CoreFoundation names that Audio Queue code uses, so it compiles unchanged on Linux
// (swift-corelibs-foundation does not export CoreFoundation's C API). Deviations from Apple are
// listed in the README.

/// A string, as CoreFoundation's `CFString` (here a Swift `String`).
public typealias CFString = String
/// Seconds, as `CFTimeInterval`.
public typealias CFTimeInterval = Double
/// A CoreFoundation index or length.
public typealias CFIndex = Int

/// A file URL, as `CFURL`.
public final class CFURL: @unchecked Sendable {
    /// The file-system path.
    public let path: String
    public init(path: String) { self.path = path }
}

/// `CFURLCreateFromFileSystemRepresentation`: a URL for `length` bytes of a path.
public func CFURLCreateFromFileSystemRepresentation(_ allocator: AnyObject?, _ buffer: UnsafePointer<UInt8>,
                                                    _ length: CFIndex, _ isDirectory: Bool) -> CFURL! {
    // Bytes as they are: a name that is not UTF-8 reaches the file system unchanged (FilePath).
    CFURL(path: FilePath.decode(Array(UnsafeBufferPointer(start: buffer, count: length))))
}

/// `CFURLCreateWithFileSystemPath`: a URL for a path string (the path style is ignored: POSIX).
public func CFURLCreateWithFileSystemPath(_ allocator: AnyObject?, _ filePath: CFString, _ pathStyle: Int, _ isDirectory: Bool) -> CFURL! {
    CFURL(path: filePath)
}

/// `kCFURLPOSIXPathStyle`.
public let kCFURLPOSIXPathStyle = 0

/// A run-loop mode name.
public struct CFRunLoopMode: RawRepresentable, Hashable, Sendable {
    public let rawValue: CFString
    public init(rawValue: CFString) { self.rawValue = rawValue }
    public static let defaultMode = CFRunLoopMode(rawValue: "kCFRunLoopDefaultMode")
    public static let commonModes = CFRunLoopMode(rawValue: "kCFRunLoopCommonModes")
}

/// `kCFRunLoopDefaultMode`.
public let kCFRunLoopDefaultMode: CFRunLoopMode! = .defaultMode
/// `kCFRunLoopCommonModes`.
public let kCFRunLoopCommonModes: CFRunLoopMode! = .commonModes

/// Why `CFRunLoopRunInMode` returned.
public enum CFRunLoopRunResult: Int32, Sendable {
    case finished = 1, stopped = 2, timedOut = 3, handledSource = 4
}

/// A run loop: work posted to it (audio queue callbacks) runs on the thread that runs it.
public final class CFRunLoop: @unchecked Sendable {
    private let lock = NSCondition()
    private var pending: [() -> Void] = []
    private var stopRequested = false

    /// Posts `work` to run on this run loop's thread.
    func perform(_ work: @escaping () -> Void) {
        lock.lock()
        pending.append(work)
        lock.signal()
        lock.unlock()
    }

    /// Runs posted work for up to `seconds`.
    func run(seconds: Double, returnAfterSourceHandled: Bool) -> CFRunLoopRunResult {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if stopRequested {
                stopRequested = false
                return .stopped
            }
            if !pending.isEmpty {
                let work = pending.removeFirst()
                lock.unlock()
                work()
                lock.lock()
                if returnAfterSourceHandled { return .handledSource }
                continue
            }
            if !lock.wait(until: deadline) { return .timedOut }
        }
    }

    func stop() {
        lock.lock()
        stopRequested = true
        lock.signal()
        lock.unlock()
    }

    nonisolated(unsafe) private static var key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The calling thread's run loop, made on first use.
    static var current: CFRunLoop {
        if let existing = pthread_getspecific(key) {
            return Unmanaged<CFRunLoop>.fromOpaque(existing).takeUnretainedValue()
        }
        let loop = CFRunLoop()
        pthread_setspecific(key, Unmanaged.passRetained(loop).toOpaque())
        return loop
    }
}

/// `CFRunLoopGetCurrent`: the calling thread's run loop.
public func CFRunLoopGetCurrent() -> CFRunLoop! { CFRunLoop.current }

/// `CFRunLoopRunInMode`: runs the calling thread's run loop for up to `seconds`, handling posted
/// callbacks (every mode is the same mode here).
@discardableResult
public func CFRunLoopRunInMode(_ mode: CFRunLoopMode!, _ seconds: CFTimeInterval, _ returnAfterSourceHandled: Bool) -> CFRunLoopRunResult {
    CFRunLoop.current.run(seconds: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
}

/// `CFRunLoopStop`.
public func CFRunLoopStop(_ loop: CFRunLoop!) { loop.stop() }
