/// Changes of a plugin's control ports, queued by one thread (a console, a control socket) for
/// the process thread, which applies them to the plugin's control values before it runs the
/// plugin: so the process thread is the only writer of the values a running plugin reads.
///
/// Threads: ``set(port:to:)`` from one thread at a time; ``apply(to:portCount:)`` on the process
/// thread (real-time safe).
public final class ControlChangeQueue: @unchecked Sendable {
    /// A control port's new value.
    public struct Change: BitwiseCopyable {
        public var port: UInt32
        public var value: Float
    }

    private let producer: RingProducer<Change>
    private let consumer: RingConsumer<Change>

    /// Room for `capacity` changes between two runs (at least).
    public init(capacity: Int = 1024) {
        let ring = SPSCRing<Change>(minimumCapacity: capacity)
        producer = ring.producer
        consumer = ring.consumer
    }

    /// Queues `value` for control port `port`; false when the queue is full (the process thread
    /// has not run for a while).
    @discardableResult
    public func set(port: Int, to value: Float) -> Bool {
        var change = Change(port: UInt32(port), value: value)
        return withUnsafePointer(to: &change) { producer.writeAll(UnsafeBufferPointer(start: $0, count: 1)) }
    }

    /// Stores every queued change in `controls` (one float per plugin port; ports at or past
    /// `portCount` are skipped); returns how many it took from the queue.
    ///
    /// - Important: Real-time safe. Call only on the process thread.
    #if AQ_RT_CHECKS
    @_noLocks
    #endif
    @discardableResult
    public func apply(to controls: UnsafeMutablePointer<Float>, portCount: Int) -> Int {
        let regions = consumer.readableRegions()
        for change in regions.first where Int(change.port) < portCount { controls[Int(change.port)] = change.value }
        for change in regions.second where Int(change.port) < portCount { controls[Int(change.port)] = change.value }
        consumer.commitRead(regions.count)
        return regions.count
    }
}
