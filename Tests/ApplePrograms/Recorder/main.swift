import AudioToolbox
import Foundation

// Learning Core Audio, chapter 4: a recorder, ported to Swift. The device's sample rate comes
// from the HAL; the format is completed by AudioFormatGetProperty and read back from the queue;
// the encoder's magic cookie goes to the file before and after recording.

struct MyRecorder {
    var recordFile: AudioFileID?
    var recordPacket: Int64 = 0
    var running = false
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

func MyGetDefaultInputDeviceSampleRate(_ outSampleRate: UnsafeMutablePointer<Float64>) -> OSStatus {
    var deviceID: AudioDeviceID = 0
    var propertyAddress = AudioObjectPropertyAddress(mSelector: kAudioHardwarePropertyDefaultInputDevice,
                                                     mScope: kAudioObjectPropertyScopeGlobal,
                                                     mElement: kAudioObjectPropertyElementMain)
    var propertySize = UInt32(MemoryLayout<AudioDeviceID>.size)
    var error = AudioObjectGetPropertyData(AudioObjectID(kAudioObjectSystemObject), &propertyAddress, 0, nil, &propertySize, &deviceID)
    if error != noErr { return error }
    propertyAddress.mSelector = kAudioDevicePropertyNominalSampleRate
    propertySize = UInt32(MemoryLayout<Float64>.size)
    error = AudioObjectGetPropertyData(deviceID, &propertyAddress, 0, nil, &propertySize, outSampleRate)
    return error
}

func MyCopyEncoderCookieToFile(_ queue: AudioQueueRef, _ theFile: AudioFileID) {
    var propertySize: UInt32 = 0
    let error = AudioQueueGetPropertySize(queue, kAudioConverterCompressionMagicCookie, &propertySize)
    if error == noErr && propertySize > 0 {
        let magicCookie = UnsafeMutableRawPointer.allocate(byteCount: Int(propertySize), alignment: 1)
        defer { magicCookie.deallocate() }
        CheckError(AudioQueueGetProperty(queue, kAudioQueueProperty_MagicCookie, magicCookie, &propertySize), "Couldn't get audio queue's magic cookie")
        CheckError(AudioFileSetProperty(theFile, kAudioFilePropertyMagicCookieData, propertySize, magicCookie), "Couldn't set audio file's magic cookie")
    }
}

func MyComputeRecordBufferSize(_ format: UnsafePointer<AudioStreamBasicDescription>, _ queue: AudioQueueRef, _ seconds: Float) -> Int {
    let frames = Int(ceil(Double(seconds) * format.pointee.mSampleRate))
    if format.pointee.mBytesPerFrame > 0 { return frames * Int(format.pointee.mBytesPerFrame) }
    var maxPacketSize: UInt32 = 0
    if format.pointee.mBytesPerPacket > 0 {
        maxPacketSize = format.pointee.mBytesPerPacket
    } else {
        var propertySize = UInt32(MemoryLayout.size(ofValue: maxPacketSize))
        CheckError(AudioQueueGetProperty(queue, kAudioConverterPropertyMaximumOutputPacketSize, &maxPacketSize, &propertySize),
                   "Couldn't get queue's maximum output packet size")
    }
    var packets = format.pointee.mFramesPerPacket > 0 ? frames / Int(format.pointee.mFramesPerPacket) : frames
    if packets == 0 { packets = 1 }
    return packets * Int(maxPacketSize)
}

let MyAQInputCallback: AudioQueueInputCallback = { inUserData, inQueue, inBuffer, inStartTime, inNumPackets, inPacketDesc in
    let recorder = inUserData!.assumingMemoryBound(to: MyRecorder.self)
    if inNumPackets > 0 {
        var ioNumPackets = inNumPackets
        CheckError(AudioFileWritePackets(recorder.pointee.recordFile!, false, inBuffer.pointee.mAudioDataByteSize, inPacketDesc,
                                         recorder.pointee.recordPacket, &ioNumPackets, inBuffer.pointee.mAudioData),
                   "AudioFileWritePackets failed")
        recorder.pointee.recordPacket += Int64(ioNumPackets)
    }
    if recorder.pointee.running {
        CheckError(AudioQueueEnqueueBuffer(inQueue, inBuffer, 0, nil), "AudioQueueEnqueueBuffer failed")
    }
}

let arguments = CommandLine.arguments
let seconds = Double(arguments[2])!
let useAAC = arguments[3] == "aac"

var recorder = MyRecorder()
var recordFormat = AudioStreamBasicDescription()
recordFormat.mFormatID = useAAC ? kAudioFormatMPEG4AAC : kAudioFormatLinearPCM
recordFormat.mChannelsPerFrame = 2
CheckError(MyGetDefaultInputDeviceSampleRate(&recordFormat.mSampleRate), "MyGetDefaultInputDeviceSampleRate failed")
if !useAAC {
    recordFormat.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked
    recordFormat.mBitsPerChannel = 16
    recordFormat.mFramesPerPacket = 1
    recordFormat.mBytesPerFrame = 4
    recordFormat.mBytesPerPacket = 4
}
var propSize = UInt32(MemoryLayout.size(ofValue: recordFormat))
CheckError(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &propSize, &recordFormat), "AudioFormatGetProperty failed")

var queue: AudioQueueRef?
CheckError(AudioQueueNewInput(&recordFormat, MyAQInputCallback, &recorder, nil, nil, 0, &queue), "AudioQueueNewInput failed")

var size = UInt32(MemoryLayout.size(ofValue: recordFormat))
CheckError(AudioQueueGetProperty(queue!, kAudioConverterCurrentOutputStreamDescription, &recordFormat, &size), "Couldn't get queue's format")

let myFileURL = URL(fileURLWithPath: arguments[1]) as CFURL
CheckError(AudioFileCreateWithURL(myFileURL, useAAC ? kAudioFileCAFType : kAudioFileWAVEType, &recordFormat, .eraseFile, &recorder.recordFile),
           "AudioFileCreateWithURL failed")
MyCopyEncoderCookieToFile(queue!, recorder.recordFile!)

let bufferByteSize = MyComputeRecordBufferSize(&recordFormat, queue!, 0.5)
for _ in 0 ..< 3 {
    var buffer: AudioQueueBufferRef?
    CheckError(AudioQueueAllocateBuffer(queue!, UInt32(bufferByteSize), &buffer), "AudioQueueAllocateBuffer failed")
    CheckError(AudioQueueEnqueueBuffer(queue!, buffer!, 0, nil), "AudioQueueEnqueueBuffer failed")
}

recorder.running = true
CheckError(AudioQueueStart(queue!, nil), "AudioQueueStart failed")
print("Recording at \(Int(recordFormat.mSampleRate)) Hz...")
CFRunLoopRunInMode(CFRunLoopMode.defaultMode, seconds, false)
print("* recording done *")
recorder.running = false
CheckError(AudioQueueStop(queue!, true), "AudioQueueStop failed")
MyCopyEncoderCookieToFile(queue!, recorder.recordFile!)
AudioQueueDispose(queue!, true)
AudioFileClose(recorder.recordFile!)
print("recorded \(recorder.recordPacket) packets")
