import AQMedia
import CAudioTypes

/// Chooses the packet-file reader or writer for compressed data; linear PCM (and ALAC/FLAC,
/// which libsndfile encodes and decodes) stay with AQMedia's libsndfile classes.
public enum PacketFiles {
    /// Whether a format is written through a packet file rather than libsndfile: AAC anywhere,
    /// Apple Lossless in MPEG-4 (libsndfile writes ALAC in CAF from PCM itself).
    public static func handles(format: AudioStreamBasicDescription, fileType: UInt32) -> Bool {
        format.mFormatID == CompressedFormatValues.mpeg4AAC
            || (format.mFormatID == CompressedFormatValues.appleLossless
                && (fileType == CompressedFormatValues.m4aFile || fileType == CompressedFormatValues.mpeg4File))
    }

    /// A writer for AAC in `fileType` ('adts', 'caff', 'm4af' or 'mp4f'), or ALAC in 'm4af'/'mp4f'.
    ///
    /// - Throws: 'typ?' for other file types, naming those that hold AAC.
    public static func create(path: String, fileType: UInt32, format: AudioStreamBasicDescription,
                              eraseExisting: Bool) throws(AudioStatusError) -> any PacketFileWriting {
        if format.mFormatID == CompressedFormatValues.appleLossless {
            guard fileType == CompressedFormatValues.m4aFile || fileType == CompressedFormatValues.mpeg4File else {
                throw AudioStatusError(AudioStatusError.fileUnsupportedTypeCode, "Apple Lossless packets are written to 'm4af' or 'mp4f' files here")
            }
            return try MPEG4FileWriter(path: path, fileType: fileType, format: format, eraseExisting: eraseExisting)
        }
        switch fileType {
        case CompressedFormatValues.adtsFile: return try ADTSFileWriter(path: path, format: format, eraseExisting: eraseExisting)
        case AudioFileTypeValues.caf: return try CAFPacketFileWriter(path: path, format: format, eraseExisting: eraseExisting)
        case CompressedFormatValues.m4aFile, CompressedFormatValues.mpeg4File:
            return try MPEG4FileWriter(path: path, fileType: fileType, format: format, eraseExisting: eraseExisting)
        default:
            throw AudioStatusError(AudioStatusError.fileUnsupportedTypeCode,
                                   "file type \(fourCharacterCode(fileType)) cannot hold AAC; expected 'adts' (.aac), 'caff' (.caf), 'm4af' (.m4a) or 'mp4f' (.mp4)")
        }
    }

    /// A packet reader when the file holds AAC (ADTS, CAF, MPEG-4) or ALAC in MPEG-4; nil for
    /// anything else (the caller then opens it with libsndfile).
    public static func open(path: String) throws(AudioStatusError) -> (any PacketFileReading)? {
        let file = try ReadableFile(path: path)
        guard let head = file.read(at: 0, count: min(12, Int(file.size))) else { return nil }
        if head.count >= 8, head[0 ..< 4].elementsEqual("caff".utf8) {
            guard let format = CAFPacketFileReader.dataFormat(ofFileAt: path), format.mFormatID == CompressedFormatValues.mpeg4AAC else { return nil }
            return try CAFPacketFileReader(path: path)
        }
        if head.count >= 8, head[4 ..< 8].elementsEqual("ftyp".utf8) { return try MPEG4FileReader(path: path) }
        if head.count >= 2, head[0] == 0xFF, head[1] & 0xF6 == 0xF0 { return try ADTSFileReader(path: path) }
        if head.count >= 3, head[0 ..< 3].elementsEqual("ID3".utf8), (try? ADTSFileReader(path: path)) != nil { return try ADTSFileReader(path: path) }
        return nil
    }
}
