import AQCodecs
import AQMedia
import CAudioTypes
import Foundation

/// A compressed file (AAC or Apple Lossless in MPEG-4 or CAF, ADTS) fed with interleaved Float
/// frames and encoded as they come: what the session library's takes and splits write when the
/// recording's format is compressed. Each file has its own encoder, so each is complete by
/// itself: its priming marked (MPEG-4's edit list, CAF's packet table) and exactly the frames
/// given valid. Not real-time: encoding runs where the writes do (the disk-writer thread under
/// ``DiskBackedFiles``).
public final class EncodedFiles: RecordingFiles {
    public let layout: LinearPCMLayout
    public let sampleRate: Double
    public let path: String
    private let sink: FrameSink
    private var isClosed = false
    /// What the file says about itself (``markStart(frame:originated:)``); nil: nothing.
    private let metadata: RecordingMetadata?

    /// Creates `path` as a `fileType` file of `format`, a compressed description (`'aac '` at
    /// `bitRate` bits per second or the encoder's default and Apple's `quality`; `'alac'` at the
    /// depth its flags give). Frames come as 32-bit Float, `format`'s channels, interleaved.
    public init(path: String, fileType: UInt32, format: AudioStreamBasicDescription, bitRate: Int? = nil, quality: Int? = nil,
                eraseExisting: Bool, metadata: RecordingMetadata? = nil) throws(AudioFileError) {
        sink = try FrameSink.create(path: path, fileType: fileType, format: format, bitRate: bitRate, quality: quality,
                                    eraseExisting: eraseExisting)
        layout = try LinearPCMLayout(validating: CompressedFormatValues.floatPCM(sampleRate: format.mSampleRate,
                                                                                 channelCount: Int(format.mChannelsPerFrame)))
        sampleRate = format.mSampleRate
        self.path = path
        self.metadata = metadata
    }

    /// The file's format as written.
    public var fileFormat: AudioStreamBasicDescription { sink.fileFormat }
    public var packetCount: Int64 { sink.framesWritten }
    public var paths: [String] { [path] }
    /// Compressed files carry no BWF time reference.
    public var canCarryTimeReference: Bool { false }
    /// Writes ``metadata`` where the container has a place for it (CAF's 'info' chunk with the
    /// time reference, MPEG-4's tags, FLAC's comments).
    public func markStart(frame: UInt64, originated: Date?) throws(AudioFileError) {
        guard let metadata else { return }
        try sink.describeStart(metadata, frame: frame, originated: originated ?? Date())
    }

    public func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
        try sink.write(bytes.assumingMemoryBound(to: Float.self), frameCount: frames)
    }

    /// Encodes the last frames, marks the priming and the valid frames, closes the file.
    public func close() throws(AudioFileError) {
        guard !isClosed else { return }
        isClosed = true
        _ = try sink.finish()
    }
}
