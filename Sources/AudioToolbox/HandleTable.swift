import Foundation

/// Opaque Apple handles (`AudioQueueRef`, `AudioFileID`, `AudioConverterRef`,
/// `AudioQueueTimelineRef`, `ExtAudioFileRef`) as serial numbers looked up in a table, never reused: a call with a
/// disposed or unknown handle finds nothing and answers the domain's error instead of touching
/// freed memory. Each kind has its own range of 2^28 numbers (``Range``), 16.7 million handles
/// in steps of 16, so a handle of one kind is never found as another (queue numbers used to
/// run into file numbers after 256 queues). Thread-safe.
final class HandleTable<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private var objects: [Int: Object] = [:]
    private var nextSerial: Int

    /// Where each kind's numbers start.
    enum Range: Int {
        case queues = 0x1000_0000
        case files = 0x2000_0000
        case converters = 0x3000_0000
        case timelines = 0x4000_0000
        case taps = 0x5000_0000
        case extendedFiles = 0x6000_0000
        case fileStreams = 0x7000_0000
    }

    init(_ range: Range) { nextSerial = range.rawValue }

    func register(_ object: Object) -> OpaquePointer {
        let handle = reserve()
        insert(object, at: handle)
        return handle
    }

    /// A new handle with nothing behind it yet (an object that needs its handle while it is made).
    func reserve() -> OpaquePointer {
        lock.withLock {
            nextSerial += 16
            return OpaquePointer(bitPattern: nextSerial)!
        }
    }

    /// Puts `object` behind a handle from ``reserve()``.
    func insert(_ object: Object, at handle: OpaquePointer) {
        lock.withLock { objects[Int(bitPattern: UnsafeRawPointer(handle))] = object }
    }

    func find(_ handle: OpaquePointer?) -> Object? {
        guard let handle else { return nil }
        return lock.withLock { objects[Int(bitPattern: UnsafeRawPointer(handle))] }
    }

    func remove(_ handle: OpaquePointer?) -> Object? {
        guard let handle else { return nil }
        return lock.withLock { objects.removeValue(forKey: Int(bitPattern: UnsafeRawPointer(handle))) }
    }
}
