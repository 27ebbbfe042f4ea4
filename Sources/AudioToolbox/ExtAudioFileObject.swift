import AQCodecs
import AQMedia
import Foundation

/// How client frames lie in an `AudioBufferList`: linear PCM, interleaved in one buffer or
/// non-interleaved one channel per buffer (`kAudioFormatFlagIsNonInterleaved`, where Apple's
/// `mBytesPerFrame` is one channel's sample).
struct ClientSampleLayout {
    let format: AudioStreamBasicDescription
    /// One sample's encoding (channelCount 1 when non-interleaved).
    let sample: LinearPCMLayout
    let isInterleaved: Bool
    let channelCount: Int

    /// - Throws: ``AudioFileError`` with `kExtAudioFileError_NonPCMClientFormat` for a
    ///   compressed format, else the stream-description check's error naming the field.
    init(validating format: AudioStreamBasicDescription) throws(AudioFileError) {
        guard format.mFormatID == AudioFormatValues.linearPCM else {
            throw AudioFileError(kExtAudioFileError_NonPCMClientFormat,
                                 "client format \(fourCharacterCode(format.mFormatID)): expected linear PCM ('lpcm'); the file's codec is the file format's business")
        }
        isInterleaved = format.mFormatFlags & AudioFormatValues.isNonInterleaved == 0
        var perBuffer = format
        if !isInterleaved {
            perBuffer.mFormatFlags &= ~AudioFormatValues.isNonInterleaved
            perBuffer.mChannelsPerFrame = 1
        }
        sample = try LinearPCMLayout(validating: perBuffer)
        guard format.mSampleRate >= 1 else {
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "client mSampleRate is \(format.mSampleRate): expected a rate in Hz")
        }
        self.format = format
        channelCount = Int(format.mChannelsPerFrame)
    }

    /// Frames that fit in every buffer of `list`, or nil when the list does not have the
    /// buffers this layout needs (one, or one per channel).
    func capacity(of list: UnsafeMutableAudioBufferListPointer) -> Int? {
        if isInterleaved {
            guard list.count >= 1, list[0].mData != nil else { return nil }
            return Int(list[0].mDataByteSize) / sample.bytesPerFrame
        }
        guard list.count == channelCount, list.allSatisfy({ $0.mData != nil }) else { return nil }
        return list.map { Int($0.mDataByteSize) / sample.bytesPerSample }.min() ?? 0
    }

    /// Writes `frames` interleaved Float frames into `list` and sets each buffer's byte size.
    func encode(_ floats: UnsafePointer<Float>, frames: Int, into list: UnsafeMutableAudioBufferListPointer) {
        if isInterleaved {
            sample.encode(floats, count: frames * channelCount, to: list[0].mData!, byteStride: sample.bytesPerSample)
            list[0].mDataByteSize = UInt32(frames * sample.bytesPerFrame)
            return
        }
        for channel in 0 ..< channelCount {
            let data = list[channel].mData!
            for frame in 0 ..< frames {
                sample.encode(floats[frame * channelCount + channel], to: data + frame * sample.bytesPerSample)
            }
            list[channel].mDataByteSize = UInt32(frames * sample.bytesPerSample)
        }
    }

    /// Reads `frames` frames from `list` into interleaved Floats.
    func decode(_ list: UnsafeMutableAudioBufferListPointer, frames: Int, into floats: UnsafeMutablePointer<Float>) {
        if isInterleaved {
            sample.decode(from: list[0].mData!, into: floats, count: frames * channelCount)
            return
        }
        for channel in 0 ..< channelCount {
            let data = list[channel].mData!
            for frame in 0 ..< frames {
                floats[frame * channelCount + channel] = sample.decode(from: data + frame * sample.bytesPerSample)
            }
        }
    }
}

/// What an `ExtAudioFileRef` stands for: a file read through a ``ClientFrameReader`` or written
/// through a ``ClientFrameWriter``, with the client format's encoding on the caller's side.
/// Writes (synchronous and `WriteAsync`) run on one serial queue, in call order; an error of an
/// asynchronous write is answered by the next call.
final class ExtAudioFileObject: @unchecked Sendable {
    static let table = HandleTable<ExtAudioFileObject>(.extendedFiles)

    let path: String
    let reader: ClientFrameReader?
    /// The file being read, registered as an `AudioFileID` for `kExtAudioFileProperty_AudioFile`.
    let audioFile: AudioFile?
    let audioFileID: AudioFileID?
    /// Whether disposing closes ``audioFileID`` (not for a wrapped one: Apple leaves it open).
    let ownsAudioFile: Bool
    private(set) var fileFormat: AudioStreamBasicDescription
    private(set) var client: ClientSampleLayout?
    /// Writing: the writer once the file exists (an encoded file created with rate 0 waits for
    /// the client format's rate), and how to create it until then.
    private var writer: ClientFrameWriter?
    private var pendingCreate: ((Double) throws(AudioFileError) -> FrameSink)?
    private let writeQueue = DispatchQueue(label: "aqjack.ExtAudioFile.write")
    private var asyncFailure: AudioFileError?
    private var scratch: [Float] = []

    var isWriting: Bool { reader == nil }

    /// Reading `file` (opened by us when `owned`).
    init(reading file: AudioFile, id: AudioFileID, owned: Bool, path: String) throws(AudioFileError) {
        self.path = path
        reader = try ClientFrameReader(FrameSource.reading(file, path: path))
        audioFile = file
        audioFileID = id
        ownsAudioFile = owned
        fileFormat = file.dataFormat
        if fileFormat.mFormatID == AudioFormatValues.linearPCM {
            client = try? ClientSampleLayout(validating: fileFormat)
        }
    }

    /// Writing `format` to a new file made by `create` (given the rate: the client's when the
    /// format's is 0).
    init(writing format: AudioStreamBasicDescription, path: String,
         create: @escaping (Double) throws(AudioFileError) -> FrameSink) throws(AudioFileError) {
        self.path = path
        reader = nil
        audioFile = nil
        audioFileID = nil
        ownsAudioFile = false
        fileFormat = format
        if format.mFormatID == AudioFormatValues.linearPCM {
            client = try ClientSampleLayout(validating: format)
        }
        if format.mSampleRate > 0 {
            writer = ClientFrameWriter(try create(format.mSampleRate))
            fileFormat = writer!.sink.fileFormat
        } else {
            pendingCreate = create
        }
    }

    /// Writing through an open linear-PCM writer (`ExtAudioFileWrapAudioFileID` for writing).
    init(wrapping writer: AudioFileWriter, id: AudioFileID, path: String) throws(AudioFileError) {
        self.path = path
        reader = nil
        audioFile = nil
        audioFileID = id
        ownsAudioFile = false
        fileFormat = writer.dataFormat
        client = try ClientSampleLayout(validating: writer.dataFormat)
        self.writer = ClientFrameWriter(FrameSink.wrapping(writer))
    }

    /// Sets the format frames are read or written in.
    func setClientFormat(_ format: AudioStreamBasicDescription) throws(AudioFileError) {
        let layout = try ClientSampleLayout(validating: format)
        if let reader {
            try reader.setClient(sampleRate: format.mSampleRate, channelCount: layout.channelCount)
        } else {
            try onWriteQueue { () throws(AudioFileError) in
                if let pendingCreate {
                    let writer = ClientFrameWriter(try pendingCreate(format.mSampleRate))
                    self.pendingCreate = nil
                    self.writer = writer
                    fileFormat = writer.sink.fileFormat
                }
                try writer!.setClient(sampleRate: format.mSampleRate, channelCount: layout.channelCount)
            }
        }
        client = layout
    }

    /// Reads up to `frames` client frames into `list`; 0 at the end.
    func read(frames: Int, into list: UnsafeMutableAudioBufferListPointer) throws(AudioFileError) -> Int {
        guard let reader else {
            throw AudioFileError(AudioFileError.filePermissionsCode, "'\(path)' was created for writing: read it with ExtAudioFileOpenURL")
        }
        let layout = try clientLayout()
        guard let capacity = layout.capacity(of: list) else { throw channelMapError(layout, list) }
        let wanted = min(frames, capacity)
        if scratch.count < wanted * layout.channelCount { scratch = [Float](repeating: 0, count: wanted * layout.channelCount) }
        var filled = 0
        try scratch.withUnsafeMutableBufferPointer { (floats) throws(AudioFileError) in
            while filled < wanted {
                let read = try reader.read(into: floats.baseAddress! + filled * layout.channelCount, maximumFrames: wanted - filled)
                if read == 0 { break }
                filled += read
            }
            layout.encode(floats.baseAddress!, frames: filled, into: list)
        }
        return filled
    }

    /// Writes `frames` client frames from `list`: now, or on the write queue when `async`
    /// (the frames are copied first, so the caller may reuse its buffers at once).
    func write(frames: Int, from list: UnsafeMutableAudioBufferListPointer, async: Bool) throws(AudioFileError) {
        guard isWriting else {
            throw AudioFileError(AudioFileError.filePermissionsCode, "'\(path)' was opened for reading: write with ExtAudioFileCreateWithURL")
        }
        let layout = try clientLayout()
        guard let capacity = layout.capacity(of: list) else { throw channelMapError(layout, list) }
        guard frames <= capacity else {
            throw AudioFileError(kAudio_ParamError, "\(frames) frames to write, but the buffers hold \(capacity)")
        }
        var decoded = [Float](repeating: 0, count: frames * layout.channelCount)
        decoded.withUnsafeMutableBufferPointer { layout.decode(list, frames: frames, into: $0.baseAddress!) }
        let floats = decoded
        if async {
            if let failure = takeAsyncFailure() { throw failure }
            writeQueue.async {
                do throws(AudioFileError) {
                    try floats.withUnsafeBufferPointer { (pointer) throws(AudioFileError) in try self.writer!.write(pointer.baseAddress!, frameCount: frames) }
                } catch {
                    self.asyncFailure = self.asyncFailure ?? error
                }
            }
            return
        }
        try onWriteQueue { () throws(AudioFileError) in
            if let failure = asyncFailure { asyncFailure = nil; throw failure }
            try floats.withUnsafeBufferPointer { (pointer) throws(AudioFileError) in try writer!.write(pointer.baseAddress!, frameCount: frames) }
        }
    }

    /// Moves reading to file frame `frame`.
    func seek(toFrame frame: Int64) throws(AudioFileError) {
        guard let reader else {
            throw AudioFileError(kExtAudioFileError_InvalidSeek, "'\(path)' is being written: frames are written in order, without seeking")
        }
        guard frame >= 0, frame <= reader.source.frameCount else {
            throw AudioFileError(kExtAudioFileError_InvalidSeek, "seek to frame \(frame): expected 0 ... \(reader.source.frameCount) (the file's length)")
        }
        try reader.seek(toFrame: frame)
    }

    /// The position in file frames.
    var position: Int64 {
        if let reader { return reader.framePosition }
        return writeQueue.sync { writer?.fileFrameCount ?? 0 }
    }

    /// The file's length in frames (what is written so far, when writing).
    var lengthFrames: Int64 {
        if let reader { return reader.source.frameCount }
        return writeQueue.sync { writer?.fileFrameCount ?? 0 }
    }

    /// Finishes the file (writing: waits for asynchronous writes, flushes the converter and the
    /// encoder, finalizes the header) and closes what was opened here.
    func dispose() throws(AudioFileError) {
        var failure: AudioFileError?
        if isWriting {
            do throws(AudioFileError) {
                try onWriteQueue { () throws(AudioFileError) in
                    if let asyncFailure { throw asyncFailure }
                    if let pendingCreate {
                        // Never given a rate: an empty file at the client's (or 44.1 kHz).
                        writer = ClientFrameWriter(try pendingCreate(client?.format.mSampleRate ?? 44100))
                        self.pendingCreate = nil
                    }
                    try writer?.finish()
                }
            } catch {
                failure = error
            }
        }
        if ownsAudioFile, let audioFileID, let file = FileHandles.remove(audioFileID) {
            do throws(AudioFileError) { try file.close() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    private func takeAsyncFailure() -> AudioFileError? {
        writeQueue.sync {
            defer { asyncFailure = nil }
            return asyncFailure
        }
    }

    private func onWriteQueue(_ body: () throws(AudioFileError) -> Void) throws(AudioFileError) {
        var failure: AudioFileError?
        writeQueue.sync {
            do throws(AudioFileError) { try body() } catch { failure = error }
        }
        if let failure { throw failure }
    }

    private func clientLayout() throws(AudioFileError) -> ClientSampleLayout {
        guard let client else {
            throw AudioFileError(kExtAudioFileError_NonPCMClientFormat,
                                 "'\(path)' holds \(fourCharacterCode(fileFormat.mFormatID)): set kExtAudioFileProperty_ClientDataFormat to a linear-PCM format first")
        }
        return client
    }

    private func channelMapError(_ layout: ClientSampleLayout, _ list: UnsafeMutableAudioBufferListPointer) -> AudioFileError {
        AudioFileError(kExtAudioFileError_InvalidChannelMap,
                       layout.isInterleaved ? "the AudioBufferList has no buffer with data: expected one buffer of interleaved frames"
                           : "the AudioBufferList has \(list.count) buffers: expected one per channel (\(layout.channelCount)), each with data")
    }
}
