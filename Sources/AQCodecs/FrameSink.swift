import AQCore
import AQMedia
import Foundation
import CAudioTypes
import Glibc

/// Where converted Float frames go: a linear-PCM file, a FLAC or ALAC-in-CAF file encoded by
/// libsndfile, or AAC/ALAC packets encoded here. One thread at a time.
public final class FrameSink {
    private let pcm: (writer: AudioFileWriter, layout: LinearPCMLayout)?
    private let lossless: LosslessFileWriter?
    /// AAC or ALAC packets: the encoder, the file, its frames per packet.
    private let encoded: (encoder: any PacketEncoding, file: any PacketFileWriting, framesPerPacket: Int)?
    private let format: AudioStreamBasicDescription
    private var frames: Int64 = 0
    private var bytes: [UInt8] = []
    /// Encoded packets waiting to be written.
    private var ready: [EncodedPacket] = []

    private init(pcm: (AudioFileWriter, LinearPCMLayout)?, lossless: LosslessFileWriter?,
                 encoded: (any PacketEncoding, any PacketFileWriting, Int)?, format: AudioStreamBasicDescription) {
        self.pcm = pcm
        self.lossless = lossless
        self.encoded = encoded
        self.format = format
    }

    /// Frames written so far.
    public var framesWritten: Int64 { frames }

    /// Writes what the file says about the recording that starts in it (``RecordingMetadata``,
    /// the first frame as samples since midnight, the wall-clock time of it) where its type has
    /// a place: WAVE and RF64 'bext' and iXML, CAF 'info', MPEG-4 tags; nothing for the files
    /// libsndfile encodes (FLAC, ALAC in CAF), which recordings do not write. Before the first
    /// frame.
    public func describeStart(_ metadata: RecordingMetadata, frame: UInt64, originated: Date) throws(AudioFileError) {
        if let pcm {
            pcm.writer.metadata = metadata
            try pcm.writer.describeStart(frame: frame, originated: originated)
        } else if let encoded {
            try encoded.file.describeStart(metadata, frame: frame, originated: originated)
        }
    }

    /// A sink for an open linear-PCM writer (ExtAudioFileWrapAudioFileID); ``finish()`` closes it.
    public static func wrapping(_ writer: AudioFileWriter) -> FrameSink {
        FrameSink(pcm: (writer, writer.layout), lossless: nil, encoded: nil, format: writer.dataFormat)
    }

    /// A new `fileType` file at `path` holding `format`: linear PCM exactly as described (depth,
    /// endianness, float or integer), or a codec's description ('aac ', 'alac', 'flac') at its
    /// rate and channel count (ALAC's and FLAC's bit depth from the description, else 16;
    /// AAC at `bitRate` or the encoder's default, and Apple's `quality` 0 ... 127 when given).
    ///
    /// - Throws: ``AudioFileError`` when the file type cannot hold the format, or the file
    ///   cannot be created.
    public static func create(path: String, fileType: UInt32, format: AudioStreamBasicDescription, bitRate: Int? = nil,
                              quality: Int? = nil, eraseExisting: Bool) throws(AudioFileError) -> FrameSink {
        if format.mFormatID == AudioFormatValues.linearPCM {
            let writer = try AudioFile.create(path: path, fileType: fileType, format: format, eraseExisting: eraseExisting).pcmWriter!
            return wrapping(writer)
        }
        var request = FileConversion.Request(inputPath: "", outputPath: path)
        request.eraseExisting = eraseExisting
        request.bitRate = bitRate
        request.quality = quality
        var depth: Int?
        if format.mFormatID == AudioFormatValues.appleLossless { depth = ALAC.bitDepth(formatFlag: format.mFormatFlags) }
        if format.mFormatID == AudioFormatValues.flac, format.mBitsPerChannel > 0 { depth = Int(format.mBitsPerChannel) }
        request.bitDepth = depth
        let floats = CompressedFormatValues.floatPCM(sampleRate: format.mSampleRate, channelCount: Int(format.mChannelsPerFrame))
        return try create(request: request, fileType: fileType, codec: format.mFormatID, format: floats, sourceBitDepth: depth)
    }

    static func create(request: FileConversion.Request, fileType: UInt32, codec: UInt32, format floatFormat: AudioStreamBasicDescription,
                       sourceBitDepth: Int?) throws(AudioFileError) -> FrameSink {
        let path = request.outputPath
        let channels = Int(floatFormat.mChannelsPerFrame)
        // Which container serves the codec is AudioFile's decision (from FileTypes' table).
        let container = try AudioFile.container(fileType: fileType, codec: codec)
        switch (container, codec) {
        case (.packets, AudioFormatValues.mpeg4AAC):
            var aacFormat = floatFormat
            aacFormat.mFormatID = AudioFormatValues.mpeg4AAC
            aacFormat.mFormatFlags = 0
            aacFormat.mFramesPerPacket = 0
            let converter = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try FormatConverter(from: floatFormat, to: aacFormat) }
            if let bitRate = request.bitRate { converter.bitRate = bitRate }
            if let quality = request.quality { converter.codecQuality = quality }
            let encoder = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try converter.openEncoder() }
            let file = try AudioFile.create(path: path, fileType: fileType, format: converter.destination, eraseExisting: request.eraseExisting).packetWriter!
            try file.setMagicCookie(ElementaryStreamDescriptor(audioSpecificConfig: encoder.audioSpecificConfig, averageBitRate: UInt32(converter.bitRate),
                                                               maximumBitRate: UInt32(converter.bitRate), bufferSize: UInt32(encoder.maximumPacketSize)).bytes)
            file.packetTable = PacketTable(validFrameCount: 0, primingFrames: Int32(encoder.primingFrames), remainderFrames: 0)
            return FrameSink(pcm: nil, lossless: nil, encoded: (encoder, file, 1024), format: converter.destination)
        case (.packets, AudioFormatValues.appleLossless):
            // ALAC in MPEG-4: libavcodec's encoder (libsndfile writes ALAC in CAF only).
            let depth = request.bitDepth ?? (sourceBitDepth == 24 || sourceBitDepth == 32 ? 24 : 16)
            let encoder = try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try ALACEncoder(sampleRate: Int(floatFormat.mSampleRate), channelCount: channels, bitDepth: depth) }
            let format = CompressedFormatValues.alacDescription(sampleRate: floatFormat.mSampleRate, channelCount: channels, bitDepth: depth)
            let file = try AudioFile.create(path: path, fileType: fileType, format: format, eraseExisting: request.eraseExisting).packetWriter!
            try file.setMagicCookie(encoder.magicCookie)
            file.packetTable = PacketTable(validFrameCount: 0, primingFrames: 0, remainderFrames: 0)
            return FrameSink(pcm: nil, lossless: nil, encoded: (encoder, file, ALAC.framesPerPacket), format: format)
        case (.encodedFromFrames(let lossless), _):
            let depth = request.bitDepth ?? (sourceBitDepth == 24 || sourceBitDepth == 32 ? 24 : 16)
            let writer = try LosslessFileWriter(path: path, codec: lossless, sampleRate: Int(floatFormat.mSampleRate),
                                                channelCount: channels, bitDepth: depth, eraseExisting: request.eraseExisting)
            var format = floatFormat
            format.mFormatID = codec
            format.mFormatFlags = 0
            format.mBitsPerChannel = 0
            format.mBytesPerFrame = 0
            format.mBytesPerPacket = 0
            format.mFramesPerPacket = 4096
            return FrameSink(pcm: nil, lossless: writer, encoded: nil, format: format)
        case (.linearPCM, AudioFormatValues.linearPCM):
            // Without -b: the input's integer depth, or 32-bit float for float, lossy and AAC input.
            let isFloat = request.bitDepth == nil && sourceBitDepth == nil
            var depth = isFloat ? 32 : request.bitDepth ?? sourceBitDepth ?? 16
            // 8-bit WAVE samples are unsigned, which the writer does not take: an 8-bit source
            // goes to the WAVE family as 16-bit (exact: every 8-bit value is a 16-bit one).
            let waveFamily = [AudioFileTypeValues.wave, AudioFileTypeValues.rf64, AudioFileTypeValues.wave64].contains(fileType)
            if depth == 8 && request.bitDepth == nil && waveFamily { depth = 16 }
            let bigEndian = fileType == AudioFileTypeValues.aiff || (fileType == AudioFileTypeValues.aifc && isFloat)
            guard [8, 16, 24, 32].contains(depth) else {
                throw AudioFileError(AudioFileError.unsupportedDataFormatCode, "-b \(depth): expected 16, 24 or 32 bits")
            }
            let bytes = UInt32(depth / 8 * channels)
            let pcmFormat = AudioStreamBasicDescription(
                mSampleRate: floatFormat.mSampleRate, mFormatID: AudioFormatValues.linearPCM,
                mFormatFlags: (isFloat ? AudioFormatValues.isFloat : AudioFormatValues.isSignedInteger) | AudioFormatValues.isPacked
                    | (bigEndian ? AudioFormatValues.isBigEndian : 0),
                mBytesPerPacket: bytes, mFramesPerPacket: 1, mBytesPerFrame: bytes, mChannelsPerFrame: UInt32(channels),
                mBitsPerChannel: UInt32(depth), mReserved: 0)
            let writer = try AudioFile.create(path: path, fileType: fileType, format: pcmFormat, eraseExisting: request.eraseExisting).pcmWriter!
            return FrameSink(pcm: (writer, writer.layout), lossless: nil, encoded: nil, format: pcmFormat)
        default:
            throw AudioFileError(AudioFileError.unsupportedDataFormatCode,
                                   "codec \(fourCharacterCode(codec)): expected lpcm, aac, alac or flac")
        }
    }

    /// The file's format: linear PCM as written, or the codec's description.
    public var fileFormat: AudioStreamBasicDescription { format }

    /// Writes `frameCount` interleaved frames at the sink's rate and channel count.
    public func write(_ floats: UnsafePointer<Float>, frameCount: Int) throws(AudioFileError) {
        guard frameCount > 0 else { return }
        frames += Int64(frameCount)
        if let pcm {
            let size = frameCount * pcm.layout.bytesPerFrame
            if bytes.count < size { bytes = [UInt8](repeating: 0, count: size) }
            try bytes.withUnsafeMutableBufferPointer { (buffer) throws(AudioFileError) in
                let raw = UnsafeMutableRawPointer(buffer.baseAddress!)
                pcm.layout.encode(floats, count: frameCount * pcm.layout.channelCount, to: raw, byteStride: pcm.layout.bytesPerSample)
                _ = try pcm.writer.writePackets(raw, byteCount: size, startPacket: pcm.writer.packetCount, packetCount: frameCount)
            }
        } else if let lossless {
            try lossless.write(floats, frameCount: frameCount)
        } else if let encoded {
            try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try encoded.encoder.encode(floats, frameCount: frameCount) { ready.append($0) } }
            try writeReadyPackets()
        }
    }

    private func writeReadyPackets() throws(AudioFileError) {
        guard let encoded, !ready.isEmpty else { return }
        var data: [UInt8] = []
        var descriptions: [AudioStreamPacketDescription] = []
        defer { ready.removeAll(keepingCapacity: true) }
        for packet in ready {
            descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(data.count), mVariableFramesInPacket: 0, mDataByteSize: UInt32(packet.bytes.count)))
            data += packet.bytes
        }
        guard !descriptions.isEmpty else { return }
        try data.withUnsafeBufferPointer { (raw) throws(AudioFileError) in
            try descriptions.withUnsafeBufferPointer { (described) throws(AudioFileError) in
                try encoded.file.writePackets(raw.baseAddress!, byteCount: raw.count, descriptions: described, startPacket: encoded.file.packetCount)
            }
        }
    }

    /// Flushes the encoder, records the packet table and closes the file.
    @discardableResult
    public func finish() throws(AudioFileError) -> (frames: Int64, format: AudioStreamBasicDescription, packets: Int64, priming: Int, remainder: Int) {
        if let pcm {
            try pcm.writer.close()
            return (frames, format, frames, 0, 0)
        }
        if let lossless {
            lossless.close()
            return (frames, format, (frames + 4095) / 4096, 0, 0)
        }
        guard let encoded else { return (frames, format, 0, 0, 0) }
        try inDomain(AudioFileError.self) { () throws(AudioConverterError) in try encoded.encoder.finish { ready.append($0) } }
        try writeReadyPackets()
        let priming = encoded.encoder.primingFrames
        let packets = encoded.file.packetCount
        let remainder = Int(packets) * encoded.framesPerPacket - priming - Int(frames)
        encoded.file.packetTable = PacketTable(validFrameCount: frames, primingFrames: Int32(priming), remainderFrames: Int32(remainder))
        try encoded.file.close()
        return (frames, format, packets, priming, remainder)
    }
}
