import CAudioTypes
import Foundation

/// What the callback saw: each buffer's timestamp and decoded samples.
public final class DeliveryLog: @unchecked Sendable {
    public struct Delivery: Sendable {
        public let startTime: AudioTimeStamp
        public let samples: [Float]
        public init(startTime: AudioTimeStamp, samples: [Float]) {
            self.startTime = startTime
            self.samples = samples
        }
    }
    private let lock = NSLock()
    private var items: [Delivery] = []
    public init() {}
    public func append(_ item: Delivery) { lock.withLock { items.append(item) } }
    public var deliveries: [Delivery] { lock.withLock { items } }
}

