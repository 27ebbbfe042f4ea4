import AudioToolbox
import Foundation

// A file player with a block on a dispatch queue (AudioQueueNewOutputWithDispatchQueue):
// linear-PCM files, half a second per buffer, until the file ends and the queue has drained.

final class Playback {
    var file: AudioFileID?
    var packet: Int64 = 0
    var done = false
    let finished = DispatchSemaphore(value: 0)
}

let playback = Playback()
guard AudioFileOpenURL(URL(fileURLWithPath: CommandLine.arguments[1]) as CFURL, .readPermission, 0, &playback.file) == noErr else {
    print("AudioFileOpenURL failed")
    exit(1)
}
var format = AudioStreamBasicDescription()
var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
AudioFileGetProperty(playback.file!, kAudioFilePropertyDataFormat, &size, &format)
let framesPerBuffer = UInt32(format.mSampleRate / 2)

func fill(_ queue: AudioQueueRef, _ buffer: AudioQueueBufferRef) {
    guard !playback.done else { return }
    var bytes = buffer.pointee.mAudioDataBytesCapacity
    var packets = framesPerBuffer
    AudioFileReadPacketData(playback.file!, false, &bytes, nil, playback.packet, &packets, buffer.pointee.mAudioData)
    if packets > 0 {
        buffer.pointee.mAudioDataByteSize = bytes
        AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
        playback.packet += Int64(packets)
    } else {
        playback.done = true
        AudioQueueStop(queue, false)
    }
}

let callbackQueue = DispatchQueue(label: "player.callbacks")
var queue: AudioQueueRef?
guard AudioQueueNewOutputWithDispatchQueue(&queue, &format, 0, callbackQueue, { queue, buffer in fill(queue, buffer) }) == noErr, let queue else {
    print("AudioQueueNewOutputWithDispatchQueue failed")
    exit(1)
}
// The end: IsRunning goes to 0 once the last buffer has played.
let listener: AudioQueuePropertyListenerProc = { userData, queue, _ in
    var running: UInt32 = 0
    var size = UInt32(4)
    AudioQueueGetProperty(queue, kAudioQueueProperty_IsRunning, &running, &size)
    if running == 0 { Unmanaged<Playback>.fromOpaque(userData!).takeUnretainedValue().finished.signal() }
}
AudioQueueAddPropertyListener(queue, kAudioQueueProperty_IsRunning, listener, Unmanaged.passUnretained(playback).toOpaque())
callbackQueue.sync {
    for _ in 0 ..< 3 {
        var buffer: AudioQueueBufferRef?
        AudioQueueAllocateBuffer(queue, framesPerBuffer * format.mBytesPerFrame, &buffer)
        fill(queue, buffer!)
    }
}
AudioQueueStart(queue, nil)
print("Playing...")
_ = playback.finished.wait(timeout: .now() + 30)
AudioQueueDispose(queue, true)
AudioFileClose(playback.file!)
print("played \(playback.packet) packets")
