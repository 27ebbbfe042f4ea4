import AQMedia
import CAudioTypes

/// One audio file, being written or read, and the one place that decides which container code
/// serves a file type and codec (from ``FileTypes``' table):
/// - linear PCM in WAVE, RF64, Wave64, AIFF, AIFC and CAF: libsndfile (``AudioFileWriter`` /
///   ``AudioFileReader``; the reader also decodes `.flac` files, Ogg and `.mp3` files to float);
/// - packets (AAC in ADTS, CAF and MPEG-4; ALAC in MPEG-4; read from CAF and MPEG-4, also
///   ALAC, FLAC, HE-AAC, MPEG audio, Opus, AC-3 and E-AC-3): our own packet files
///   (``ADTSFileWriter``, ``CAFPacketFileWriter``, ``MPEG4FileWriter`` and their readers);
/// - FLAC, and ALAC in CAF, written from PCM frames: libsndfile's encoders
///   (``LosslessFileWriter``), which take frames, never packets.
///
/// `AudioFileCreateWithURL`/`AudioFileOpenURL`, `aqjack record`, `aqjack info` and
/// ``FileConversion`` all open files here. Not thread-safe: one thread at a time (the queue
/// thread for a recording).
public final class AudioFile {
    /// What the file is, with the object that reads or writes it.
    public enum Content {
        case pcmWriter(AudioFileWriter)
        case packetWriter(any PacketFileWriting)
        case pcmReader(AudioFileReader)
        case packetReader(any PacketFileReading)
    }

    /// How a (file type, codec) pair is stored.
    public enum Container: Equatable, Sendable {
        /// Linear PCM through libsndfile.
        case linearPCM
        /// Compressed packets in a container of our own.
        case packets
        /// Encoded by libsndfile from PCM frames (FLAC; ALAC in CAF).
        case encodedFromFrames(LosslessFileWriter.Codec)
    }

    public let content: Content

    private init(_ content: Content) { self.content = content }

    /// How `codec` is stored in a `fileType` file.
    ///
    /// - Throws: 'fmt?' when the table says the type cannot hold the codec, naming the types that can.
    public static func container(fileType: UInt32, codec: UInt32) throws(AudioFileError) -> Container {
        if let entry = FileTypes.entry(fileType), !entry.codecs.contains(codec) {
            let takers = FileTypes.all.filter { $0.codecs.contains(codec) }.map { "." + $0.primaryExtension }
            let use = takers.isEmpty ? "" : "; use \(takers.joined(separator: ", "))"
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                   "\(fourCharacterCode(fileType)) files cannot hold \(FileTypes.codecName(codec))\(use)")
        }
        switch codec {
        case AudioFormatValues.mpeg4AAC: return .packets
        case AudioFormatValues.appleLossless:
            return fileType == AudioFileTypeValues.m4a || fileType == AudioFileTypeValues.mpeg4 ? .packets : .encodedFromFrames(.appleLossless)
        case AudioFormatValues.flac: return .encodedFromFrames(.flac)
        default: return .linearPCM
        }
    }

    /// Creates a file to be written packet by packet (`AudioFileCreateWithURL`'s contract):
    /// linear PCM frames, or AAC/ALAC packets with their descriptions.
    ///
    /// - Throws: 'typ?' for a type that cannot be written, 'fmt?' for a format the type cannot
    ///   hold (FLAC and ALAC in CAF are written from frames only: ``LosslessFileWriter``),
    ///   'prm?' for an existing file without `eraseExisting`.
    public static func create(path: String, fileType: UInt32, format: AudioStreamBasicDescription,
                              eraseExisting: Bool) throws(AudioFileError) -> AudioFile {
        switch try container(fileType: fileType, codec: format.mFormatID) {
        case .linearPCM:
            return AudioFile(.pcmWriter(try AudioFileWriter(path: path, fileType: fileType, format: format, eraseExisting: eraseExisting)))
        case .packets:
            return AudioFile(.packetWriter(try createPacketWriter(path: path, fileType: fileType, format: format, eraseExisting: eraseExisting)))
        case .encodedFromFrames:
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                   "\(FileTypes.codecName(format.mFormatID)) in \(fourCharacterCode(fileType)) files is encoded from linear PCM frames here, not written as packets; packets go to 'm4af' (.m4a) or 'mp4f' (.mp4) files")
        }
    }

    /// Opens a file for reading: a packet reader when it holds AAC (ADTS, CAF, MPEG-4), ALAC in
    /// MPEG-4, or another format of fixed-size packets in CAF (Opus, AC-3 ...), libsndfile for everything else (decoded formats read as float). The contents decide;
    /// `typeHint` only helps libsndfile with headerless data.
    public static func open(path: String, typeHint: UInt32 = 0) throws(AudioFileError) -> AudioFile {
        if let packets = try openPacketReader(path: path) { return AudioFile(.packetReader(packets)) }
        return AudioFile(.pcmReader(try AudioFileReader(path: path, typeHint: typeHint)))
    }

    // MARK: What every file answers

    public var pcmWriter: AudioFileWriter? { if case .pcmWriter(let writer) = content { writer } else { nil } }
    public var packetWriter: (any PacketFileWriting)? { if case .packetWriter(let writer) = content { writer } else { nil } }
    public var pcmReader: AudioFileReader? { if case .pcmReader(let reader) = content { reader } else { nil } }
    public var packetReader: (any PacketFileReading)? { if case .packetReader(let reader) = content { reader } else { nil } }

    public var isWritable: Bool { pcmWriter != nil || packetWriter != nil }
    /// Whether the file holds variable-size packets (and so needs packet descriptions).
    public var holdsPackets: Bool { packetWriter != nil || packetReader != nil }

    public var dataFormat: AudioStreamBasicDescription {
        switch content {
        case .pcmWriter(let file): file.dataFormat
        case .packetWriter(let file): file.dataFormat
        case .pcmReader(let file): file.dataFormat
        case .packetReader(let file): file.dataFormat
        }
    }

    public var fileType: UInt32 {
        switch content {
        case .pcmWriter(let file): file.fileType
        case .packetWriter(let file): file.fileType
        case .pcmReader(let file): file.fileType
        case .packetReader(let file): file.fileType
        }
    }

    /// Packets in the file (linear PCM: frames).
    public var packetCount: Int64 {
        switch content {
        case .pcmWriter(let file): file.packetCount
        case .packetWriter(let file): file.packetCount
        case .pcmReader(let file): file.packetCount
        case .packetReader(let file): file.packetCount
        }
    }

    /// Bytes of audio data.
    public var byteCount: Int64 {
        switch content {
        case .pcmWriter(let file): file.byteCount
        case .packetWriter(let file): file.byteCount
        case .pcmReader(let file): file.byteCount
        case .packetReader(let file): file.byteCount
        }
    }

    /// Bytes of the largest packet (linear PCM: one frame; compressed: written so far / in the file).
    public var maximumPacketSize: Int {
        switch content {
        case .pcmWriter(let file): file.layout.bytesPerFrame
        case .pcmReader(let file): file.layout.bytesPerFrame
        case .packetWriter(let file): file.maximumPacketSize
        case .packetReader(let file): file.maximumPacketSize
        }
    }

    /// The largest packet the format allows (linear PCM: one frame; AAC: 6144 bits per channel).
    public var packetSizeUpperBound: Int {
        holdsPackets ? CompressedFormatValues.aacMaximumPacketBytes(channels: Int(dataFormat.mChannelsPerFrame)) : maximumPacketSize
    }

    /// Seconds of audio.
    public var duration: Double {
        switch content {
        case .pcmWriter(let file): return file.duration
        case .pcmReader(let file): return file.duration
        case .packetReader(let file): return file.duration
        case .packetWriter(let file):
            let format = file.dataFormat
            let frames = file.packetTable?.validFrameCount ?? file.packetCount * Int64(format.mFramesPerPacket)
            return format.mSampleRate > 0 ? Double(frames) / format.mSampleRate : 0
        }
    }

    /// The ES_Descriptor (AAC) or ALAC cookie; empty for linear PCM.
    public var magicCookie: [UInt8] { packetWriter?.magicCookie ?? packetReader?.magicCookie ?? [] }

    /// Priming and remainder frames of a compressed file (ADTS, which stores none, reports every
    /// frame valid); nil for linear PCM.
    public var packetTable: PacketTable? {
        if let table = packetWriter?.packetTable ?? packetReader?.packetTable { return table }
        guard holdsPackets else { return nil }
        return PacketTable(validFrameCount: packetCount * Int64(dataFormat.mFramesPerPacket), primingFrames: 0, remainderFrames: 0)
    }

    /// Finishes the header (writers) and closes the file.
    public func close() throws(AudioFileError) {
        switch content {
        case .pcmWriter(let file): try file.close()
        case .packetWriter(let file): try file.close()
        case .pcmReader(let file): file.close()
        case .packetReader(let file): file.close()
        }
    }

    // MARK: Packet containers

    /// A writer for AAC in `fileType` ('adts', 'caff', 'm4af' or 'mp4f'), or ALAC in 'm4af'/'mp4f'.
    private static func createPacketWriter(path: String, fileType: UInt32, format: AudioStreamBasicDescription,
                                           eraseExisting: Bool) throws(AudioFileError) -> any PacketFileWriting {
        switch fileType {
        case AudioFileTypeValues.adts: return try ADTSFileWriter(path: path, format: format, eraseExisting: eraseExisting)
        case AudioFileTypeValues.caf: return try CAFPacketFileWriter(path: path, format: format, eraseExisting: eraseExisting)
        case AudioFileTypeValues.m4a, AudioFileTypeValues.mpeg4:
            return try MPEG4FileWriter(path: path, fileType: fileType, format: format, eraseExisting: eraseExisting)
        default:
            throw AudioFileError(AudioFileError.fileUnsupportedTypeCode,
                                   "file type \(fourCharacterCode(fileType)) cannot hold AAC; expected 'adts' (.aac), 'caff' (.caf), 'm4af' (.m4a) or 'mp4f' (.mp4)")
        }
    }

    /// A packet reader when the file's first bytes name a packet container holding AAC (CAF with
    /// AAC or another format read as packets: ``CAFPacketFileReader/readsPackets(of:)``, MPEG-4,
    /// ADTS with or without an ID3 tag), else nil.
    private static func openPacketReader(path: String) throws(AudioFileError) -> (any PacketFileReading)? {
        let file = try ReadableFile(path: path)
        guard let head = file.read(at: 0, count: min(12, Int(file.size))) else { return nil }
        if head.count >= 8, head[0 ..< 4].elementsEqual("caff".utf8) {
            guard let format = CAFPacketFileReader.dataFormat(ofFileAt: path), CAFPacketFileReader.readsPackets(of: format) else { return nil }
            return try CAFPacketFileReader(path: path)
        }
        if head.count >= 8, head[4 ..< 8].elementsEqual("ftyp".utf8) { return try MPEG4FileReader(path: path) }
        if head.count >= 2, head[0] == 0xFF, head[1] & 0xF6 == 0xF0 { return try ADTSFileReader(path: path) }
        if head.count >= 3, head[0 ..< 3].elementsEqual("ID3".utf8), (try? ADTSFileReader(path: path)) != nil { return try ADTSFileReader(path: path) }
        return nil
    }
}
