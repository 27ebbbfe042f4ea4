/// A run of ring elements seen as at most two contiguous segments, for zero-copy access.
///
/// The run starts in `first`; when it wraps around the end of the ring's storage it continues at
/// the start of `second` (otherwise `second` is empty). Index `i` of the run is
/// `first[i]` for `i < first.count`, else `second[i - first.count]`.
@frozen
public struct RingRegions<Element: BitwiseCopyable> {
    /// The segment that starts the run.
    public let first: UnsafeMutableBufferPointer<Element>
    /// The segment that continues the run after the wrap, often empty.
    public let second: UnsafeMutableBufferPointer<Element>

    @inlinable
    public init(first: UnsafeMutableBufferPointer<Element>, second: UnsafeMutableBufferPointer<Element>) {
        self.first = first
        self.second = second
    }

    /// Elements in both segments together.
    @inlinable
    public var count: Int { first.count + second.count }

    /// Element `index` of the run, `0 ..< count`. Unchecked in release builds.
    @inlinable
    public subscript(index: Int) -> Element {
        get {
            index < first.count ? first[index] : second[index - first.count]
        }
        nonmutating set {
            if index < first.count { first[index] = newValue } else { second[index - first.count] = newValue }
        }
    }

    /// Copies `source` into the run from its start. `source.count` must not exceed `count`.
    @inlinable
    public func copy(from source: UnsafeBufferPointer<Element>) { copy(from: source, at: 0) }

    /// Copies the start of the run into `destination`, filling it. `destination.count` must not
    /// exceed `count`.
    @inlinable
    public func copy(into destination: UnsafeMutableBufferPointer<Element>) { copy(into: destination, at: 0) }

    /// Copies `source` into the run from element `offset` on. `offset + source.count` must not
    /// exceed `count`.
    @inlinable
    public func copy(from source: UnsafeBufferPointer<Element>, at offset: Int) {
        precondition(offset >= 0 && offset + source.count <= count, "copy into a ring run past its end")
        guard let base = source.baseAddress, !source.isEmpty else { return }
        let head = Swift.max(0, Swift.min(source.count, first.count - offset))
        // Raw copies: what the real-time checks accept (a typed update may, for them, release).
        let stride = MemoryLayout<Element>.stride
        if head > 0 { UnsafeMutableRawPointer(first.baseAddress! + offset).copyMemory(from: base, byteCount: head * stride) }
        if source.count > head {
            UnsafeMutableRawPointer(second.baseAddress! + (offset + head - first.count))
                .copyMemory(from: base + head, byteCount: (source.count - head) * stride)
        }
    }

    /// Copies elements `offset ..< offset + destination.count` of the run into `destination`.
    @inlinable
    public func copy(into destination: UnsafeMutableBufferPointer<Element>, at offset: Int) {
        precondition(offset >= 0 && offset + destination.count <= count, "copy from a ring run past its end")
        guard let base = destination.baseAddress, !destination.isEmpty else { return }
        let head = Swift.max(0, Swift.min(destination.count, first.count - offset))
        let stride = MemoryLayout<Element>.stride
        if head > 0 { UnsafeMutableRawPointer(base).copyMemory(from: first.baseAddress! + offset, byteCount: head * stride) }
        if destination.count > head {
            UnsafeMutableRawPointer(base + head)
                .copyMemory(from: second.baseAddress! + (offset + head - first.count), byteCount: (destination.count - head) * stride)
        }
    }
}
