import CAudioTypes
import CSndFile
import Glibc

/// An audio file opened for reading, packet by packet: the engine behind `AudioFileOpenURL`,
/// `AudioFileReadPacketData` and `AudioFileReadPackets`, over libsndfile.
///
/// Linear PCM stored as 16/24/32-bit integers or 32/64-bit floats (WAVE/WAVEX, RF64, Wave64,
/// AIFF/AIFC, CAF) is read as it is in the file: `dataFormat` says the file's own sample type
/// and byte order, and packets are the file's bytes. Everything else libsndfile decodes (FLAC,
/// ALAC in CAF, Ogg Vorbis/Opus, MP3, 8-bit unsigned, A-law, µ-law, ADPCM) is presented as
/// native-endian 32-bit float linear PCM (``isDecoded``). AAC files, and ALAC in MPEG-4, are read
/// as packets by AQCodecs' packet files instead.
///
/// Not thread-safe: use from one thread at a time.
public final class AudioFileReader {
    public let path: String
    /// The file type (`kAudioFilePropertyFileFormat`): Apple's code where Apple has one.
    public let fileType: UInt32
    /// The data format of the packets this reader hands out (`kAudioFilePropertyDataFormat`).
    public let dataFormat: AudioStreamBasicDescription
    public let layout: LinearPCMLayout
    /// Whether the file's own encoding is presented decoded, as Float32.
    public let isDecoded: Bool
    /// Packets (frames) the header announces (`kAudioFilePropertyAudioDataPacketCount`).
    public let packetCount: Int64
    private var file: OpaquePointer?

    /// Opens `path`. `typeHint` is accepted for Apple's signature; libsndfile recognizes the
    /// type from the contents.
    ///
    /// - Throws: `kAudioFileFileNotFoundError` (-43), `kAudioFilePermissionsError`,
    ///   `kAudioFileUnsupportedFileTypeError` for contents that are no known audio file,
    ///   `kAudioFileInvalidFileError` for a malformed one (truncated header, zero channels, absurd
    ///   rate), each with a message saying what was wrong.
    public init(path: String, typeHint: UInt32 = 0) throws(AudioFileError) {
        if FilePath.withCString(path, { access($0, F_OK) }) != 0 {
            throw AudioFileError(AudioFileError.fileNotFoundCode, "no file at '\(path)'")
        }
        if FilePath.withCString(path, { access($0, R_OK) }) != 0 {
            throw AudioFileError(AudioFileError.filePermissionsCode, "'\(path)' cannot be read (permissions)")
        }
        // libsndfile turns an AIFF's 80-bit rate into an integer without saying when it was
        // infinite, NaN or zero (an infinite rate came out as 67108864 Hz): read it ourselves.
        if let rate = Self.aiffSampleRate(path: path), !(rate.isFinite && rate >= 1 && rate <= 768_000) {
            let shown = rate.isNaN ? "NaN" : rate.isInfinite ? "infinite" : "\(rate == rate.rounded() && abs(rate) < 1e15 ? String(Int64(rate)) : String(rate)) Hz"
            throw AudioFileError(AudioFileError.fileInvalidFileCode, "'\(path)' is malformed: its sample rate is \(shown); expected 1 ... 768000 Hz")
        }
        var info = SF_INFO()
        guard let handle = FilePath.withCString(path, { sf_open($0, Int32(SFM_READ), &info) }) else {
            let code = sf_error(nil)
            let reason = String(cString: sf_strerror(nil))
            switch Int(code) {
            case Int(SF_ERR_UNRECOGNISED_FORMAT):
                throw AudioFileError(AudioFileError.fileUnsupportedTypeCode, "'\(path)' is not an audio file aqjack can read: \(reason)")
            case Int(SF_ERR_UNSUPPORTED_ENCODING):
                throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode, "'\(path)' uses an encoding libsndfile cannot decode: \(reason)")
            default:
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "'\(path)' is malformed: \(reason)")
            }
        }
        func reject(_ message: String) -> AudioFileError {
            sf_close(handle)
            return AudioFileError(AudioFileError.fileInvalidFileCode, "'\(path)' is malformed: \(message)")
        }
        guard info.channels >= 1, info.channels <= 1024 else { throw reject("\(info.channels) channels; expected 1 ... 1024 (libsndfile's limit)") }
        guard info.samplerate >= 1, info.samplerate <= 768_000 else { throw reject("sample rate \(info.samplerate) Hz; expected 1 ... 768000") }
        guard info.frames >= 0 else { throw reject("negative frame count \(info.frames)") }

        let major = Int(info.format) & Int(SF_FORMAT_TYPEMASK)
        let subtype = Int(info.format) & Int(SF_FORMAT_SUBMASK)
        let raw: (bits: Int, float: Bool)?
        switch subtype {
        case Int(SF_FORMAT_PCM_16): raw = (16, false)
        case Int(SF_FORMAT_PCM_24): raw = (24, false)
        case Int(SF_FORMAT_PCM_32): raw = (32, false)
        case Int(SF_FORMAT_PCM_S8): raw = (8, false)
        case Int(SF_FORMAT_FLOAT): raw = (32, true)
        case Int(SF_FORMAT_DOUBLE): raw = (64, true)
        default: raw = nil
        }
        let rawCapable = [SF_FORMAT_WAV, SF_FORMAT_WAVEX, SF_FORMAT_RF64, SF_FORMAT_W64, SF_FORMAT_AIFF, SF_FORMAT_CAF].map { Int($0) }.contains(major)
        let channels = Int(info.channels)
        var format = AudioStreamBasicDescription()
        format.mSampleRate = Double(info.samplerate)
        format.mFormatID = AudioFormatValues.linearPCM
        format.mChannelsPerFrame = UInt32(channels)
        format.mFramesPerPacket = 1
        if let raw, rawCapable {
            // The file's bytes as they are: their order is the host's unless libsndfile says they
            // need swapping.
            let swapped = sf_command(handle, Int32(SFC_RAW_DATA_NEEDS_ENDSWAP), nil, 0) == SF_TRUE
            let hostIsBig = 1.bigEndian == 1
            format.mBitsPerChannel = UInt32(raw.bits)
            format.mFormatFlags = AudioFormatValues.isPacked | (raw.float ? AudioFormatValues.isFloat : AudioFormatValues.isSignedInteger)
            if swapped != hostIsBig { format.mFormatFlags |= AudioFormatValues.isBigEndian }
            isDecoded = false
        } else {
            format.mBitsPerChannel = 32
            format.mFormatFlags = AudioFormatValues.isPacked | AudioFormatValues.isFloat
            if 1.bigEndian == 1 { format.mFormatFlags |= AudioFormatValues.isBigEndian }
            isDecoded = true
        }
        format.mBytesPerFrame = UInt32(channels) * format.mBitsPerChannel / 8
        format.mBytesPerPacket = format.mBytesPerFrame
        do {
            layout = try LinearPCMLayout(validating: format)
        } catch {
            throw reject(error.message)
        }
        self.path = path
        dataFormat = format
        packetCount = Int64(info.frames)
        file = handle
        fileType = Self.fileType(major: major, subtype: subtype, bigEndian: format.mFormatFlags & AudioFormatValues.isBigEndian != 0)
    }

    deinit { close() }

    /// The sample rate in an AIFF/AIFC file's COMM chunk (an 80-bit IEEE extended number, read
    /// exactly, infinities and NaN included), or nil when the file is not AIFF or has no COMM
    /// chunk in its first 64 KiB.
    static func aiffSampleRate(path: String) -> Double? {
        let descriptor = FilePath.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 65536)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 12, bytes[0 ..< 4].elementsEqual("FORM".utf8),
              bytes[8 ..< 12].elementsEqual("AIFF".utf8) || bytes[8 ..< 12].elementsEqual("AIFC".utf8) else { return nil }
        func bigEndian(_ offset: Int, _ length: Int) -> UInt64 { bytes[offset ..< offset + length].reduce(0) { $0 << 8 | UInt64($1) } }
        var offset = 12
        while offset + 8 <= count {
            let size = Int(bigEndian(offset + 4, 4))
            if bytes[offset ..< offset + 4].elementsEqual("COMM".utf8) {
                guard offset + 8 + 18 <= count else { return nil }
                let rate = offset + 8 + 8
                let signAndExponent = Int(bigEndian(rate, 2))
                let mantissa = bigEndian(rate + 2, 8)
                let exponent = signAndExponent & 0x7FFF
                let sign: Double = signAndExponent & 0x8000 != 0 ? -1 : 1
                if exponent == 0x7FFF { return mantissa << 1 == 0 ? sign * .infinity : .nan }
                if mantissa == 0 { return 0 }
                return sign * Double(mantissa) * pow(2, Double(exponent - 16383 - 63))
            }
            offset += 8 + size + (size & 1)
        }
        return nil
    }

    static func fileType(major: Int, subtype: Int, bigEndian: Bool) -> UInt32 {
        switch major {
        case Int(SF_FORMAT_WAV), Int(SF_FORMAT_WAVEX): return AudioFileTypeValues.wave
        case Int(SF_FORMAT_RF64): return AudioFileTypeValues.rf64
        case Int(SF_FORMAT_W64): return AudioFileTypeValues.wave64
        case Int(SF_FORMAT_AIFF):
            let plain = bigEndian && ![Int(SF_FORMAT_FLOAT), Int(SF_FORMAT_DOUBLE)].contains(subtype)
            return plain ? AudioFileTypeValues.aiff : AudioFileTypeValues.aifc
        case Int(SF_FORMAT_CAF): return AudioFileTypeValues.caf
        case Int(SF_FORMAT_FLAC): return AudioFileTypeValues.flac
        case Int(SF_FORMAT_MPEG): return AudioFileTypeValues.mp3
        case Int(SF_FORMAT_OGG): return AudioFileTypeValues.ogg
        default: return AudioFileTypeValues.unknown
        }
    }

    /// Bytes of audio data (`kAudioFilePropertyAudioDataByteCount`), as presented.
    /// (Saturating: a damaged header can claim more frames than 64 bits of bytes hold.)
    public var byteCount: Int64 {
        let (bytes, overflow) = packetCount.multipliedReportingOverflow(by: Int64(layout.bytesPerFrame))
        return overflow ? .max : bytes
    }
    /// Seconds (`kAudioFilePropertyEstimatedDuration`).
    public var duration: Double { Double(packetCount) / dataFormat.mSampleRate }

    /// Reads up to `packetCount` packets from packet `startPacket` into `destination` (which holds
    /// `byteCapacity` bytes; fewer packets are read when they would not fit, as Apple's
    /// `AudioFileReadPacketData` does).
    ///
    /// - Returns: the packets read: 0 at or past the end of the data (also when the header
    ///   promised more than the file holds).
    public func readPackets(startPacket: Int64, packetCount: Int, into destination: UnsafeMutableRawPointer,
                            byteCapacity: Int) throws(AudioFileError) -> Int {
        guard let file else { throw AudioFileError(AudioFileError.fileNotOpenCode, "the file is closed") }
        guard startPacket >= 0 else {
            throw AudioFileError(AudioFileError.fileInvalidPacketOffsetCode, "start packet \(startPacket) is negative")
        }
        let count = min(packetCount, byteCapacity / layout.bytesPerFrame)
        guard count > 0, startPacket < self.packetCount else { return 0 }
        guard sf_seek(file, sf_count_t(startPacket), SEEK_SET) >= 0 else { return 0 }
        if isDecoded {
            let frames = sf_readf_float(file, destination.assumingMemoryBound(to: Float.self), sf_count_t(count))
            return max(0, Int(frames))
        }
        let bytes = sf_read_raw(file, destination, sf_count_t(count * layout.bytesPerFrame))
        return max(0, Int(bytes)) / layout.bytesPerFrame
    }

    /// Reads up to `maximumFrames` frames from frame `startFrame` as interleaved Float
    /// (libsndfile's decoding: integers divided by 2^(bits-1), so 16- and 24-bit samples are
    /// exact). Returns the frames read; 0 at the end.
    public func readFloatFrames(startFrame: Int64, into destination: UnsafeMutablePointer<Float>, maximumFrames: Int) throws(AudioFileError) -> Int {
        guard let file else { throw AudioFileError(AudioFileError.fileNotOpenCode, "the file is closed") }
        guard maximumFrames > 0, startFrame < packetCount, sf_seek(file, sf_count_t(startFrame), SEEK_SET) >= 0 else { return 0 }
        return max(0, Int(sf_readf_float(file, destination, sf_count_t(maximumFrames))))
    }

    /// The stored data's format ID when libsndfile decodes it: 'alac', 'flac', or nil (linear
    /// PCM, or a format without a Core Audio ID here).
    public var storedFormatID: UInt32? {
        guard let file else { return nil }
        var info = SF_INFO()
        sf_command(file, Int32(SFC_GET_CURRENT_SF_INFO), &info, Int32(MemoryLayout<SF_INFO>.size))
        switch info.format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_ALAC_16), Int32(SF_FORMAT_ALAC_20), Int32(SF_FORMAT_ALAC_24), Int32(SF_FORMAT_ALAC_32): return AudioFormatValues.appleLossless
        default: return info.format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_FLAC) ? AudioFormatValues.flac : nil
        }
    }

    /// Bits per sample of the stored data (FLAC/ALAC/PCM), or nil for lossy or float formats.
    public var storedBitDepth: Int? {
        guard let file else { return nil }
        var info = SF_INFO()
        sf_command(file, Int32(SFC_GET_CURRENT_SF_INFO), &info, Int32(MemoryLayout<SF_INFO>.size))
        switch info.format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8): return 8
        case Int32(SF_FORMAT_PCM_16), Int32(SF_FORMAT_ALAC_16): return 16
        case Int32(SF_FORMAT_PCM_24), Int32(SF_FORMAT_ALAC_24): return 24
        case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_ALAC_32): return 32
        default: return nil
        }
    }

    /// The BWF 'bext' TimeReference (frames since midnight, or the JACK frame time of the
    /// first sample for aqjack recordings), when the file has one.
    public var timeReference: Int64? {
        guard let file else { return nil }
        let value = csndfile_time_reference(file)
        return value >= 0 ? value : nil
    }

    public var isOpen: Bool { file != nil }

    public func close() {
        if let file { sf_close(file) }
        file = nil
    }
}
