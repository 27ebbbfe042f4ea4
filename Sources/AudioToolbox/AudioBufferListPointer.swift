import CAudioTypes
import Glibc

// Apple's CoreAudio Swift overlay: an AudioBufferList seen as a collection of its buffers, and
// the allocation helpers for the variable-length struct (Apple declares mBuffers[1]; the
// buffers follow it in memory). Same names and shapes as the overlay, so ported code compiles.

/// A mutable view of an `AudioBufferList`'s buffers (`mNumberBuffers` of them).
public struct UnsafeMutableAudioBufferListPointer {
    public var unsafeMutablePointer: UnsafeMutablePointer<AudioBufferList>
    public var unsafePointer: UnsafePointer<AudioBufferList> { UnsafePointer(unsafeMutablePointer) }

    public init(_ p: UnsafeMutablePointer<AudioBufferList>) { unsafeMutablePointer = p }

    public init?(_ p: UnsafeMutablePointer<AudioBufferList>?) {
        guard let p else { return nil }
        unsafeMutablePointer = p
    }

    /// `mNumberBuffers`.
    public var count: Int {
        get { Int(unsafeMutablePointer.pointee.mNumberBuffers) }
        nonmutating set { unsafeMutablePointer.pointee.mNumberBuffers = UInt32(newValue) }
    }

    private var buffers: UnsafeMutablePointer<AudioBuffer> {
        (UnsafeMutableRawPointer(unsafeMutablePointer) + MemoryLayout<AudioBufferList>.offset(of: \.mBuffers)!).assumingMemoryBound(to: AudioBuffer.self)
    }
}

extension UnsafeMutableAudioBufferListPointer: MutableCollection, RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(index: Int) -> AudioBuffer {
        get {
            precondition(index >= 0 && index < count, "AudioBufferList index \(index) out of 0 ..< \(count)")
            return buffers[index]
        }
        nonmutating set {
            precondition(index >= 0 && index < count, "AudioBufferList index \(index) out of 0 ..< \(count)")
            buffers[index] = newValue
        }
    }
}

extension AudioBufferList {
    /// Bytes for a list of `maximumBuffers` buffers (at least one's worth, as the C struct).
    public static func sizeInBytes(maximumBuffers: Int) -> Int {
        precondition(maximumBuffers >= 1, "an AudioBufferList holds at least one buffer")
        return MemoryLayout<AudioBufferList>.size + (maximumBuffers - 1) * MemoryLayout<AudioBuffer>.stride
    }

    /// A zeroed list with room for `maximumBuffers` buffers and `mNumberBuffers` set to it;
    /// release with `free(list.unsafeMutablePointer)`, as on Apple platforms.
    public static func allocate(maximumBuffers: Int) -> UnsafeMutableAudioBufferListPointer {
        let list = calloc(1, sizeInBytes(maximumBuffers: maximumBuffers))!.bindMemory(to: AudioBufferList.self, capacity: 1)
        list.pointee.mNumberBuffers = UInt32(maximumBuffers)
        return UnsafeMutableAudioBufferListPointer(list)
    }
}

extension AudioBuffer {
    /// A buffer over `typedBuffer`'s memory with `numberOfChannels` interleaved channels.
    public init<Element>(_ typedBuffer: UnsafeMutableBufferPointer<Element>, numberOfChannels: Int) {
        self.init(mNumberChannels: UInt32(numberOfChannels), mDataByteSize: UInt32(typedBuffer.count * MemoryLayout<Element>.stride),
                  mData: UnsafeMutableRawPointer(typedBuffer.baseAddress))
    }
}
