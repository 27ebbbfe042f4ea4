import AQCodecs
import AQMedia
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization

/// A recording of AAC or ALAC buffers (`aqjack record` to .m4a, .caf, .aac) on the queue thread: hands their packets
/// to the disk-writer thread, which appends them to an ADTS, CAF or MPEG-4 file. The queue keeps the encoded stream on the JACK timeline itself
/// (lost device frames are encoded as silence), so packets are written as they come. With `-d`
/// exactly the packets that decode the requested frames are written, ⌈(priming + frames) /
/// F⌉ of them, F the frames per packet (AAC packet k decodes to output frames k·F ..< (k+1)·F
/// from packets ≤ k), and the packet table marks exactly the requested frames valid after the priming, so
/// the remainder is under one packet (which MPEG-4 expresses as the last packet's duration).
public final class PacketRecordSession: @unchecked Sendable, RecordingSession {
    /// The file, written on the disk-writer thread.
    public let writer: DiskBackedPacketFile
    public let targetFrames: Int64?
    public let priming: Int
    /// 1024 for AAC, 4096 for ALAC.
    public let framesPerPacket: Int
    /// Device (JACK) frames per file frame: 1 unless the file's rate differs from the server's.
    public let deviceFramesPerFileFrame: Double
    private let lock = NSLock()
    private var startFrame: UInt64?
    private var failure: String?
    /// The packet table's valid frames once the file is finished.
    private var finalFrames: Int64?
    public let isFinished = Atomic<Bool>(false)

    /// What the file says about itself (CAF's 'info', MPEG-4's tags), written before its first
    /// packet with the first frame's time (``clock``; now without one). Set before the first buffer.
    public var metadata: RecordingMetadata?
    /// The wall clock of device frames.
    public var clock: FrameClock?

    public init(writer: DiskBackedPacketFile, targetFrames: Int64?, priming: Int, framesPerPacket: Int, deviceFramesPerFileFrame: Double) {
        self.writer = writer
        self.framesPerPacket = framesPerPacket
        self.deviceFramesPerFileFrame = deviceFramesPerFileFrame
        self.targetFrames = targetFrames
        self.priming = priming
        writer.packetTable = PacketTable(validFrameCount: 0, primingFrames: Int32(priming), remainderFrames: 0)
    }

    public var framesWritten: Int64 { lock.withLock { max(0, writer.packetCount * Int64(framesPerPacket) - Int64(priming)) } }
    public var summary: (start: UInt64?, frames: Int64, lost: Int64, failure: String?) {
        lock.withLock { (startFrame, finalFrames ?? min(max(0, writer.packetCount * Int64(framesPerPacket) - Int64(priming)), targetFrames ?? .max),
                         droppedFrames, failure) }
    }

    /// Takes one buffer of packets (`gapSilence` is empty: an encoding queue's gaps are in
    /// ``AudioInputQueue/insertedSilenceFrameCount``).
    public func handle(_ buffer: AudioQueueBufferRef, startTime: AudioTimeStamp, gapSilence: [Range<Int>]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil else { return false }
        var count = Int(buffer.pointee.mPacketDescriptionCount)
        if let neededPackets { count = Int(max(0, min(Int64(count), neededPackets - writer.packetCount))) }
        guard count > 0, let descriptions = buffer.pointee.mPacketDescriptions else { return true }
        do throws(AudioFileError) {
            if startFrame == nil {
                // The first packet starts `priming` frames before the first recorded frame.
                let first = max(0, (startTime.mSampleTime + Double(priming) * deviceFramesPerFileFrame).rounded())
                startFrame = UInt64(first)
                if let metadata {
                    try writer.describeStart(metadata, frame: UInt64((first / deviceFramesPerFileFrame).rounded()),
                                             originated: clock?.date(ofFrame: first) ?? Date())
                }
            }
            try writer.writePackets(buffer.pointee.mAudioData, byteCount: Int(buffer.pointee.mAudioDataByteSize),
                                    descriptions: UnsafeBufferPointer(start: descriptions, count: count), startPacket: writer.packetCount)
        } catch {
            // What the file keeps is said once it is closed (the disk writer may still hold packets).
            failure = error.message
            isFinished.store(true, ordering: .releasing)
            return false
        }
        if let neededPackets, writer.packetCount >= neededPackets {
            isFinished.store(true, ordering: .releasing)
        }
        return true
    }

    /// Frames of the packets the disk writer had no room for (not in the file).
    private var droppedFrames: Int64 { writer.droppedPackets * Int64(framesPerPacket) }

    /// The frames a decoder gets from the file as it stands: after the priming when the file
    /// marks it, else with it.
    private var keptFrames: Int64 {
        max(0, writer.packetCount * Int64(framesPerPacket) - (writer.marksPriming ? Int64(priming) : 0))
    }

    /// With a duration: the packets that decode it.
    private var neededPackets: Int64? {
        targetFrames.map { ($0 + Int64(priming) + Int64(framesPerPacket) - 1) / Int64(framesPerPacket) }
    }

    /// Records the packet table (priming, the valid frames: the duration asked for, else every
    /// frame the encoder took in) and closes the file.
    public func finish(queue: AudioInputQueue) -> String? {
        lock.lock()
        defer { lock.unlock() }
        let total = writer.packetCount * Int64(framesPerPacket)
        let recorded = queue.packetTableInfo?.validFrames ?? max(0, total - Int64(priming))
        let valid = max(0, min(recorded, targetFrames ?? recorded, total - Int64(priming)))
        writer.packetTable = PacketTable(validFrameCount: valid, primingFrames: Int32(priming),
                                         remainderFrames: Int32(clamping: total - Int64(priming) - valid))
        finalFrames = valid
        do throws(AudioFileError) { try writer.close() } catch { failure = failure ?? error.message }
        if let message = failure {
            // What the file keeps is what a decoder gets from it as it stands. A file that
            // cannot mark its priming holds (and decodes to) the priming frames too, and the
            // summary says what it holds.
            if !message.contains("the file keeps") {
                failure = message + "; the file keeps \(keptFrames) frames" + (writer.marksPriming || priming == 0 ? ""
                    : ", the first \(priming) of them the encoder's priming, which the file cut short cannot mark")
            }
            if !writer.marksPriming { finalFrames = keptFrames }
        }
        return failure
    }
}
