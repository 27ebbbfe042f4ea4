import AQCodecs
import AQMedia
import Foundation

// Audio File Stream Services, Apple spelling (AudioFileStream.h), over AQCodecs'
// AudioStreamParser: WAVE/RF64, CAF, ADTS, MP3 and MPEG-4 (M4A) bytes in pieces of any size;
// the property listener hears of each property as it is learned (FileFormat, DataFormat,
// MagicCookieData, PacketTableInfo, AudioDataByteCount, AudioDataPacketCount, DataOffset, then
// ReadyToProducePackets), and the packets callback gets whole packets, with descriptions for
// variable-size formats, on the thread that called ParseBytes, during the call.

public typealias AudioFileStreamPropertyID = UInt32

public let kAudioFileStreamProperty_ReadyToProducePackets: AudioFileStreamPropertyID = 0x7265_6479  // 'redy'
public let kAudioFileStreamProperty_FileFormat: AudioFileStreamPropertyID = 0x6666_6D74             // 'ffmt'
public let kAudioFileStreamProperty_DataFormat: AudioFileStreamPropertyID = 0x6466_6D74             // 'dfmt'
public let kAudioFileStreamProperty_FormatList: AudioFileStreamPropertyID = 0x666C_7374             // 'flst'
public let kAudioFileStreamProperty_MagicCookieData: AudioFileStreamPropertyID = 0x6D67_6963        // 'mgic'
public let kAudioFileStreamProperty_AudioDataByteCount: AudioFileStreamPropertyID = 0x6263_6E74     // 'bcnt'
public let kAudioFileStreamProperty_AudioDataPacketCount: AudioFileStreamPropertyID = 0x7063_6E74   // 'pcnt'
public let kAudioFileStreamProperty_MaximumPacketSize: AudioFileStreamPropertyID = 0x7073_7A65      // 'psze'
public let kAudioFileStreamProperty_DataOffset: AudioFileStreamPropertyID = 0x646F_6666             // 'doff'
public let kAudioFileStreamProperty_PacketToFrame: AudioFileStreamPropertyID = 0x706B_6672          // 'pkfr'
public let kAudioFileStreamProperty_FrameToPacket: AudioFileStreamPropertyID = 0x6672_706B          // 'frpk'
public let kAudioFileStreamProperty_PacketToByte: AudioFileStreamPropertyID = 0x706B_6279           // 'pkby'
public let kAudioFileStreamProperty_PacketTableInfo: AudioFileStreamPropertyID = 0x706E_666F        // 'pnfo'
public let kAudioFileStreamProperty_PacketSizeUpperBound: AudioFileStreamPropertyID = 0x706B_7562   // 'pkub'
public let kAudioFileStreamProperty_AverageBytesPerPacket: AudioFileStreamPropertyID = 0x6162_7070  // 'abpp'
public let kAudioFileStreamProperty_BitRate: AudioFileStreamPropertyID = 0x6272_6174                // 'brat'

public let kAudioFileStreamError_UnsupportedFileType: OSStatus = 0x7479_703F        // 'typ?'
public let kAudioFileStreamError_UnsupportedDataFormat: OSStatus = 0x666D_743F      // 'fmt?'
public let kAudioFileStreamError_UnsupportedProperty: OSStatus = 0x7074_793F        // 'pty?'
public let kAudioFileStreamError_BadPropertySize: OSStatus = 0x2173_697A            // '!siz'
public let kAudioFileStreamError_NotOptimized: OSStatus = 0x6F70_746D               // 'optm'
public let kAudioFileStreamError_InvalidPacketOffset: OSStatus = 0x7063_6B3F        // 'pck?'
public let kAudioFileStreamError_InvalidFile: OSStatus = 0x6474_613F                // 'dta?'
public let kAudioFileStreamError_ValueUnknown: OSStatus = 0x756E_6B3F               // 'unk?'
public let kAudioFileStreamError_DataUnavailable: OSStatus = 0x6D6F_7265            // 'more'
public let kAudioFileStreamError_IllegalOperation: OSStatus = 0x6E6F_7065           // 'nope'
public let kAudioFileStreamError_UnspecifiedError: OSStatus = 0x7768_743F           // 'wht?'
public let kAudioFileStreamError_DiscontinuityCantRecover: OSStatus = 0x6473_6321   // 'dsc!'

/// What an `AudioFileStreamID` stands for.
final class FileStreamBox: @unchecked Sendable {
    static let table = HandleTable<FileStreamBox>(.fileStreams)
    /// Apple passes the client data to callbacks declared non-optional: NULL becomes this.
    nonisolated(unsafe) private static var placeholder: UInt8 = 0

    let parser: AudioStreamParser
    let clientData: UnsafeMutableRawPointer
    let propertyProc: AudioFileStream_PropertyListenerProc
    let packetsProc: AudioFileStream_PacketsProc
    var reference: AudioFileStreamID!

    init(parser: AudioStreamParser, clientData: UnsafeMutableRawPointer?, propertyProc: @escaping AudioFileStream_PropertyListenerProc,
         packetsProc: @escaping AudioFileStream_PacketsProc) {
        self.parser = parser
        self.clientData = clientData ?? withUnsafeMutablePointer(to: &Self.placeholder) { UnsafeMutableRawPointer($0) }
        self.propertyProc = propertyProc
        self.packetsProc = packetsProc
    }
}

/// Opens a parser; `inFileTypeHint` may be 0 (the bytes tell: RIFF/RF64, caff, ftyp, ADTS or
/// MP3 sync, after any ID3v2 tag) or a type that helps tell ADTS from MP3.
@discardableResult
public func AudioFileStreamOpen(_ inClientData: UnsafeMutableRawPointer?, _ inPropertyListenerProc: @escaping AudioFileStream_PropertyListenerProc,
                                _ inPacketsProc: @escaping AudioFileStream_PacketsProc, _ inFileTypeHint: AudioFileTypeID,
                                _ outAudioFileStream: UnsafeMutablePointer<AudioFileStreamID?>) -> OSStatus {
    let box = FileStreamBox(parser: AudioStreamParser(typeHint: inFileTypeHint), clientData: inClientData,
                            propertyProc: inPropertyListenerProc, packetsProc: inPacketsProc)
    let reference = FileStreamBox.table.register(box)
    box.reference = reference
    outAudioFileStream.pointee = reference
    return noErr
}

/// Parses `inDataByteSize` bytes; the callbacks run during the call. `.discontinuity` after a
/// seek drops a partial packet held from before.
@discardableResult
public func AudioFileStreamParseBytes(_ inAudioFileStream: AudioFileStreamID, _ inDataByteSize: UInt32, _ inData: UnsafeRawPointer?,
                                      _ inFlags: AudioFileStreamParseFlags) -> OSStatus {
    guard let box = FileStreamBox.table.find(inAudioFileStream) else { return kAudio_ParamError }
    guard inDataByteSize == 0 || inData != nil else { return kAudio_ParamError }
    let bytes = UnsafeRawBufferPointer(start: inData, count: Int(inDataByteSize))
    return status { () throws(AudioFileError) in
        try box.parser.parse(bytes, discontinuity: inFlags.contains(.discontinuity), events: { event in
            switch event {
            case .property(let id):
                var flags = AudioFileStreamPropertyFlags()
                box.propertyProc(box.clientData, box.reference, id, &flags)
            }
        }, packets: { data, count, descriptions in
            guard let base = data.baseAddress else { return }
            box.packetsProc(box.clientData, UInt32(data.count), UInt32(count), base, descriptions.map { UnsafeMutablePointer(mutating: $0.baseAddress!) })
        })
    }
}

/// The byte offset where packet `inPacketOffset` starts: exact for WAVE, CAF and MPEG-4,
/// estimated (`.offsetIsEstimated`) for ADTS and MP3. Pass the bytes from there next, with
/// `.discontinuity`.
@discardableResult
public func AudioFileStreamSeek(_ inAudioFileStream: AudioFileStreamID, _ inPacketOffset: Int64,
                                _ outDataByteOffset: UnsafeMutablePointer<Int64>, _ ioFlags: UnsafeMutablePointer<AudioFileStreamSeekFlags>) -> OSStatus {
    guard let box = FileStreamBox.table.find(inAudioFileStream) else { return kAudio_ParamError }
    return status { () throws(AudioFileError) in
        let target = try box.parser.seek(toPacket: inPacketOffset)
        // Apple's offset is relative to the start of the audio data.
        outDataByteOffset.pointee = target.offset - box.parser.info.dataOffset
        ioFlags.pointee = target.estimated ? .offsetIsEstimated : []
    }
}

/// A property's value (kAudioFileStreamError_ValueUnknown before the stream has told it).
private func streamProperty(_ info: AudioStreamInfo, _ id: AudioFileStreamPropertyID, _ isVariable: Bool) -> Result<[UInt8], StatusOnly> {
    func bytes<T>(_ value: T) -> Result<[UInt8], StatusOnly> { .success(withUnsafeBytes(of: value) { Array($0) }) }
    let known = info.fileType != 0
    switch id {
    case kAudioFileStreamProperty_ReadyToProducePackets: return bytes(UInt32(info.isReadyToProducePackets ? 1 : 0))
    case kAudioFileStreamProperty_FileFormat: return known ? bytes(info.fileType) : .failure(.unknown)
    case kAudioFileStreamProperty_DataFormat:
        return info.dataFormat.mFormatID != 0 ? bytes(info.dataFormat) : .failure(.unknown)
    case kAudioFileStreamProperty_MagicCookieData:
        return info.magicCookie.isEmpty ? .failure(.unknown) : .success(info.magicCookie)
    case kAudioFileStreamProperty_FormatList:
        return info.dataFormat.mFormatID != 0 ? .success(formatListBytes(info.dataFormat, cookie: info.magicCookie)) : .failure(.unknown)
    case kAudioFileStreamProperty_AudioDataByteCount:
        return info.audioDataByteCount.flatMap(UInt64.init(exactly:)).map(bytes) ?? .failure(.unknown)
    case kAudioFileStreamProperty_AudioDataPacketCount:
        return info.audioDataPacketCount.flatMap(UInt64.init(exactly:)).map(bytes) ?? .failure(.unknown)
    case kAudioFileStreamProperty_MaximumPacketSize, kAudioFileStreamProperty_PacketSizeUpperBound:
        return info.maximumPacketSize > 0 ? UInt32(exactly: info.maximumPacketSize).map(bytes) ?? .failure(.unknown) : .failure(.unknown)
    case kAudioFileStreamProperty_DataOffset:
        return info.isReadyToProducePackets ? bytes(info.dataOffset) : .failure(.unknown)
    case kAudioFileStreamProperty_PacketTableInfo:
        guard let table = info.packetTable else { return .failure(.unknown) }
        return bytes(AudioFilePacketTableInfo(mNumberValidFrames: table.validFrameCount, mPrimingFrames: table.primingFrames,
                                              mRemainderFrames: table.remainderFrames))
    case kAudioFileStreamProperty_BitRate:
        return info.bitRate > 0 ? bytes(info.bitRate) : .failure(.unknown)
    case kAudioFileStreamProperty_AverageBytesPerPacket:
        if !isVariable, info.dataFormat.mBytesPerPacket > 0 { return bytes(Double(info.dataFormat.mBytesPerPacket)) }
        guard let packets = info.audioDataPacketCount, packets > 0, let total = info.audioDataByteCount else { return .failure(.unknown) }
        return bytes(Double(total) / Double(packets))
    default: return .failure(StatusOnly(kAudioFileStreamError_UnsupportedProperty))
    }
}

extension StatusOnly {
    /// `kAudioFileStreamError_ValueUnknown`: the stream has not told it yet.
    static let unknown = StatusOnly(kAudioFileStreamError_ValueUnknown)
}

@discardableResult
public func AudioFileStreamGetPropertyInfo(_ inAudioFileStream: AudioFileStreamID, _ inPropertyID: AudioFileStreamPropertyID,
                                           _ outPropertyDataSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    guard let box = FileStreamBox.table.find(inAudioFileStream) else { return kAudio_ParamError }
    switch streamProperty(box.parser.info, inPropertyID, box.parser.info.dataFormat.mBytesPerPacket == 0) {
    case .success(let value):
        outPropertyDataSize?.pointee = UInt32(value.count)
        outWritable?.pointee = false
        return noErr
    case .failure(let failure): return failure.status
    }
}

/// Reads a property: the value must fit in `ioPropertyDataSize` bytes
/// (`kAudioFileStreamError_BadPropertySize`); `PacketToFrame`/`FrameToPacket`/`PacketToByte`
/// take their question in the buffer, as Apple's do.
@discardableResult
public func AudioFileStreamGetProperty(_ inAudioFileStream: AudioFileStreamID, _ inPropertyID: AudioFileStreamPropertyID,
                                       _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    guard let box = FileStreamBox.table.find(inAudioFileStream) else { return kAudio_ParamError }
    let info = box.parser.info
    let framesPerPacket = Int64(info.dataFormat.mFramesPerPacket)
    switch inPropertyID {
    case kAudioFileStreamProperty_PacketToFrame, kAudioFileStreamProperty_FrameToPacket:
        // AudioFramePacketTranslation: mFrame (Int64), mPacket (Int64), mFrameOffsetInPacket (UInt32).
        guard ioPropertyDataSize.pointee >= 24 else { return kAudioFileStreamError_BadPropertySize }
        guard framesPerPacket > 0 else { return kAudioFileStreamError_ValueUnknown }
        // A negative packet or frame, or a frame past 2^63, is the caller's error.
        if inPropertyID == kAudioFileStreamProperty_PacketToFrame {
            let packet = outPropertyData.load(fromByteOffset: 8, as: Int64.self)
            guard packet >= 0, case let (frame, false) = packet.multipliedReportingOverflow(by: framesPerPacket) else { return kAudio_ParamError }
            outPropertyData.storeBytes(of: frame, as: Int64.self)
        } else {
            let frame = outPropertyData.load(as: Int64.self)
            guard frame >= 0 else { return kAudio_ParamError }
            outPropertyData.storeBytes(of: frame / framesPerPacket, toByteOffset: 8, as: Int64.self)
            outPropertyData.storeBytes(of: UInt32(frame % framesPerPacket), toByteOffset: 16, as: UInt32.self)
        }
        ioPropertyDataSize.pointee = 24
        return noErr
    case kAudioFileStreamProperty_PacketToByte:
        // AudioBytePacketTranslation: mByte (Int64), mPacket (Int64), mByteOffsetInPacket, mFlags (UInt32).
        guard ioPropertyDataSize.pointee >= 24 else { return kAudioFileStreamError_BadPropertySize }
        var flags = AudioFileStreamSeekFlags()
        var offset: Int64 = 0
        let result = AudioFileStreamSeek(inAudioFileStream, outPropertyData.load(fromByteOffset: 8, as: Int64.self), &offset, &flags)
        guard result == noErr else { return result }
        outPropertyData.storeBytes(of: offset, as: Int64.self)
        outPropertyData.storeBytes(of: flags.rawValue, toByteOffset: 20, as: UInt32.self)
        ioPropertyDataSize.pointee = 24
        return noErr
    default:
        switch streamProperty(info, inPropertyID, info.dataFormat.mBytesPerPacket == 0) {
        case .failure(let failure): return failure.status
        case .success(let value):
            return storePropertyBytes(value, into: outPropertyData, size: ioPropertyDataSize, mustFit: true, tooSmall: kAudioFileStreamError_BadPropertySize)
        }
    }
}

/// No stream property can be set here (Apple's parsers take none either but a few hints):
/// `kAudioFileStreamError_IllegalOperation`.
@discardableResult
public func AudioFileStreamSetProperty(_ inAudioFileStream: AudioFileStreamID, _ inPropertyID: AudioFileStreamPropertyID,
                                       _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    FileStreamBox.table.find(inAudioFileStream) == nil ? kAudio_ParamError : kAudioFileStreamError_IllegalOperation
}

@discardableResult
public func AudioFileStreamClose(_ inAudioFileStream: AudioFileStreamID) -> OSStatus {
    FileStreamBox.table.remove(inAudioFileStream) == nil ? kAudio_ParamError : noErr
}
