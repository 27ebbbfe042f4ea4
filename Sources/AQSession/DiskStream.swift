import AQCore
import AQMedia
import Foundation
import Synchronization

/// One recording's lane to the ``DiskWriter`` thread: an SPSC ring of bytes the queue thread
/// copies each buffer into, and the commands that say what the disk thread does with them, in
/// the order given.
///
/// The queue thread (the producer) never waits on the disk: ``send(_:count:write:)`` copies the
/// bytes when the ring has room and answers false when it has not (the disk is that far behind;
/// the caller counts and reports the loss). The disk thread runs the commands in order; a
/// command that throws ends the stream's writing (later writes are skipped, the commands marked
/// `always` — a file's close — still run) and ``failure`` says why.
///
/// Threads: ``send(_:count:write:)``, ``perform(always:_:)`` and ``finish()`` from one producer
/// thread at a time; ``failure`` and ``ringBytes`` from any; the rest is the disk thread's.
public final class DiskStream: @unchecked Sendable {
    /// What the disk thread does next.
    private enum Command {
        /// Skip `padding` bytes of the ring, then hand `count` contiguous bytes to `write`.
        case bytes(padding: Int, count: Int, write: (UnsafeRawPointer) throws(AudioFileError) -> Void)
        case call(always: Bool, work: () throws(AudioFileError) -> Void)
        case finish(DispatchSemaphore)
    }

    /// The ring's size in bytes (a power of two).
    public let ringBytes: Int
    private let producer: RingProducer<UInt8>
    private let consumer: RingConsumer<UInt8>
    /// The commands not yet taken by the disk thread (guarded by ``commandLock``, held only to
    /// append or to take the lot).
    private var commands: [Command] = []
    private let commandLock = NSLock()
    private let failed = Mutex<AudioFileError?>(nil)
    private let writer: DiskWriter
    private var finished = false

    /// Makes a stream with a ring of at least `ringBytes` bytes, served by `writer`.
    /// - Throws: `kAudioFileUnspecifiedError` with the system's reason when the ring's memory
    ///   cannot be mapped.
    public init(ringBytes: Int, writer: DiskWriter = .shared) throws(AudioFileError) {
        let bytes = RingMemory.bytes(minimumElements: max(ringBytes, 4096), stride: 1)
        if let problem = RingMemory.problem(mapping: bytes) {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "the disk writer's ring \(problem)")
        }
        let ring = SPSCRing<UInt8>(minimumCapacity: bytes, resident: false)
        producer = ring.producer
        consumer = ring.consumer
        self.ringBytes = bytes
        self.writer = writer
        writer.register(self)
    }

    /// Why writing stopped (the first command that threw), or nil.
    public var failure: AudioFileError? { failed.withLock { $0 } }

    // MARK: Producer

    /// Copies `count` bytes into the ring, for the disk thread to hand to `write` (as one
    /// contiguous run) after everything sent before. Never waits.
    /// - Returns: false, copying nothing, when the ring has no room for them now.
    public func send(_ bytes: UnsafeRawPointer, count: Int, write: @escaping (UnsafeRawPointer) throws(AudioFileError) -> Void) -> Bool {
        guard count > 0 else { return true }
        let regions = producer.writableRegions()
        let padding: Int
        if regions.first.count >= count {
            padding = 0
        } else if regions.second.count >= count {
            padding = regions.first.count   // runs never wrap: start again at the ring's start
        } else {
            return false
        }
        let destination = padding == 0 ? regions.first.baseAddress! : regions.second.baseAddress!
        UnsafeMutableRawPointer(destination).copyMemory(from: bytes, byteCount: count)
        producer.commitWrite(padding + count)
        enqueue(.bytes(padding: padding, count: count, write: write))
        writer.wake()
        return true
    }

    /// Runs `work` on the disk thread after everything sent before. Unless `always`, it is
    /// skipped once a command has failed.
    public func perform(always: Bool = false, _ work: @escaping () throws(AudioFileError) -> Void) {
        enqueue(.call(always: always, work: work))
        writer.wake()
    }

    /// Waits until the disk thread has run everything given so far, then retires the stream.
    /// - Returns: the failure, if any command failed.
    @discardableResult
    public func finish() -> AudioFileError? {
        if !finished {
            finished = true
            let done = DispatchSemaphore(value: 0)
            enqueue(.finish(done))
            writer.wake()
            done.wait()
            writer.unregister(self)
        }
        return failure
    }

    // MARK: Disk thread

    /// Runs the commands queued so far. Returns whether there were any.
    func service() -> Bool {
        commandLock.lock()
        let batch = commands
        commands.removeAll(keepingCapacity: true)
        commandLock.unlock()
        for command in batch {
            switch command {
            case let .bytes(padding, count, write):
                consumer.commitRead(padding)
                if failure == nil {
                    let run = consumer.readableRegions().first
                    do throws(AudioFileError) { try write(UnsafeRawPointer(run.baseAddress!)) } catch { fail(error) }
                }
                consumer.commitRead(count)
            case let .call(always, work):
                if always || failure == nil {
                    do throws(AudioFileError) { try work() } catch { fail(error) }
                }
            case let .finish(done):
                done.signal()
            }
        }
        return !batch.isEmpty
    }

    private func enqueue(_ command: Command) {
        commandLock.lock()
        commands.append(command)
        commandLock.unlock()
    }

    private func fail(_ error: AudioFileError) {
        failed.withLock { if $0 == nil { $0 = error } }
    }
}
