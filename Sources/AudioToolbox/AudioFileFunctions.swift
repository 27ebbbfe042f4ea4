import AQMedia
import Foundation

// Audio File Services, Apple spelling, over ``AudioFileWriter`` (writing side; reading arrives
// with the playback work).

/// What an `AudioFileID` stands for. IDs are serial numbers, never reused, looked up in a table:
/// a call with a closed or unknown file answers `kAudioFileNotOpenError` (seed 004 closes the
/// file while an asynchronously disposed queue may still deliver a buffer).
final class FileBox {
    let writer: AudioFileWriter?
    let reader: AudioFileReader?
    init(writer: AudioFileWriter) {
        self.writer = writer
        reader = nil
    }
    init(reader: AudioFileReader) {
        self.reader = reader
        writer = nil
    }

    var dataFormat: AudioStreamBasicDescription { writer?.dataFormat ?? reader!.dataFormat }
    var fileType: UInt32 { writer?.fileType ?? reader!.fileType }
    var packetCount: Int64 { writer?.packetCount ?? reader!.packetCount }
    var byteCount: Int64 { writer?.byteCount ?? reader!.byteCount }
    var bytesPerPacket: Int { writer?.layout.bytesPerFrame ?? reader!.layout.bytesPerFrame }
    var duration: Double { writer?.duration ?? reader!.duration }

    private static let tableLock = NSLock()
    nonisolated(unsafe) private static var table: [Int: FileBox] = [:]
    nonisolated(unsafe) private static var nextSerial = 0x2000

    func register() -> AudioFileID {
        Self.tableLock.withLock {
            Self.nextSerial += 16
            Self.table[Self.nextSerial] = self
            return OpaquePointer(bitPattern: Self.nextSerial)!
        }
    }

    static func from(_ id: AudioFileID) -> FileBox? {
        tableLock.withLock { table[Int(bitPattern: UnsafeRawPointer(id))] }
    }

    static func remove(_ id: AudioFileID) -> FileBox? {
        tableLock.withLock { table.removeValue(forKey: Int(bitPattern: UnsafeRawPointer(id))) }
    }
}

/// Creates a linear-PCM file of type AIFF, AIFC, WAVE, RF64, CAF (or Wave64). Without
/// `kAudioFileFlags_EraseFile` an existing file is refused with `kAudioFilePermissionsError` and
/// left as it was.
public func AudioFileCreateWithURL(_ inFileRef: CFURL, _ inFileType: AudioFileTypeID,
                                   _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: AudioFileFlags,
                                   _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    status { () throws(AudioStatusError) in
        let writer = try AudioFileWriter(path: inFileRef.path, fileType: inFileType, format: inFormat.pointee,
                                         eraseExisting: inFlags.contains(.eraseFile))
        outAudioFile.pointee = FileBox(writer: writer).register()
    }
}

/// Writes packets (linear PCM: frames; packet descriptions are ignored for constant bit rates).
public func AudioFileWritePackets(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ inNumBytes: UInt32,
                                  _ inPacketDescriptions: UnsafePointer<AudioStreamPacketDescription>?,
                                  _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                  _ inBuffer: UnsafeRawPointer) -> OSStatus {
    guard let box = FileBox.from(inAudioFile) else {
        ioNumPackets.pointee = 0
        return kAudioFileNotOpenError
    }
    guard let writer = box.writer else {
        ioNumPackets.pointee = 0
        return kAudioFilePermissionsError   // opened for reading
    }
    var written = 0
    let result = status { () throws(AudioStatusError) in
        written = try writer.writePackets(inBuffer, byteCount: Int(inNumBytes), startPacket: inStartingPacket,
                                          packetCount: Int(ioNumPackets.pointee))
    }
    ioNumPackets.pointee = UInt32(written)
    return result
}

/// Finalizes the header and closes the file.
public func AudioFileClose(_ inAudioFile: AudioFileID) -> OSStatus {
    guard let box = FileBox.remove(inAudioFile) else { return kAudioFileNotOpenError }
    box.reader?.close()
    return status { () throws(AudioStatusError) in try box.writer?.close() }
}

public func AudioFileGetPropertyInfo(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID,
                                     _ outDataSize: UnsafeMutablePointer<UInt32>?, _ isWritable: UnsafeMutablePointer<UInt32>?) -> OSStatus {
    guard FileBox.from(inAudioFile) != nil else { return kAudioFileNotOpenError }
    let size: Int
    switch inPropertyID {
    case kAudioFilePropertyDataFormat: size = MemoryLayout<AudioStreamBasicDescription>.size
    case kAudioFilePropertyFileFormat, kAudioFilePropertyMaximumPacketSize, kAudioFilePropertyPacketSizeUpperBound: size = 4
    case kAudioFilePropertyAudioDataPacketCount, kAudioFilePropertyAudioDataByteCount, kAudioFilePropertyEstimatedDuration: size = 8
    case kAudioFilePropertyMagicCookieData: size = 0
    default: return kAudioFileUnsupportedPropertyError
    }
    outDataSize?.pointee = UInt32(size)
    isWritable?.pointee = inPropertyID == kAudioFilePropertyMagicCookieData ? 1 : 0
    return noErr
}

public func AudioFileGetProperty(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID,
                                 _ ioDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    guard let file = FileBox.from(inAudioFile) else { return kAudioFileNotOpenError }
    func put<T>(_ value: T) -> OSStatus { storeProperty(value, into: outPropertyData, size: ioDataSize, tooSmall: kAudioFileBadPropertySizeError) }
    switch inPropertyID {
    case kAudioFilePropertyDataFormat: return put(file.dataFormat)
    case kAudioFilePropertyFileFormat: return put(file.fileType)
    case kAudioFilePropertyAudioDataPacketCount: return put(UInt64(file.packetCount))
    case kAudioFilePropertyAudioDataByteCount: return put(UInt64(file.byteCount))
    case kAudioFilePropertyMaximumPacketSize, kAudioFilePropertyPacketSizeUpperBound: return put(UInt32(file.bytesPerPacket))
    case kAudioFilePropertyEstimatedDuration: return put(file.duration)
    case kAudioFilePropertyMagicCookieData:
        ioDataSize.pointee = 0
        return noErr
    default: return kAudioFileUnsupportedPropertyError
    }
}

/// Linear PCM has no magic cookie: setting one is accepted and ignored (Apple's listings copy the
/// queue's cookie to the file whatever the format).
public func AudioFileSetProperty(_ inAudioFile: AudioFileID, _ inPropertyID: AudioFilePropertyID, _ inDataSize: UInt32,
                                 _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    guard FileBox.from(inAudioFile) != nil else { return kAudioFileNotOpenError }
    return inPropertyID == kAudioFilePropertyMagicCookieData ? noErr : kAudioFileUnsupportedPropertyError
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
public func AudioFileOpenURL(_ inFileRef: CFURL, _ inPermissions: AudioFilePermissions, _ inFileTypeHint: AudioFileTypeID,
                             _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    guard inPermissions == .readPermission else { return kAudioFilePermissionsError }
    return status { () throws(AudioStatusError) in
        let reader = try AudioFileReader(path: inFileRef.path, typeHint: inFileTypeHint)
        outAudioFile.pointee = FileBox(reader: reader).register()
    }
}

/// Reads packets into a buffer of `ioNumBytes` bytes, reading fewer packets than asked when they
/// would not fit (Apple's behaviour); on return `ioNumBytes` and `ioNumPackets` say what was
/// read, 0 packets at the end of the file.
public func AudioFileReadPacketData(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ ioNumBytes: UnsafeMutablePointer<UInt32>,
                                    _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                                    _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                    _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let box = FileBox.from(inAudioFile) else { return kAudioFileNotOpenError }
    guard let reader = box.reader else { return kAudioFilePermissionsError }
    guard let outBuffer else { return kAudio_ParamError }
    var packets = 0
    let result = status { () throws(AudioStatusError) in
        packets = try reader.readPackets(startPacket: inStartingPacket, packetCount: Int(ioNumPackets.pointee),
                                         into: outBuffer, byteCapacity: Int(ioNumBytes.pointee))
    }
    ioNumPackets.pointee = UInt32(packets)
    ioNumBytes.pointee = UInt32(packets * reader.layout.bytesPerFrame)
    // Constant-bit-rate data has no packet descriptions (outPacketDescriptions is left alone).
    return result
}

/// The older form: reads `ioNumPackets` packets (the buffer must hold them all).
public func AudioFileReadPackets(_ inAudioFile: AudioFileID, _ inUseCache: Bool, _ outNumBytes: UnsafeMutablePointer<UInt32>,
                                 _ outPacketDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?,
                                 _ inStartingPacket: Int64, _ ioNumPackets: UnsafeMutablePointer<UInt32>,
                                 _ outBuffer: UnsafeMutableRawPointer?) -> OSStatus {
    guard let reader = FileBox.from(inAudioFile)?.reader else { return kAudioFileNotOpenError }
    outNumBytes.pointee = ioNumPackets.pointee * UInt32(reader.layout.bytesPerFrame)
    return AudioFileReadPacketData(inAudioFile, inUseCache, outNumBytes, outPacketDescriptions, inStartingPacket, ioNumPackets, outBuffer)
}
