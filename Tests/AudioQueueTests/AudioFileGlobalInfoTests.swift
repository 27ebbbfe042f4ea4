import AQTestSupport
import AudioToolbox
import Foundation
import Testing

@Suite("AudioFileGetGlobalInfo and AudioFileReadBytes/WriteBytes (no server needed)")
struct AudioFileGlobalInfoTests {
    /// An array global-info value of `T`s, sized first as Apple code does.
    static func array<T>(_ property: AudioFilePropertyID, _ element: T.Type, specifier: UInt32? = nil) -> (OSStatus, [T]) {
        var spec = specifier ?? 0
        let specSize = UInt32(specifier == nil ? 0 : 4)
        var size: UInt32 = 0
        let sizeStatus = withUnsafeMutableBytes(of: &spec) { AudioFileGetGlobalInfoSize(property, specSize, specifier == nil ? nil : $0.baseAddress, &size) }
        guard sizeStatus == noErr else { return (sizeStatus, []) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, Int(size)), alignment: 16)
        defer { buffer.deallocate() }
        let status = withUnsafeMutableBytes(of: &spec) { AudioFileGetGlobalInfo(property, specSize, specifier == nil ? nil : $0.baseAddress, &size, buffer) }
        return (status, Array(UnsafeBufferPointer(start: buffer.assumingMemoryBound(to: T.self), count: Int(size) / MemoryLayout<T>.stride)))
    }

    @Test("Readable and writable types, names, formats, descriptions, extensions, UTIs and MIME types, and the lookups back")
    func globalInfo() throws {
        let (readStatus, readable) = Self.array(kAudioFileGlobalInfo_ReadableTypes, AudioFileTypeID.self)
        let (writeStatus, writable) = Self.array(kAudioFileGlobalInfo_WritableTypes, AudioFileTypeID.self)
        #expect(readStatus == noErr && writeStatus == noErr)
        #expect(Set(writable) == [kAudioFileWAVEType, kAudioFileWave64Type, kAudioFileRF64Type, kAudioFileAIFFType, kAudioFileAIFCType, kAudioFileCAFType,
                                  kAudioFileAAC_ADTSType, kAudioFileM4AType, kAudioFileMPEG4Type, kAudioFileFLACType])
        #expect(Set(readable) == Set(writable).union([kAudioFileMP3Type]))

        var type = kAudioFileCAFType
        var name = "" as CFString
        var size = UInt32(MemoryLayout<CFString>.size)
        #expect(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_FileTypeName, 4, &type, &size, &name) == noErr && (name as String) == "CAF")
        let (_, formats) = Self.array(kAudioFileGlobalInfo_AvailableFormatIDs, AudioFormatID.self, specifier: kAudioFileM4AType)
        #expect(formats == [kAudioFormatMPEG4AAC, kAudioFormatAppleLossless])

        var pair = AudioFileTypeAndFormatID(mFileType: kAudioFileAIFFType, mFormatID: kAudioFormatLinearPCM)
        #expect(AudioFileGetGlobalInfoSize(kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat, UInt32(MemoryLayout.size(ofValue: pair)), &pair, &size) == noErr)
        var descriptions = [AudioStreamBasicDescription](repeating: AudioStreamBasicDescription(), count: Int(size) / MemoryLayout<AudioStreamBasicDescription>.size)
        #expect(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat, UInt32(MemoryLayout.size(ofValue: pair)), &pair, &size, &descriptions) == noErr)
        #expect(descriptions.map(\.mBitsPerChannel) == [16, 24, 32] && descriptions.allSatisfy { $0.mFormatFlags & kAudioFormatFlagIsBigEndian != 0 })
        pair.mFormatID = kAudioFormatMPEG4AAC
        #expect(AudioFileGetGlobalInfoSize(kAudioFileGlobalInfo_AvailableStreamDescriptionsForFormat, UInt32(MemoryLayout.size(ofValue: pair)), &pair, &size)
                == kAudioFileUnsupportedDataFormatError)

        var extensions: CFArray?
        size = UInt32(MemoryLayout<CFArray>.size)
        type = kAudioFileWAVEType
        #expect(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_ExtensionsForType, 4, &type, &size, &extensions) == noErr)
        #expect(extensions as? [String] == ["wav", "wave"])
        var all: CFArray?
        #expect(AudioFileGetGlobalInfo(kAudioFileGlobalInfo_AllExtensions, 0, nil, &size, &all) == noErr)
        #expect((all as? [String] ?? []).contains("m4a") && (all as? [String] ?? []).contains("mp3"))

        // Back from an extension, a UTI, a MIME type (case-insensitive, as Apple's).
        for (property, text, expected) in [(kAudioFileGlobalInfo_TypesForExtension, "AIF", [kAudioFileAIFFType]),
                                           (kAudioFileGlobalInfo_TypesForUTI, "com.apple.coreaudio-format", [kAudioFileCAFType]),
                                           (kAudioFileGlobalInfo_TypesForMIMEType, "audio/mpeg", [kAudioFileMP3Type])] {
            var specifier = text as CFString
            var found = [AudioFileTypeID](repeating: 0, count: 4)
            size = 16
            #expect(AudioFileGetGlobalInfo(property, UInt32(MemoryLayout<CFString>.size), &specifier, &size, &found) == noErr)
            #expect(Array(found.prefix(Int(size) / 4)) == expected, "\(text)")
        }
        type = 0x7A7A_7A7A
        #expect(AudioFileGetGlobalInfoSize(kAudioFileGlobalInfo_FileTypeName, 4, &type, &size) == kAudioFileUnsupportedFileTypeError)
        #expect(AudioFileGetGlobalInfoSize(0x7A7A_7A7A, 0, nil, &size) == kAudioFileUnsupportedPropertyError)
    }

    @Test("WriteBytes appends whole frames; ReadBytes reads any byte range back exactly, then kAudioFileEndOfFileError")
    func bytes() throws {
        let path = ExternalTool.temporaryPath("bytes", extension: "wav")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                                 mFormatFlags: kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked,
                                                 mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 2,
                                                 mBitsPerChannel: 16, mReserved: 0)
        var file: AudioFileID?
        try #require(AudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, kAudioFileWAVEType, &format, .eraseFile, &file) == noErr)
        let data = (0 ..< 4000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        var count = UInt32(2000)
        #expect(AudioFileWriteBytes(file!, false, 0, &count, data) == noErr && count == 2000)
        count = 2000
        #expect(data.withUnsafeBytes { AudioFileWriteBytes(file!, false, 2000, &count, $0.baseAddress! + 2000) } == noErr && count == 2000)
        count = 4
        #expect(AudioFileWriteBytes(file!, false, 100, &count, data) == kAudioFilePositionError)
        count = 3
        #expect(AudioFileWriteBytes(file!, false, 4000, &count, data) == kAudio_ParamError)
        var optimized: UInt32 = 0
        var propertySize = UInt32(4)
        #expect(AudioFileOptimize(file!) == noErr)
        #expect(AudioFileGetProperty(file!, kAudioFilePropertyIsOptimized, &propertySize, &optimized) == noErr && optimized == 1)
        #expect(AudioFileClose(file!) == noErr)
        #expect(AudioFileOptimize(file!) == kAudioFileNotOpenError)

        try #require(AudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, .readPermission, 0, &file) == noErr)
        defer { AudioFileClose(file!) }
        var out = [UInt8](repeating: 0, count: 1000)
        count = 999
        #expect(AudioFileReadBytes(file!, false, 1001, &count, &out) == noErr && count == 999)
        #expect(Array(out.prefix(999)) == Array(data[1001 ..< 2000]))
        count = 1000
        #expect(AudioFileReadBytes(file!, false, 3500, &count, &out) == noErr && count == 500)
        #expect(Array(out.prefix(500)) == Array(data[3500 ..< 4000]))
        count = 10
        #expect(AudioFileReadBytes(file!, false, 4000, &count, &out) == kAudioFileEndOfFileError && count == 0)
    }
}

/// The bytes an Apple program hands AudioFile through callbacks.
final class MemoryFile {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

let memoryRead: AudioFile_ReadProc = { clientData, position, requestCount, buffer, actualCount in
    let file = Unmanaged<MemoryFile>.fromOpaque(clientData).takeUnretainedValue()
    let start = Int(position)
    let count = max(0, min(Int(requestCount), file.bytes.count - start))
    file.bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + start, byteCount: count) }
    actualCount.pointee = UInt32(count)
    return noErr
}

let memorySize: AudioFile_GetSizeProc = { clientData in
    Int64(Unmanaged<MemoryFile>.fromOpaque(clientData).takeUnretainedValue().bytes.count)
}

@Suite("AudioFileOpenWithCallbacks (no server needed)")
struct AudioFileCallbackTests {
    /// Every packet of `file`, read with AudioFileReadPacketData.
    static func packets(_ file: AudioFileID) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var descriptions = [AudioStreamPacketDescription](repeating: AudioStreamPacketDescription(), count: 64)
        while true {
            var bytes = UInt32(buffer.count)
            var count = UInt32(64)
            guard AudioFileReadPacketData(file, false, &bytes, &descriptions, Int64(packets.count), &count, &buffer) == noErr, count > 0 else { break }
            var format = AudioStreamBasicDescription()
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            AudioFileGetProperty(file, kAudioFilePropertyDataFormat, &size, &format)
            if format.mBytesPerPacket > 0 {
                let packetSize = Int(format.mBytesPerPacket)
                for index in 0 ..< Int(count) { packets.append(Array(buffer[index * packetSize ..< (index + 1) * packetSize])) }
            } else {
                for description in descriptions.prefix(Int(count)) {
                    packets.append(Array(buffer[Int(description.mStartOffset) ..< Int(description.mStartOffset) + Int(description.mDataByteSize)]))
                }
            }
        }
        return packets
    }

    @Test("A WAVE and an M4A file in memory, read through the callbacks, give the packets, format and cookie AudioFileOpenURL gives")
    func readsThroughCallbacks() throws {
        let wav = ExternalTool.temporaryPath("callbacks", extension: "wav")
        let m4a = ExternalTool.temporaryPath("callbacks", extension: "m4a")
        defer { for path in [wav, m4a] { try? FileManager.default.removeItem(atPath: path) } }
        try #require(ExternalTool.run("sox", ["-V1", "-n", "-r", "48000", "-c", "2", "-b", "16", wav, "synth", "1", "sine", "440"]).status == 0)
        try #require(ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", "aac", m4a]).status == 0)
        for path in [wav, m4a] {
            let memory = MemoryFile(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
            var viaCallbacks: AudioFileID?
            #expect(AudioFileOpenWithCallbacks(Unmanaged.passUnretained(memory).toOpaque(), memoryRead, nil, memorySize, nil, 0, &viaCallbacks) == noErr)
            var viaURL: AudioFileID?
            #expect(AudioFileOpenURL(URL(fileURLWithPath: path) as CFURL, .readPermission, 0, &viaURL) == noErr)
            let fromCallbacks = Self.packets(try #require(viaCallbacks))
            let fromURL = Self.packets(try #require(viaURL))
            #expect(!fromCallbacks.isEmpty && fromCallbacks == fromURL, "\(path)")
            var cookieSize: UInt32 = 0
            AudioFileGetPropertyInfo(viaCallbacks!, kAudioFilePropertyMagicCookieData, &cookieSize, nil)
            var urlCookieSize: UInt32 = 0
            AudioFileGetPropertyInfo(viaURL!, kAudioFilePropertyMagicCookieData, &urlCookieSize, nil)
            #expect(cookieSize == urlCookieSize)
            #expect(AudioFileClose(viaCallbacks!) == noErr && AudioFileClose(viaURL!) == noErr)
        }
        // Bytes that are not audio: the same error as a file of them.
        let junk = MemoryFile([UInt8](repeating: 7, count: 1000))
        var file: AudioFileID?
        #expect(AudioFileOpenWithCallbacks(Unmanaged.passUnretained(junk).toOpaque(), memoryRead, nil, memorySize, nil, 0, &file) != noErr)
    }
}
