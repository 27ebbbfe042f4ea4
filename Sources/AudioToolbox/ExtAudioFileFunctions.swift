import AQCodecs
import AQMedia
import Foundation

// Extended Audio File Services, Apple spelling (ExtendedAudioFile.h), over AQCodecs'
// ClientFrameReader/ClientFrameWriter: any file AudioFile reads, read in a linear-PCM client
// format at any rate and channel count; files written from a client format, encoded to AAC,
// ALAC or FLAC when the file format says so. Reading converts exactly as `aqjack convert` does
// (the same resampler, chunking and sample encoding), so the two agree sample for sample.

/// `ExtAudioFileRef`: a serial number looked up in a handle table (never a pointer to freed memory).
public typealias ExtAudioFileRef = OpaquePointer
public typealias ExtAudioFilePropertyID = UInt32

// Property IDs (ExtendedAudioFile.h).
public let kExtAudioFileProperty_FileDataFormat: ExtAudioFilePropertyID = 0x6666_6D74       // 'ffmt'
public let kExtAudioFileProperty_FileChannelLayout: ExtAudioFilePropertyID = 0x6663_6C6F    // 'fclo'
public let kExtAudioFileProperty_ClientDataFormat: ExtAudioFilePropertyID = 0x6366_6D74     // 'cfmt'
public let kExtAudioFileProperty_ClientChannelLayout: ExtAudioFilePropertyID = 0x6363_6C6F  // 'cclo'
public let kExtAudioFileProperty_CodecManufacturer: ExtAudioFilePropertyID = 0x636D_616E    // 'cman'
public let kExtAudioFileProperty_AudioConverter: ExtAudioFilePropertyID = 0x6163_6E76       // 'acnv'
public let kExtAudioFileProperty_AudioFile: ExtAudioFilePropertyID = 0x6166_696C            // 'afil'
public let kExtAudioFileProperty_FileMaxPacketSize: ExtAudioFilePropertyID = 0x666D_7073    // 'fmps'
public let kExtAudioFileProperty_ClientMaxPacketSize: ExtAudioFilePropertyID = 0x636D_7073  // 'cmps'
public let kExtAudioFileProperty_FileLengthFrames: ExtAudioFilePropertyID = 0x2366_726D     // '#frm'
public let kExtAudioFileProperty_ConverterConfig: ExtAudioFilePropertyID = 0x6163_6366      // 'accf'
public let kExtAudioFileProperty_IOBufferSizeBytes: ExtAudioFilePropertyID = 0x696F_6273    // 'iobs'
public let kExtAudioFileProperty_IOBuffer: ExtAudioFilePropertyID = 0x696F_6266             // 'iobf'
public let kExtAudioFileProperty_PacketTable: ExtAudioFilePropertyID = 0x7870_7469          // 'xpti'

// Result codes (ExtendedAudioFile.h).
public let kExtAudioFileError_InvalidProperty: OSStatus = -66561
public let kExtAudioFileError_InvalidPropertySize: OSStatus = -66562
public let kExtAudioFileError_NonPCMClientFormat: OSStatus = -66563
public let kExtAudioFileError_InvalidChannelMap: OSStatus = -66564
public let kExtAudioFileError_InvalidOperationOrder: OSStatus = -66565
public let kExtAudioFileError_InvalidDataFormat: OSStatus = -66566
public let kExtAudioFileError_MaxPacketSizeUnknown: OSStatus = -66567
public let kExtAudioFileError_InvalidSeek: OSStatus = -66568
public let kExtAudioFileError_AsyncWriteTooLarge: OSStatus = -66569
public let kExtAudioFileError_AsyncWriteBufferOverflow: OSStatus = -66570

// Channel layout tags (CoreAudioBaseTypes.h) for the layout properties.
public let kAudioChannelLayoutTag_UseChannelDescriptions: UInt32 = 0
public let kAudioChannelLayoutTag_UseChannelBitmap: UInt32 = 1 << 16
public let kAudioChannelLayoutTag_Mono: UInt32 = (100 << 16) | 1
public let kAudioChannelLayoutTag_Stereo: UInt32 = (101 << 16) | 2
public let kAudioChannelLayoutTag_DiscreteInOrder: UInt32 = 147 << 16

/// Opens a file for reading: linear PCM (the client format starts as the file's), or any
/// encoded format aqjack reads (AAC, ALAC, FLAC, Ogg, MP3), which needs a client format before
/// `ExtAudioFileRead` (else `kExtAudioFileError_NonPCMClientFormat`).
@discardableResult
public func ExtAudioFileOpenURL(_ inURL: CFURL, _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>) -> OSStatus {
    status { () throws(AudioFileError) in
        let file = try AudioFile.open(path: inURL.fileSystemPath)
        let id = FileHandles.register(file)
        do throws(AudioFileError) {
            let object = try ExtAudioFileObject(reading: file, id: id, owned: true, path: inURL.fileSystemPath)
            outExtAudioFile.pointee = ExtAudioFileObject.table.register(object)
        } catch {
            _ = FileHandles.remove(id)
            try? file.close()
            throw error
        }
    }
}

/// Creates a file of `inFileType` holding `inStreamDesc`: linear PCM as described, or AAC
/// ('aac '), Apple Lossless ('alac') or FLAC ('flac') at the description's channel count and
/// rate (a rate of 0 takes the client format's, as Apple allows for encoded formats). Without
/// `kAudioFileFlags_EraseFile` an existing file is refused with `kAudioFilePermissionsError`.
/// The channel layout, when given, must have the format's channel count.
@discardableResult
public func ExtAudioFileCreateWithURL(_ inURL: CFURL, _ inFileType: AudioFileTypeID,
                                      _ inStreamDesc: UnsafePointer<AudioStreamBasicDescription>,
                                      _ inChannelLayout: UnsafePointer<AudioChannelLayout>?, _ inFlags: UInt32,
                                      _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>) -> OSStatus {
    let format = inStreamDesc.pointee
    if let inChannelLayout, let count = channelCount(of: inChannelLayout.pointee), count != Int(format.mChannelsPerFrame) {
        return kExtAudioFileError_InvalidChannelMap
    }
    let path = inURL.fileSystemPath
    let erase = inFlags & AudioFileFlags.eraseFile.rawValue != 0
    return status { () throws(AudioFileError) in
        if format.mSampleRate == 0 { try OutputPath.checkCreatable(path, eraseExisting: erase) }
        let object = try ExtAudioFileObject(writing: format, path: path) { (rate) throws(AudioFileError) in
            var described = format
            described.mSampleRate = rate
            return try FrameSink.create(path: path, fileType: inFileType, format: described, eraseExisting: erase)
        }
        outExtAudioFile.pointee = ExtAudioFileObject.table.register(object)
    }
}

/// Wraps an open `AudioFileID`: one opened for reading is read from its first frame; one
/// created for writing linear PCM is written from its current end. Disposing the
/// `ExtAudioFileRef` leaves the `AudioFileID` open (Apple: the caller closes it). A created AAC
/// file answers `kExtAudioFileError_InvalidDataFormat`: create it with `ExtAudioFileCreateWithURL`.
@discardableResult
public func ExtAudioFileWrapAudioFileID(_ inFileID: AudioFileID, _ inForWriting: Bool,
                                        _ outExtAudioFile: UnsafeMutablePointer<ExtAudioFileRef?>) -> OSStatus {
    guard let file = FileHandles.find(inFileID) else { return kAudioFileNotOpenError }
    return status { () throws(AudioFileError) in
        let object: ExtAudioFileObject
        if inForWriting {
            guard let writer = file.pcmWriter else {
                throw AudioFileError(file.isWritable ? kExtAudioFileError_InvalidDataFormat : kAudioFilePermissionsError,
                                     "wrapping for writing takes a linear-PCM file created for writing")
            }
            object = try ExtAudioFileObject(wrapping: writer, id: inFileID, path: writer.path)
        } else {
            object = try ExtAudioFileObject(reading: file, id: inFileID, owned: false, path: "AudioFileID")
        }
        outExtAudioFile.pointee = ExtAudioFileObject.table.register(object)
    }
}

/// Closes the file (writing: flushes the converter and encoder, records the packet table and
/// finalizes the header, after every `ExtAudioFileWriteAsync` has been written).
@discardableResult
public func ExtAudioFileDispose(_ inExtAudioFile: ExtAudioFileRef) -> OSStatus {
    guard let object = ExtAudioFileObject.table.remove(inExtAudioFile) else { return kAudio_ParamError }
    return status { () throws(AudioFileError) in try object.dispose() }
}

/// Reads up to `ioNumberFrames` frames in the client format into `ioData` (one interleaved
/// buffer, or one buffer per channel for a non-interleaved client format); fewer when the
/// buffers are smaller, 0 at the end of the file. Each buffer's `mDataByteSize` is set to what
/// was read.
@discardableResult
public func ExtAudioFileRead(_ inExtAudioFile: ExtAudioFileRef, _ ioNumberFrames: UnsafeMutablePointer<UInt32>,
                             _ ioData: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
    guard let object = ExtAudioFileObject.table.find(inExtAudioFile) else { return kAudio_ParamError }
    var read = 0
    let result = status { () throws(AudioFileError) in
        read = try object.read(frames: Int(ioNumberFrames.pointee), into: UnsafeMutableAudioBufferListPointer(ioData))
    }
    ioNumberFrames.pointee = UInt32(read)
    return result
}

/// Writes `inNumberFrames` client-format frames from `ioData`.
@discardableResult
public func ExtAudioFileWrite(_ inExtAudioFile: ExtAudioFileRef, _ inNumberFrames: UInt32,
                              _ ioData: UnsafePointer<AudioBufferList>) -> OSStatus {
    guard let object = ExtAudioFileObject.table.find(inExtAudioFile) else { return kAudio_ParamError }
    return status { () throws(AudioFileError) in
        try object.write(frames: Int(inNumberFrames), from: UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: ioData)), async: false)
    }
}

/// Writes on the file's write queue: the frames are copied and the call returns at once; an
/// error of an earlier asynchronous write is answered by the next call (or by Dispose). A call
/// with 0 frames and no buffers only prepares the queue, as Apple's first call does.
@discardableResult
public func ExtAudioFileWriteAsync(_ inExtAudioFile: ExtAudioFileRef, _ inNumberFrames: UInt32,
                                   _ ioData: UnsafePointer<AudioBufferList>?) -> OSStatus {
    guard let object = ExtAudioFileObject.table.find(inExtAudioFile) else { return kAudio_ParamError }
    guard let ioData, inNumberFrames > 0 else { return noErr }
    return status { () throws(AudioFileError) in
        try object.write(frames: Int(inNumberFrames), from: UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: ioData)), async: true)
    }
}

/// Moves reading to `inFrameOffset`, in the file's frames (Apple: "the sample rate and frame
/// count of the file's format, not the client format"). Writing answers `kExtAudioFileError_InvalidSeek`.
@discardableResult
public func ExtAudioFileSeek(_ inExtAudioFile: ExtAudioFileRef, _ inFrameOffset: Int64) -> OSStatus {
    guard let object = ExtAudioFileObject.table.find(inExtAudioFile) else { return kAudio_ParamError }
    return status { () throws(AudioFileError) in try object.seek(toFrame: inFrameOffset) }
}

/// The position in the file's frames: the next frame read, or the frames written so far.
@discardableResult
public func ExtAudioFileTell(_ inExtAudioFile: ExtAudioFileRef, _ outFrameOffset: UnsafeMutablePointer<Int64>) -> OSStatus {
    guard let object = ExtAudioFileObject.table.find(inExtAudioFile) else { return kAudio_ParamError }
    outFrameOffset.pointee = object.position
    return noErr
}

/// The channel count an `AudioChannelLayout` describes, when it says (tags with a count in
/// their low 16 bits, or the number of descriptions); nil for a bitmap.
func channelCount(of layout: AudioChannelLayout) -> Int? {
    switch layout.mChannelLayoutTag {
    case kAudioChannelLayoutTag_UseChannelDescriptions: return Int(layout.mNumberChannelDescriptions)
    case kAudioChannelLayoutTag_UseChannelBitmap: return nil
    default: return Int(layout.mChannelLayoutTag & 0xFFFF)
    }
}

/// The layout aqjack reports for `channels` channels: mono, stereo, else discrete in order.
func defaultChannelLayout(_ channels: Int) -> AudioChannelLayout {
    var layout = AudioChannelLayout()
    layout.mChannelLayoutTag = channels == 1 ? kAudioChannelLayoutTag_Mono
        : channels == 2 ? kAudioChannelLayoutTag_Stereo : kAudioChannelLayoutTag_DiscreteInOrder | UInt32(channels)
    return layout
}
