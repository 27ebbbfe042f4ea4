import Foundation

/// Opaque Apple handles (`AudioFileID`, `AudioConverterRef`) as serial numbers looked up in a
/// table, never reused: a call with a disposed or unknown handle finds nothing and answers the
/// domain's "not open" error instead of touching freed memory. Thread-safe.
final class HandleTable<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private var objects: [Int: Object] = [:]
    private var nextSerial: Int

    /// - Parameter firstSerial: where this table's numbers start (tables use disjoint ranges, so a
    ///   file ID passed as a converter is not found either).
    init(firstSerial: Int) { nextSerial = firstSerial }

    func register(_ object: Object) -> OpaquePointer {
        lock.withLock {
            nextSerial += 16
            objects[nextSerial] = object
            return OpaquePointer(bitPattern: nextSerial)!
        }
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
