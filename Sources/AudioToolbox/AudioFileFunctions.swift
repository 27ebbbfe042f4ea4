import AQCodecs
import AQMedia
import Foundation

// Audio File Services, Apple spelling, over AQCodecs' ``AudioFile`` (which chooses libsndfile
// for linear PCM and decoded formats, our packet files for AAC and ALAC in MPEG-4).

/// `AudioFileID`s: serial numbers of ``AudioFile``s (AQCodecs, where the container is chosen),
/// never reused, looked up in the one handle table: a call with a closed or unknown file answers
/// `kAudioFileNotOpenError` (seed 004 closes the file while an asynchronously disposed queue may
/// still deliver a buffer).
enum FileHandles {
    private static let table = HandleTable<AudioFile>(.files)

    static func register(_ file: AudioFile) -> AudioFileID { table.register(file) }
    static func find(_ id: AudioFileID) -> AudioFile? { table.find(id) }
    static func remove(_ id: AudioFileID) -> AudioFile? { table.remove(id) }
}

/// Creates a linear-PCM file of type AIFF, AIFC, WAVE, RF64, CAF (or Wave64), or an AAC file
/// of type ADTS, CAF, M4A or MPEG-4 (for AAC, set `kAudioFilePropertyMagicCookieData` before
/// the first packet, as seed 000 does). Without
/// `kAudioFileFlags_EraseFile` an existing file is refused with `kAudioFilePermissionsError` and
/// left as it was; a directory or device too. A URL in a folder that does not exist answers
/// `kAudioFileFileNotFoundError` (-43, `fnfErr`): Apple documents no code for it, and -43 is
/// what `AudioFileOpenURL` answers for a missing file.
@discardableResult
public func AudioFileCreateWithURL(_ inFileRef: CFURL, _ inFileType: AudioFileTypeID,
                                   _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: AudioFileFlags,
                                   _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    status { () throws(AudioFileError) in
        let file = try AudioFile.create(path: inFileRef.fileSystemPath, fileType: inFileType, format: inFormat.pointee,
                                        eraseExisting: inFlags.contains(.eraseFile))
        outAudioFile.pointee = FileHandles.register(file)
    }
}

/// Writes packets: linear PCM frames (descriptions ignored), or AAC packets with their
/// descriptions (required; written in order from packet `packetCount`).
@discardableResult
public func AudioFileWritePackets(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ inNumBytes: UInt32,
                                  _ inPacketDescriptions: UnsafePointer<AudioStreamPacketDescription>?,
                                  _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                  _ inBuffer: UnsafeRawPointer) -> OSStatus {
    guard let box = FileHandles.find(inAudioFile) else {
        ioNumPackets.pointee = 0
        return kAudioFileNotOpenError
    }
    if let packetWriter = box.packetWriter {
        guard let inPacketDescriptions else {
            ioNumPackets.pointee = 0
            return kAudio_ParamError   // variable-size packets need their descriptions
        }
        let count = Int(ioNumPackets.pointee)
        return status { () throws(AudioFileError) in
            do throws(AudioFileError) {
                try packetWriter.writePackets(inBuffer, byteCount: Int(inNumBytes),
                                              descriptions: UnsafeBufferPointer(start: inPacketDescriptions, count: count), startPacket: inStartingPacket)
            } catch {
                ioNumPackets.pointee = 0
                throw error
            }
        }
    }
    guard let writer = box.pcmWriter else {
        ioNumPackets.pointee = 0
        return kAudioFilePermissionsError   // opened for reading
    }
    var written = 0
    let result = status { () throws(AudioFileError) in
        written = try writer.writePackets(inBuffer, byteCount: Int(inNumBytes), startPacket: inStartingPacket,
                                          packetCount: Int(ioNumPackets.pointee))
    }
    ioNumPackets.pointee = UInt32(written)
    return result
}

/// Finalizes the header and closes the file.
@discardableResult
public func AudioFileClose(_ inAudioFile: AudioFileID) -> OSStatus {
    guard let file = FileHandles.remove(inAudioFile) else { return kAudioFileNotOpenError }
    defer { CallbackFiles.forget(inAudioFile) }
    return status { () throws(AudioFileError) in try file.close() }
}

@discardableResult
public func AudioFileGetPropertyInfo(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID,
                                     _ outDataSize: UnsafeMutablePointer<UInt32>?, _ isWritable: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard let file = FileHandles.find(inAudioFile) else { return kAudioFileNotOpenError }
    let size: Int
    switch inPropertyID {
    case kAudioFilePropertyDataFormat: size = MemoryLayout<AudioStreamBasicDescription>.size
    case kAudioFilePropertyFileFormat, kAudioFilePropertyMaximumPacketSize, kAudioFilePropertyPacketSizeUpperBound,
         kAudioFilePropertyIsOptimized: size = 4
    case kAudioFilePropertyAudioDataPacketCount, kAudioFilePropertyAudioDataByteCount, kAudioFilePropertyEstimatedDuration: size = 8
    case kAudioFilePropertyMagicCookieData: size = file.magicCookie.count
    case kAudioFilePropertyFormatList: size = formatListBytes(file.dataFormat, cookie: file.magicCookie).count
    case kAudioFilePropertyPacketTableInfo:
        guard file.packetTable != nil else { return kAudioFileUnsupportedPropertyError }
        size = MemoryLayout<AudioFilePacketTableInfo>.size
    default: return kAudioFileUnsupportedPropertyError
    }
    outDataSize?.pointee = UInt32(size)
    let writable = inPropertyID == kAudioFilePropertyMagicCookieData || inPropertyID == kAudioFilePropertyPacketTableInfo
    isWritable?.pointee = writable && file.isWritable ? 1 : 0
    return noErr
}

/// Reads a property. `MagicCookieData` is the ES_Descriptor of an AAC file (empty for linear
/// PCM); `PacketTableInfo` the priming and remainder frames of a compressed file (CAF 'pakt',
/// MPEG-4 edit/skip data; ADTS has none, so it reports every frame as valid); `FormatList` the
/// formats the file decodes to, richest first (FormatLists.swift).
@discardableResult
public func AudioFileGetProperty(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID,
                                 _ ioDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    guard let file = FileHandles.find(inAudioFile) else { return kAudioFileNotOpenError }
    func put<T>(_ value: T) -> OSStatus { storeProperty(value, into: outPropertyData, size: ioDataSize, tooSmall: kAudioFileBadPropertySizeError) }
    switch inPropertyID {
    case kAudioFilePropertyDataFormat: return put(file.dataFormat)
    case kAudioFilePropertyFileFormat: return put(file.fileType)
    case kAudioFilePropertyIsOptimized: return put(UInt32(1))   // headers are always complete here
    case kAudioFilePropertyAudioDataPacketCount: return put(UInt64(file.packetCount))
    case kAudioFilePropertyAudioDataByteCount: return put(UInt64(file.byteCount))
    case kAudioFilePropertyMaximumPacketSize: return put(UInt32(file.maximumPacketSize))
    case kAudioFilePropertyPacketSizeUpperBound: return put(UInt32(file.packetSizeUpperBound))
    case kAudioFilePropertyEstimatedDuration: return put(file.duration)
    case kAudioFilePropertyPacketTableInfo:
        guard let table = file.packetTable else { return kAudioFileUnsupportedPropertyError }
        return put(AudioFilePacketTableInfo(mNumberValidFrames: table.validFrameCount, mPrimingFrames: table.primingFrames,
                                            mRemainderFrames: table.remainderFrames))
    case kAudioFilePropertyMagicCookieData:
        return storePropertyBytes(file.magicCookie, into: outPropertyData, size: ioDataSize, mustFit: true, tooSmall: kAudioFileBadPropertySizeError)
    case kAudioFilePropertyFormatList:
        return storePropertyBytes(formatListBytes(file.dataFormat, cookie: file.magicCookie), into: outPropertyData, size: ioDataSize,
                                  mustFit: false, tooSmall: kAudioFileBadPropertySizeError)
    default: return kAudioFileUnsupportedPropertyError
    }
}

/// Sets `MagicCookieData` (AAC: an ES_Descriptor; linear PCM has none, so a cookie is accepted
/// and ignored, as Apple's listings copy the queue's cookie whatever the format) or
/// `PacketTableInfo` (AAC files being written: priming and remainder frames).
@discardableResult
public func AudioFileSetProperty(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID, _ inDataSize: UInt32,
                                 _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    guard let file = FileHandles.find(inAudioFile) else { return kAudioFileNotOpenError }
    switch inPropertyID {
    case kAudioFilePropertyMagicCookieData:
        guard let packetWriter = file.packetWriter else { return file.isWritable ? noErr : kAudioFilePermissionsError }
        let cookie = Array(UnsafeRawBufferPointer(start: inPropertyData, count: Int(inDataSize)))
        return status { () throws(AudioFileError) in try packetWriter.setMagicCookie(cookie) }
    case kAudioFilePropertyPacketTableInfo:
        guard let packetWriter = file.packetWriter else { return file.isWritable ? kAudioFileUnsupportedPropertyError : kAudioFilePermissionsError }
        guard Int(inDataSize) >= MemoryLayout<AudioFilePacketTableInfo>.size else { return kAudioFileBadPropertySizeError }
        let info = inPropertyData.loadUnaligned(as: AudioFilePacketTableInfo.self)
        packetWriter.packetTable = PacketTable(validFrameCount: info.mNumberValidFrames, primingFrames: info.mPrimingFrames,
                                               remainderFrames: info.mRemainderFrames)
        return noErr
    default: return kAudioFileUnsupportedPropertyError
    }
}

// MARK: Reading

/// `AudioFilePermissions`.
public enum AudioFilePermissions: Int8, Sendable {
    case readPermission = 1, writePermission = 2, readWritePermission = 3
}
public let kAudioFileReadPermission = AudioFilePermissions.readPermission
public let kAudioFileWritePermission = AudioFilePermissions.writePermission
public let kAudioFileReadWritePermission = AudioFilePermissions.readWritePermission

/// Opens a file for reading (writing to existing files is not supported: answers
/// `kAudioFilePermissionsError`). The type hint is accepted; the contents decide.
@discardableResult
public func AudioFileOpenURL(_ inFileRef: CFURL, _ inPermissions: AudioFilePermissions, _ inFileTypeHint: AudioFileTypeID,
                             _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    guard inPermissions == .readPermission else { return kAudioFilePermissionsError }
    return status { () throws(AudioFileError) in
        outAudioFile.pointee = FileHandles.register(try AudioFile.open(path: inFileRef.fileSystemPath, typeHint: inFileTypeHint))
    }
}

/// Reads packets into a buffer of `ioNumBytes` bytes, reading fewer packets than asked when they
/// would not fit (Apple's behaviour); on return `ioNumBytes` and `ioNumPackets` say what was
/// read, 0 packets at the end of the file.
@discardableResult
public func AudioFileReadPacketData(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ ioNumBytes: UnsafeMutablePointer<UInt32>,
                                    _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                                    _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                    _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let box = FileHandles.find(inAudioFile) else { return kAudioFileNotOpenError }
    guard let outBuffer else { return kAudio_ParamError }
    if let packetReader = box.packetReader {
        // Variable-size packets: fewer when they would not fit; descriptions are required.
        guard let outPacketDescriptions else { return kAudio_ParamError }
        var read = (packets: 0, bytes: 0)
        let result = status { () throws(AudioFileError) in
            read = try packetReader.readPackets(startPacket: inStartingPacket, packetCount: Int(ioNumPackets.pointee), into: outBuffer,
                                                capacity: Int(ioNumBytes.pointee), descriptions: outPacketDescriptions)
        }
        ioNumPackets.pointee = UInt32(clamping: read.packets)
        ioNumBytes.pointee = UInt32(clamping: read.bytes)
        return result
    }
    guard let reader = box.pcmReader else { return kAudioFilePermissionsError }
    var packets = 0
    let result = status { () throws(AudioFileError) in
        packets = try reader.readPackets(startPacket: inStartingPacket, packetCount: Int(ioNumPackets.pointee),
                                         into: outBuffer, byteCapacity: Int(ioNumBytes.pointee))
    }
    ioNumPackets.pointee = UInt32(packets)
    ioNumBytes.pointee = UInt32(clamping: packets * reader.layout.bytesPerFrame)
    // Constant-bit-rate data has no packet descriptions (outPacketDescriptions is left alone).
    return result
}

/// The older form: reads `ioNumPackets` packets into a buffer assumed to hold them all at the
/// format's largest packet size (seed 001 sizes its buffers with PacketSizeUpperBound).
@discardableResult
public func AudioFileReadPackets(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ outNumBytes: UnsafeMutablePointer<UInt32>,
                                 _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                                 _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                 _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let box = FileHandles.find(inAudioFile) else { return kAudioFileNotOpenError }
    // The deprecated call trusts the buffer to hold ioNumPackets packets of the largest size;
    // the product saturates rather than overflowing (0x7fffffff packets trapped: issue 9, item 8).
    let (bytes, overflow) = ioNumPackets.pointee.multipliedReportingOverflow(by: UInt32(clamping: box.packetSizeUpperBound))
    outNumBytes.pointee = overflow ? .max : bytes
    return AudioFileReadPacketData(inAudioFile, inUseCache, outNumBytes, outPacketDescriptions, inStartingPacket, ioNumPackets, outBuffer)
}

/// Apple's files may need their chunks moved before more data fits; aqjack's writers keep
/// their headers complete as they go, so a file is always optimized: nothing to do.
@discardableResult
public func AudioFileOptimize(_ inAudioFile: AudioFileID) -> OSStatus {
    FileHandles.find(inAudioFile) == nil ? kAudioFileNotOpenError : noErr
}

// MARK: Bytes

/// Reads `ioNumBytes` bytes of audio data from byte `inStartingByte` of a linear-PCM file (any
/// byte range, frames cut where the range cuts them); fewer at the end, and then
/// `kAudioFileEndOfFileError` when none are left. Packet files (AAC, ALAC) answer
/// `kAudioFileOperationNotSupportedError`: read their packets with `AudioFileReadPacketData`.
@discardableResult
public func AudioFileReadBytes(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ inStartingByte: Int64,
                               _ ioNumBytes: UnsafeMutablePointer<UInt32>, _ outBuffer: UnsafeMutableRawPointer) -> OSStatus {
    guard let file = FileHandles.find(inAudioFile) else { return kAudioFileNotOpenError }
    guard let reader = file.pcmReader, !reader.isDecoded else {
        ioNumBytes.pointee = 0
        return file.isWritable ? kAudioFilePermissionsError : kAudioFileOperationNotSupportedError
    }
    guard inStartingByte >= 0 else {
        ioNumBytes.pointee = 0
        return kAudioFilePositionError
    }
    let frameBytes = Int64(reader.layout.bytesPerFrame)
    let total = reader.packetCount * frameBytes
    let wanted = min(Int64(ioNumBytes.pointee), max(0, total - inStartingByte))
    guard wanted > 0 else {
        ioNumBytes.pointee = 0
        return kAudioFileEndOfFileError
    }
    // The whole frames that cover the range, then the range out of them.
    let firstFrame = inStartingByte / frameBytes
    let lastFrame = (inStartingByte + wanted - 1) / frameBytes
    var frames = [UInt8](repeating: 0, count: Int((lastFrame - firstFrame + 1) * frameBytes))
    var read = 0
    let result = status { () throws(AudioFileError) in
        read = try frames.withUnsafeMutableBufferPointer { (raw) throws(AudioFileError) in
            try reader.readPackets(startPacket: firstFrame, packetCount: Int(lastFrame - firstFrame + 1), into: raw.baseAddress!, byteCapacity: raw.count)
        }
    }
    guard result == noErr else {
        ioNumBytes.pointee = 0
        return result
    }
    let offset = Int(inStartingByte - firstFrame * frameBytes)
    let count = max(0, min(Int(wanted), read * Int(frameBytes) - offset))
    frames.withUnsafeBytes { outBuffer.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
    ioNumBytes.pointee = UInt32(count)
    return noErr
}

/// Writes `ioNumBytes` bytes of audio data at byte `inStartingByte` of a linear-PCM file being
/// written: whole frames, appended at the end (`inStartingByte` = the data's size so far).
/// Another position answers `kAudioFilePositionError`, a partial frame `kAudio_ParamError`.
@discardableResult
public func AudioFileWriteBytes(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ inStartingByte: Int64,
                                _ ioNumBytes: UnsafeMutablePointer<UInt32>, _ inBuffer: UnsafeRawPointer) -> OSStatus {
    guard let file = FileHandles.find(inAudioFile) else { return kAudioFileNotOpenError }
    guard let writer = file.pcmWriter else {
        ioNumBytes.pointee = 0
        return file.isWritable ? kAudioFileOperationNotSupportedError : kAudioFilePermissionsError
    }
    let frameBytes = writer.layout.bytesPerFrame
    let bytes = Int(ioNumBytes.pointee)
    guard bytes % frameBytes == 0 else {
        ioNumBytes.pointee = 0
        return kAudio_ParamError
    }
    guard inStartingByte == writer.packetCount * Int64(frameBytes) else {
        ioNumBytes.pointee = 0
        return kAudioFilePositionError
    }
    var written = 0
    let result = status { () throws(AudioFileError) in
        written = try writer.writePackets(inBuffer, byteCount: bytes, startPacket: writer.packetCount, packetCount: bytes / frameBytes)
    }
    ioNumBytes.pointee = UInt32(written * frameBytes)
    return result
}
