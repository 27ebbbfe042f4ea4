import AudioToolbox
import Foundation

// A recorder with a block on a dispatch queue (AudioQueueNewInputWithDispatchQueue, macOS 10.6,
// iOS 10): 16-bit stereo PCM into a WAVE file for the seconds given.

final class Recording {
    var file: AudioFileID?
    var packet: Int64 = 0
    var running = true
}

let arguments = CommandLine.arguments
let seconds = Double(arguments[2])!
let recording = Recording()

var format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                         mFormatFlags: kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked,
                                         mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 2,
                                         mBitsPerChannel: 16, mReserved: 0)
guard AudioFileCreateWithURL(URL(fileURLWithPath: arguments[1]) as CFURL, kAudioFileWAVEType, &format, .eraseFile, &recording.file) == noErr else {
    print("AudioFileCreateWithURL failed")
    exit(1)
}

let callbackQueue = DispatchQueue(label: "recorder.callbacks")
var queue: AudioQueueRef?
let status = AudioQueueNewInputWithDispatchQueue(&queue, &format, 0, callbackQueue) { queue, buffer, _, numberPackets, descriptions in
    var packets = numberPackets
    if packets > 0 {
        AudioFileWritePackets(recording.file!, false, buffer.pointee.mAudioDataByteSize, descriptions, recording.packet, &packets, buffer.pointee.mAudioData)
        recording.packet += Int64(packets)
    }
    if recording.running { AudioQueueEnqueueBuffer(queue, buffer, 0, nil) }
}
guard status == noErr, let queue else {
    print("AudioQueueNewInputWithDispatchQueue failed: \(status)")
    exit(1)
}
for _ in 0 ..< 3 {
    var buffer: AudioQueueBufferRef?
    AudioQueueAllocateBuffer(queue, 4800 * 4, &buffer)
    AudioQueueEnqueueBuffer(queue, buffer!, 0, nil)
}
AudioQueueStart(queue, nil)
print("Recording...")
Thread.sleep(forTimeInterval: seconds)
callbackQueue.sync { recording.running = false }
AudioQueueStop(queue, true)
AudioQueueDispose(queue, true)
callbackQueue.sync {}
AudioFileClose(recording.file!)
print("recorded \(recording.packet) packets")
