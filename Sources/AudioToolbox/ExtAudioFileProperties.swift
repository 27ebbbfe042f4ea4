import AQCodecs
import AQMedia

// ExtAudioFile properties, Apple spelling. Supported: FileDataFormat, ClientDataFormat (set),
// FileChannelLayout, ClientChannelLayout (set: the channel count must match; no remapping),
// CodecManufacturer (set: accepted, one maker here), AudioConverter (NULL: the converter is
// internal), AudioFile (files opened for reading or wrapped), FileMaxPacketSize,
// ClientMaxPacketSize, FileLengthFrames, PacketTable (reading), ConverterConfig and
// IOBufferSizeBytes (set: accepted, nothing to configure). Others answer
// kExtAudioFileError_InvalidProperty.

/// The size of a property and whether it can be set.
@discardableResult
public func ExtAudioFileGetPropertyInfo(_ inExtAudioFile: ExtAudioFileRef, _ inPropertyID: ExtAudioFilePropertyID,
                                        _ outSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    guard let object = ExtAudioFileObject.table.find(inExtAudioFile) else { return kAudio_ParamError }
    let size: Int
    var writable = false
    switch inPropertyID {
    case kExtAudioFileProperty_FileDataFormat: size = MemoryLayout<AudioStreamBasicDescription>.size
    case kExtAudioFileProperty_ClientDataFormat:
        size = MemoryLayout<AudioStreamBasicDescription>.size
        writable = true
    case kExtAudioFileProperty_FileChannelLayout: size = MemoryLayout<AudioChannelLayout>.size
    case kExtAudioFileProperty_ClientChannelLayout:
        size = MemoryLayout<AudioChannelLayout>.size
        writable = true
    case kExtAudioFileProperty_CodecManufacturer, kExtAudioFileProperty_IOBufferSizeBytes:
        size = 4
        writable = true
    case kExtAudioFileProperty_FileMaxPacketSize, kExtAudioFileProperty_ClientMaxPacketSize: size = 4
    case kExtAudioFileProperty_AudioConverter, kExtAudioFileProperty_AudioFile: size = MemoryLayout<OpaquePointer?>.size
    case kExtAudioFileProperty_ConverterConfig:
        size = MemoryLayout<OpaquePointer?>.size
        writable = true
    case kExtAudioFileProperty_FileLengthFrames: size = 8
    case kExtAudioFileProperty_PacketTable:
        guard object.audioFile?.packetTable != nil else { return kExtAudioFileError_InvalidProperty }
        size = MemoryLayout<AudioFilePacketTableInfo>.size
    default: return kExtAudioFileError_InvalidProperty
    }
    outSize?.pointee = UInt32(size)
    outWritable?.pointee = DarwinBoolean(writable)
    return noErr
}

/// Reads a property into `outPropertyData` (`ioPropertyDataSize` in: room; out: the size).
@discardableResult
public func ExtAudioFileGetProperty(_ inExtAudioFile: ExtAudioFileRef, _ inPropertyID: ExtAudioFilePropertyID,
                                    _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    guard let object = ExtAudioFileObject.table.find(inExtAudioFile) else { return kAudio_ParamError }
    func put<T>(_ value: T) -> OSStatus {
        storeProperty(value, into: outPropertyData, size: ioPropertyDataSize, tooSmall: kExtAudioFileError_InvalidPropertySize)
    }
    let fileFormat = object.fileFormat
    switch inPropertyID {
    case kExtAudioFileProperty_FileDataFormat: return put(fileFormat)
    case kExtAudioFileProperty_ClientDataFormat: return put(object.client?.format ?? fileFormat)
    case kExtAudioFileProperty_FileChannelLayout: return put(defaultChannelLayout(Int(fileFormat.mChannelsPerFrame)))
    case kExtAudioFileProperty_ClientChannelLayout:
        return put(defaultChannelLayout(object.client?.channelCount ?? Int(fileFormat.mChannelsPerFrame)))
    case kExtAudioFileProperty_CodecManufacturer: return put(kAppleSoftwareAudioCodecManufacturer)
    case kExtAudioFileProperty_IOBufferSizeBytes: return put(UInt32(32768))
    case kExtAudioFileProperty_AudioConverter: return put(OpaquePointer?.none)
    case kExtAudioFileProperty_AudioFile: return put(object.audioFileID)
    case kExtAudioFileProperty_FileMaxPacketSize:
        let size = object.audioFile.map { $0.maximumPacketSize } ?? Int(fileFormat.mBytesPerPacket)
        return size > 0 ? put(UInt32(size)) : kExtAudioFileError_MaxPacketSizeUnknown
    case kExtAudioFileProperty_ClientMaxPacketSize:
        guard let client = object.client else { return kExtAudioFileError_NonPCMClientFormat }
        return put(UInt32(client.sample.bytesPerFrame * (client.isInterleaved ? 1 : client.channelCount)))
    case kExtAudioFileProperty_FileLengthFrames: return put(object.lengthFrames)
    case kExtAudioFileProperty_PacketTable:
        guard let table = object.audioFile?.packetTable else { return kExtAudioFileError_InvalidProperty }
        return put(AudioFilePacketTableInfo(mNumberValidFrames: table.validFrameCount, mPrimingFrames: table.primingFrames,
                                            mRemainderFrames: table.remainderFrames))
    default: return kExtAudioFileError_InvalidProperty
    }
}

/// Sets a property: `ClientDataFormat` chooses the format of reads and writes (linear PCM, any
/// rate and channel count; set it before the first write).
@discardableResult
public func ExtAudioFileSetProperty(_ inExtAudioFile: ExtAudioFileRef, _ inPropertyID: ExtAudioFilePropertyID,
                                    _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer?) -> OSStatus {
    guard let object = ExtAudioFileObject.table.find(inExtAudioFile) else { return kAudio_ParamError }
    func value<T>(_ type: T.Type) -> T? {
        guard let inPropertyData, Int(inPropertyDataSize) >= MemoryLayout<T>.size else { return nil }
        return inPropertyData.loadUnaligned(as: T.self)
    }
    switch inPropertyID {
    case kExtAudioFileProperty_ClientDataFormat:
        guard let format = value(AudioStreamBasicDescription.self) else { return kExtAudioFileError_InvalidPropertySize }
        return status { () throws(AudioFileError) in try object.setClientFormat(format) }
    case kExtAudioFileProperty_ClientChannelLayout:
        // AudioChannelLayout's fixed part: tag, bitmap, count (12 bytes) at least.
        guard let inPropertyData, inPropertyDataSize >= 12 else { return kExtAudioFileError_InvalidPropertySize }
        var layout = AudioChannelLayout()
        layout.mChannelLayoutTag = inPropertyData.loadUnaligned(as: UInt32.self)
        layout.mNumberChannelDescriptions = inPropertyData.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        let expected = object.client?.channelCount ?? Int(object.fileFormat.mChannelsPerFrame)
        if let count = channelCount(of: layout), count != expected { return kExtAudioFileError_InvalidChannelMap }
        return noErr
    case kExtAudioFileProperty_CodecManufacturer, kExtAudioFileProperty_IOBufferSizeBytes:
        return value(UInt32.self) == nil ? kExtAudioFileError_InvalidPropertySize : noErr
    case kExtAudioFileProperty_ConverterConfig:
        return noErr
    default: return kExtAudioFileError_InvalidProperty
    }
}
