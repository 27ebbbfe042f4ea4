import CAudioTypes
import CSndFile
import Foundation
import Glibc

/// A linear-PCM audio file being written, packet by packet: the engine behind
/// `AudioFileCreateWithURL`, `AudioFileWritePackets` and `AudioFileClose`, over libsndfile.
///
/// The caller's bytes are written to the file as they are (`sf_write_raw`): the stream
/// description must already be in the file type's byte order, which is checked at creation, so
/// the data that reaches the disk is bit for bit what the caller gave.
///
/// **Crash safety.** The header is rewritten after every ``writePackets(_:byteCount:startPacket:packetCount:)``
/// (`SFC_UPDATE_HEADER_NOW`: one small write at the file's start), so a process killed at any
/// moment (SIGKILL; a power cut aside) leaves a file whose header counts every frame written
/// before the last call. (libsndfile's automatic update, once per `sf_write_raw`, would rewrite
/// it for every slice of a call.)
///
/// Not thread-safe: use from one thread at a time (the disk or queue thread).
public final class AudioFileWriter {
    public let path: String
    public let fileType: UInt32
    /// The file's data format, as given (`kAudioFilePropertyDataFormat`).
    public let dataFormat: AudioStreamBasicDescription
    public let layout: LinearPCMLayout
    private var file: OpaquePointer?
    /// The file's descriptor (libsndfile writes through it and closes it), for the write-behind.
    private let descriptor: Int32
    /// Bytes from the file's start handed to the disk's writeback, and of those, dropped from
    /// the page cache (the write-behind, ``writeBehindBytes``). Both start past the header.
    private var writebackStarted: Int64 = Int64(AudioFileWriter.headerBytes)
    private var writebackDropped: Int64 = Int64(AudioFileWriter.headerBytes)
    /// Packets (frames) written (`kAudioFilePropertyAudioDataPacketCount`).
    public private(set) var packetCount: Int64 = 0

    /// Creates the file.
    ///
    /// - Parameters:
    ///   - eraseExisting: `kAudioFileFlags_EraseFile`. Without it an existing file is refused
    ///     (Apple: "the function fails if the URL is an existing file") and left untouched.
    /// - Throws: `kAudioFileUnsupportedFileTypeError` for a type it cannot write,
    ///   `kAudioFileUnsupportedDataFormatError` for a format the type cannot hold (the message says
    ///   which field and what the type needs), `kAudioFilePermissionsError` for an existing file
    ///   without `eraseExisting` or a path that cannot be written.
    public init(path: String, fileType: UInt32, format: AudioStreamBasicDescription, eraseExisting: Bool) throws(AudioFileError) {
        let layout = try LinearPCMLayout(validating: format)
        guard format.mSampleRate >= 1 else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode, "mSampleRate is \(format.mSampleRate); a file needs the rate in Hz")
        }
        let sfFormat = try Self.sndfileFormat(fileType: fileType, layout: layout)
        try OutputPath.checkCreatable(path, eraseExisting: eraseExisting)
        var info = SF_INFO(frames: 0, samplerate: Int32(format.mSampleRate.rounded()), channels: Int32(layout.channelCount),
                           format: sfFormat, sections: 0, seekable: 0)
        guard sf_format_check(&info) == SF_TRUE else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                 "libsndfile cannot write \(fourCharacterCode(fileType)) with \(layout.bitsPerChannel)-bit \(layout.kind) samples")
        }
        // Opened here and handed to libsndfile, which closes it: the write-behind needs it.
        let descriptor = FilePath.withCString(path) { Glibc.open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }
        guard descriptor >= 0 else {
            throw AudioFileError(AudioFileError.filePermissionsCode, "cannot create '\(path)': \(SystemError.describe(errno))")
        }
        guard let handle = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            let reason = String(cString: sf_strerror(nil))
            Glibc.close(descriptor)
            throw AudioFileError(AudioFileError.filePermissionsCode, "cannot create '\(path)': \(reason)")
        }
        self.descriptor = descriptor
        if fileType == AudioFileTypeValues.wave {
            sf_command(handle, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
        }
        file = handle
        self.path = path
        self.fileType = fileType
        var stored = format
        stored.mSampleRate = Double(info.samplerate)
        dataFormat = stored
        self.layout = layout
    }

    deinit { try? close() }

    /// The most bytes one `write(2)` takes: a call's bytes are split into slices of whole frames
    /// up to this size. A thread inside a long `write` keeps its CPU until the call returns, and
    /// on a kernel without preemption that delays the process callbacks of every JACK client
    /// (docs/MEASUREMENTS.md, "File writes in 64 KiB slices").
    public static let writeSliceBytes = 64 * 1024

    /// The libsndfile format for a file type and layout, or the reason it cannot hold it.
    static func sndfileFormat(fileType: UInt32, layout: LinearPCMLayout) throws(AudioFileError) -> Int32 {
        func refuse(_ message: String) -> AudioFileError {
            AudioFileError(AudioFileError.fileUnsupportedDataFormatCode, "\(fourCharacterCode(fileType)) files cannot hold this format: \(message)")
        }
        let subtype: Int32
        switch (layout.kind, layout.bitsPerChannel) {
        case (.float, 32): subtype = Int32(SF_FORMAT_FLOAT)
        case (.float, _): subtype = Int32(SF_FORMAT_DOUBLE)
        case (.signedInteger, 8): subtype = Int32(SF_FORMAT_PCM_S8)
        case (.signedInteger, 16): subtype = Int32(SF_FORMAT_PCM_16)
        case (.signedInteger, 24): subtype = Int32(SF_FORMAT_PCM_24)
        default: subtype = Int32(SF_FORMAT_PCM_32)
        }
        let endian = layout.isBigEndian ? Int32(SF_ENDIAN_BIG) : Int32(SF_ENDIAN_LITTLE)
        switch fileType {
        case AudioFileTypeValues.aiff:
            guard layout.kind == .signedInteger, layout.isBigEndian else {
                throw refuse("AIFF takes big-endian signed integers (kAudioFormatFlagIsBigEndian | kAudioFormatFlagIsSignedInteger); use AIFC for floats or little-endian")
            }
            // No explicit endianness: with SF_ENDIAN_BIG libsndfile writes AIFC 'in24'/'twos',
            // which sox cannot read; big-endian is AIFF's own order anyway.
            return Int32(SF_FORMAT_AIFF) | subtype
        case AudioFileTypeValues.aifc:
            guard layout.isBigEndian || layout.kind == .signedInteger else {
                throw refuse("AIFC floats are big-endian; set kAudioFormatFlagIsBigEndian")
            }
            // Big-endian integers come out as plain AIFF (libsndfile's choice); floats as AIFC
            // 'fl32'/'fl64'; little-endian integers as AIFC 'sowt'.
            return Int32(SF_FORMAT_AIFF) | subtype | (layout.isBigEndian ? 0 : Int32(SF_ENDIAN_LITTLE))
        case AudioFileTypeValues.wave, AudioFileTypeValues.rf64, AudioFileTypeValues.wave64:
            guard !layout.isBigEndian else {
                throw refuse("the WAVE family is little-endian; clear kAudioFormatFlagIsBigEndian")
            }
            guard layout.bitsPerChannel != 8 else {
                throw refuse("8-bit WAVE samples are unsigned; use 16 bits or more")
            }
            // WAVE is written as RF64 that libsndfile turns back into plain WAVE at close when the
            // data stayed under 4 GB (SFC_RF64_AUTO_DOWNGRADE): RF64 automatically past 4 GB.
            let major = fileType == AudioFileTypeValues.wave64 ? SF_FORMAT_W64 : SF_FORMAT_RF64
            return Int32(major) | subtype
        case AudioFileTypeValues.caf:
            return Int32(SF_FORMAT_CAF) | subtype | endian
        default:
            throw AudioFileError(AudioFileError.fileUnsupportedTypeCode,
                                 "file type \(fourCharacterCode(fileType)) is not one aqjack writes; expected 'AIFF', 'AIFC', 'WAVE', 'RF64', 'W64f' or 'caff'")
        }
    }

    /// Whether this file can carry a BWF 'bext' chunk (WAVE and RF64; libsndfile writes none
    /// into Wave64).
    public var canCarryTimeReference: Bool { [AudioFileTypeValues.wave, AudioFileTypeValues.rf64].contains(fileType) }

    /// What the file says about itself (``RecordingMetadata``), written by
    /// ``setTimeReference(_:originated:)``; nil: the defaults (no project, scene or take).
    public var metadata: RecordingMetadata?
    /// The loudness of what is written, when ``metadata`` asks for it (bext version 2).
    private var loudness: LoudnessMeter?
    private var loudnessScratch: [Float] = []

    /// Records a BWF TimeReference (the JACK frame time of the first sample, in the file's rate)
    /// in a 'bext' chunk, with ``metadata``'s description, originator and reference, the wall
    /// clock `originated` (the first frame's; now when nil) as OriginationDate and -Time, and an
    /// iXML chunk (tracks, project, scene, take). WAVE and RF64 only, before the first packet.
    public func setTimeReference(_ frames: UInt64, originated: Date? = nil) throws(AudioFileError) {
        guard let file else { throw AudioFileError(AudioFileError.fileNotOpenCode, "the file is closed") }
        guard canCarryTimeReference, packetCount == 0 else {
            throw AudioFileError(AudioFileError.fileUnsupportedPropertyCode, "a BWF time reference needs a WAVE or RF64 file with nothing written yet")
        }
        let metadata = self.metadata ?? RecordingMetadata()
        let date = originated ?? Date()
        let (day, time) = RecordingMetadata.originationFields(date)
        let reference = metadata.reference(originated: date)
        let rate = Int(dataFormat.mSampleRate.rounded()), channels = layout.channelCount
        let history = "A=PCM,F=\(rate),W=\(layout.bitsPerChannel),M=\(channels == 1 ? "mono" : channels == 2 ? "stereo" : "multitrack"),T=aqjack\r\n"
        guard csndfile_set_bext(file, RecordingMetadata.clipped(metadata.description, bytes: 256), RecordingMetadata.clipped(metadata.originator, bytes: 32),
                                reference, day, time, frames, metadata.measuresLoudness ? 2 : 1, history) == SF_TRUE else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "libsndfile refused the 'bext' chunk: \(String(cString: sf_strerror(file)))")
        }
        let xml = Array(metadata.iXML(channels: channels, sampleRate: dataFormat.mSampleRate, bitDepth: layout.bitsPerChannel,
                                      timeReference: frames, reference: reference).utf8)
        guard xml.withUnsafeBytes({ csndfile_set_chunk(file, "iXML", $0.baseAddress, UInt32($0.count)) }) == 0 else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "libsndfile refused the 'iXML' chunk: \(String(cString: sf_strerror(file)))")
        }
        if metadata.measuresLoudness { loudness = LoudnessMeter(channels: channels, sampleRate: dataFormat.mSampleRate) }
    }

    /// Writes what the file says about its start where its type has a place for it: WAVE and
    /// RF64 get ``setTimeReference(_:originated:)``'s 'bext' and iXML chunks, CAF an 'info'
    /// chunk (``RecordingMetadata/cafInformation(timeReference:originated:reference:)``); other
    /// types nothing. Before the first packet.
    public func describeStart(frame: UInt64, originated: Date?) throws(AudioFileError) {
        if canCarryTimeReference {
            try setTimeReference(frame, originated: originated)
            return
        }
        guard fileType == AudioFileTypeValues.caf, let file, packetCount == 0 else { return }
        let metadata = self.metadata ?? RecordingMetadata()
        let date = originated ?? Date()
        let reference = metadata.reference(originated: date)
        let chunk = RecordingMetadata.cafInformationChunk(metadata.cafInformation(timeReference: frame, originated: date, reference: reference))
        guard chunk.withUnsafeBytes({ csndfile_set_chunk(file, "info", $0.baseAddress, UInt32($0.count)) }) == 0 else {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "libsndfile refused the CAF 'info' chunk: \(String(cString: sf_strerror(file)))")
        }
    }

    /// Feeds written frames to the loudness meter (decoded to Float, in slices).
    private func measure(_ bytes: UnsafeRawPointer, frames: Int) {
        guard let loudness else { return }
        let channels = layout.channelCount
        let slice = max(1, 8192 / channels)
        if loudnessScratch.count < slice * channels { loudnessScratch = [Float](repeating: 0, count: slice * channels) }
        var done = 0
        loudnessScratch.withUnsafeMutableBufferPointer { scratch in
            while done < frames {
                let count = min(slice, frames - done)
                layout.decode(from: bytes + done * layout.bytesPerFrame, into: scratch.baseAddress!, count: count * channels)
                loudness.add(scratch.baseAddress!, frames: count)
                done += count
            }
        }
    }

    /// Writes `packetCount` packets (frames) from `bytes`, at packet `startPacket` (the end of the
    /// file, or an earlier packet to overwrite).
    ///
    /// - Returns: the packets written (fewer only when the disk is full, which also throws).
    /// - Throws: `kAudioFileInvalidPacketOffsetError` for a start past the end,
    ///   `kAudio_ParamError` when `byteCount` is less than the packets need, and
    ///   `kAudioFileUnspecifiedError` with the system's reason when the write fails (disk full).
    @discardableResult
    public func writePackets(_ bytes: UnsafeRawPointer, byteCount: Int, startPacket: Int64, packetCount count: Int) throws(AudioFileError) -> Int {
        guard let file else { throw AudioFileError(AudioFileError.fileNotOpenCode, "the file is closed") }
        guard startPacket >= 0, startPacket <= packetCount else {
            throw AudioFileError(AudioFileError.fileInvalidPacketOffsetCode, "start packet \(startPacket) is past the end of the file (\(packetCount) packets)")
        }
        let needed = count * layout.bytesPerFrame
        guard count >= 0, byteCount >= needed else {
            throw AudioFileError(AudioFileError.parameterCode, "\(count) packets need \(needed) bytes, got \(byteCount)")
        }
        guard count > 0 else { return 0 }
        if startPacket != packetCount { sf_seek(file, sf_count_t(startPacket), SEEK_SET) }
        errno = 0
        // In slices of at most writeSliceBytes: see its comment (one write per 4.9 MB buffer cost
        // 256-channel recordings 100-150 JACK xruns on this machine's kernel).
        let slice = max(Self.writeSliceBytes / layout.bytesPerFrame, 1) * layout.bytesPerFrame
        var written = 0
        while written < needed {
            let piece = min(slice, needed - written)
            let done = Int(sf_write_raw(file, bytes + written, sf_count_t(piece)))
            written += done
            if done < piece { break }
        }
        let writeError = errno
        if written % layout.bytesPerFrame != 0 {
            // A short write (a full disk) ended inside a frame: the file keeps whole frames only,
            // so no reader finds a torn frame counted in the header's data size.
            var whole = sf_count_t(startPacket) + sf_count_t(written / layout.bytesPerFrame)
            sf_command(file, Int32(SFC_FILE_TRUNCATE), &whole, Int32(MemoryLayout<sf_count_t>.size))
            written -= written % layout.bytesPerFrame
        }
        // Auto-update alone leaves Wave64 headers at zero length after a crash (measured: sox and
        // libsndfile read 0 frames from a SIGKILLed recorder's .w64); an explicit update after
        // each write keeps every type's header true. Cheap for PCM: one small pwrite.
        sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
        let packets = written / layout.bytesPerFrame
        if startPacket == packetCount { measure(bytes, frames: packets) }
        packetCount = max(packetCount, startPacket + Int64(packets))
        writeBehind()
        if startPacket + Int64(packets) != packetCount { sf_seek(file, sf_count_t(packetCount), SEEK_SET) }
        guard written == needed else {
            // libsndfile reports a short write as "No Error."; the system's errno says why.
            let reason = writeError != 0 ? SystemError.describe(writeError) : String(cString: sf_strerror(file))
            throw AudioFileError(AudioFileError.fileUnspecifiedCode,
                                 "writing '\(path)' failed: \(reason); \(packets) of \(count) packets written, the file keeps \(packetCount) frames")
        }
        return packets
    }

    /// Bytes written between two steps of the write-behind: 8 MiB (0.02 s of 2040 float channels,
    /// 5 s of stereo).
    public static let writeBehindBytes: Int64 = 8 << 20
    /// The start of the file the write-behind leaves alone: the header, rewritten after every
    /// write, stays in the page cache (dropping it would turn each rewrite into a read first).
    static let headerBytes = 1 << 16

    /// Streams what was written to the disk as it goes, instead of leaving it to the kernel's
    /// writeback: after a write call that leaves at least ``writeBehindBytes`` new, starts
    /// writing the new bytes back (`sync_file_range`, no wait), waits for the step before
    /// (already under way) and drops it from the page cache (`POSIX_FADV_DONTNEED`). It runs once
    /// per ``writePackets(_:byteCount:startPacket:packetCount:)`` call, so a step is a whole
    /// buffer when buffers are larger (19.6 MB at 1024 float channels and 0.1 s). Left to the
    /// kernel, dirty pages pile up, then writeback and throttling stall the writer for seconds
    /// (docs/MEASUREMENTS.md, "Write-behind").
    private func writeBehind() {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return }
        let size = Int64(status.st_size)
        guard size - writebackStarted >= Self.writeBehindBytes else { return }
        if writebackStarted > writebackDropped {
            _ = csndfile_finish_writeback(descriptor, writebackDropped, writebackStarted - writebackDropped)
            _ = posix_fadvise(descriptor, off_t(writebackDropped), off_t(writebackStarted - writebackDropped), POSIX_FADV_DONTNEED)
            writebackDropped = writebackStarted
        }
        _ = csndfile_start_writeback(descriptor, writebackStarted, size - writebackStarted)
        writebackStarted = size
    }

    /// Bytes of audio data written (`kAudioFilePropertyAudioDataByteCount`).
    public var byteCount: Int64 { packetCount * Int64(layout.bytesPerFrame) }
    /// Seconds of audio written (`kAudioFilePropertyEstimatedDuration`).
    public var duration: Double { Double(packetCount) / dataFormat.mSampleRate }
    /// Whether the file is still open.
    public var isOpen: Bool { file != nil }

    /// Writes the final header and closes the file. Later calls do nothing.
    public func close() throws(AudioFileError) {
        guard let handle = file else { return }
        file = nil
        let code = sf_close(handle)
        if code != 0 {
            throw AudioFileError(AudioFileError.fileUnspecifiedCode, "closing '\(path)' failed: \(String(cString: sf_error_number(code)))")
        }
        if let loudness {
            self.loudness = nil
            try BroadcastWaveLoudness.write(loudness.result, toFileAt: path)
        }
    }
}
