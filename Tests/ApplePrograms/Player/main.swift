import AudioToolbox
import Foundation

// Learning Core Audio, chapter 5: a file player, ported to Swift.

let kNumberPlaybackBuffers = 3

struct MyPlayer {
    var playbackFile: AudioFileID?
    var packetPosition: Int64 = 0
    var numPacketsToRead: UInt32 = 0
    var packetDescs: UnsafeMutablePointer<AudioStreamPacketDescription>?
    var isDone = false
}

func CheckError(_ error: OSStatus, _ operation: String) {
    guard error != noErr else { return }
    var code = CFSwapInt32HostToBig(UInt32(bitPattern: error))
    let text = withUnsafeBytes(of: &code) { bytes in
        bytes.allSatisfy { isprint(Int32($0)) != 0 } ? "'" + String(decoding: bytes, as: UTF8.self) + "'" : String(error)
    }
    fputs("Error: \(operation) (\(text))\n", stderr)
    exit(1)
}

func CalculateBytesForTime(_ inAudioFile: AudioFileID, _ inDesc: AudioStreamBasicDescription, _ inSeconds: Double,
                           _ outBufferSize: UnsafeMutablePointer<UInt32>, _ outNumPackets: UnsafeMutablePointer<UInt32>) {
    var maxPacketSize: UInt32 = 0
    var propSize = UInt32(MemoryLayout<UInt32>.size)
    CheckError(AudioFileGetProperty(inAudioFile, kAudioFilePropertyPacketSizeUpperBound, &propSize, &maxPacketSize),
               "Couldn't get file's max packet size")
    let maxBufferSize: UInt32 = 0x10000
    let minBufferSize: UInt32 = 0x4000
    if inDesc.mFramesPerPacket > 0 {
        let numPacketsForTime = inDesc.mSampleRate / Double(inDesc.mFramesPerPacket) * inSeconds
        outBufferSize.pointee = UInt32(numPacketsForTime) * maxPacketSize
    } else {
        outBufferSize.pointee = max(maxBufferSize, maxPacketSize)
    }
    if outBufferSize.pointee > maxBufferSize && outBufferSize.pointee > maxPacketSize {
        outBufferSize.pointee = maxBufferSize
    } else if outBufferSize.pointee < minBufferSize {
        outBufferSize.pointee = minBufferSize
    }
    outNumPackets.pointee = outBufferSize.pointee / maxPacketSize
}

func MyCopyEncoderCookieToQueue(_ theFile: AudioFileID, _ queue: AudioQueueRef) {
    var propertySize: UInt32 = 0
    let result = AudioFileGetPropertyInfo(theFile, kAudioFilePropertyMagicCookieData, &propertySize, nil)
    if result == noErr && propertySize > 0 {
        let magicCookie = UnsafeMutableRawPointer.allocate(byteCount: Int(propertySize), alignment: 1)
        defer { magicCookie.deallocate() }
        CheckError(AudioFileGetProperty(theFile, kAudioFilePropertyMagicCookieData, &propertySize, magicCookie), "Get cookie from file failed")
        CheckError(AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, magicCookie, propertySize), "Set cookie on queue failed")
    }
}

let MyAQOutputCallback: AudioQueueOutputCallback = { inUserData, inAQ, inCompleteAQBuffer in
    let aqp = inUserData!.assumingMemoryBound(to: MyPlayer.self)
    if aqp.pointee.isDone { return }
    var numBytes = inCompleteAQBuffer.pointee.mAudioDataBytesCapacity
    var nPackets = aqp.pointee.numPacketsToRead
    CheckError(AudioFileReadPacketData(aqp.pointee.playbackFile!, false, &numBytes, aqp.pointee.packetDescs, aqp.pointee.packetPosition,
                                       &nPackets, inCompleteAQBuffer.pointee.mAudioData), "AudioFileReadPacketData failed")
    if nPackets > 0 {
        inCompleteAQBuffer.pointee.mAudioDataByteSize = numBytes
        AudioQueueEnqueueBuffer(inAQ, inCompleteAQBuffer, aqp.pointee.packetDescs == nil ? 0 : nPackets, aqp.pointee.packetDescs)
        aqp.pointee.packetPosition += Int64(nPackets)
    } else {
        CheckError(AudioQueueStop(inAQ, false), "AudioQueueStop failed")
        aqp.pointee.isDone = true
    }
}

var player = MyPlayer()
let fileURL = URL(fileURLWithPath: CommandLine.arguments[1])
CheckError(AudioFileOpenURL(fileURL as CFURL, .readPermission, 0, &player.playbackFile), "AudioFileOpenURL failed")

var dataFormat = AudioStreamBasicDescription()
var propSize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
CheckError(AudioFileGetProperty(player.playbackFile!, kAudioFilePropertyDataFormat, &propSize, &dataFormat), "Couldn't get file's data format")

var queue: AudioQueueRef?
CheckError(AudioQueueNewOutput(&dataFormat, MyAQOutputCallback, &player, nil, nil, 0, &queue), "AudioQueueNewOutput failed")

var bufferByteSize: UInt32 = 0
CalculateBytesForTime(player.playbackFile!, dataFormat, 0.5, &bufferByteSize, &player.numPacketsToRead)
let isFormatVBR = dataFormat.mBytesPerPacket == 0 || dataFormat.mFramesPerPacket == 0
player.packetDescs = isFormatVBR ? .allocate(capacity: Int(player.numPacketsToRead)) : nil
MyCopyEncoderCookieToQueue(player.playbackFile!, queue!)

var buffers = [AudioQueueBufferRef?](repeating: nil, count: kNumberPlaybackBuffers)
player.isDone = false
player.packetPosition = 0
for i in 0 ..< kNumberPlaybackBuffers {
    CheckError(AudioQueueAllocateBuffer(queue!, bufferByteSize, &buffers[i]), "AudioQueueAllocateBuffer failed")
    MyAQOutputCallback(&player, queue!, buffers[i]!)
    if player.isDone { break }
}

CheckError(AudioQueueStart(queue!, nil), "AudioQueueStart failed")
print("Playing...")
repeat {
    CFRunLoopRunInMode(CFRunLoopMode.defaultMode, 0.25, false)
} while !player.isDone
CFRunLoopRunInMode(CFRunLoopMode.defaultMode, 2, false)

player.isDone = true
CheckError(AudioQueueStop(queue!, true), "AudioQueueStop failed")
AudioQueueDispose(queue!, true)
AudioFileClose(player.playbackFile!)
print("played \(player.packetPosition) packets")
