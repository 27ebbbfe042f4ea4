import AudioToolbox
import Foundation

// A recorder class in the seed recorder's shape (seed 003: a class owning the queue, its
// callback on the creating thread's run loop) run the way an app's main loop runs it: the
// program sits in Foundation's RunLoop (`RunLoop.main.run(until:)`, or `CFRunLoopRun` with a
// Timer that stops it), a metering Timer reads the queue's level meter every 0.1 s, and the
// queue's callbacks come through that same loop.
//
//   RunLoopRecorder OUT.wav SECONDS runloop|cfrunlooprun|late

final class MeteringRecorder {
    var queue: AudioQueueRef?
    var file: AudioFileID?
    var packet: Int64 = 0
    var running = false
    var callbacks = 0
    var format = AudioStreamBasicDescription()

    init(path: String) {
        format.mSampleRate = 48000
        format.mFormatID = kAudioFormatLinearPCM
        format.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked
        format.mChannelsPerFrame = 2
        format.mBitsPerChannel = 16
        format.mFramesPerPacket = 1
        format.mBytesPerFrame = 4
        format.mBytesPerPacket = 4
        var status = AudioQueueNewInput(&format, { userData, queue, buffer, _, packets, descriptions in
            let recorder = Unmanaged<MeteringRecorder>.fromOpaque(userData!).takeUnretainedValue()
            recorder.callbacks += 1
            if packets > 0 {
                var count = packets
                AudioFileWritePackets(recorder.file!, false, buffer.pointee.mAudioDataByteSize, descriptions, recorder.packet, &count,
                                      buffer.pointee.mAudioData)
                recorder.packet += Int64(count)
            }
            if recorder.running { AudioQueueEnqueueBuffer(queue, buffer, 0, nil) }
        }, Unmanaged.passUnretained(self).toOpaque(), CFRunLoopGetCurrent(), CFRunLoopMode.commonModes.rawValue, 0, &queue)
        guard status == noErr else { fatalError("AudioQueueNewInput: \(status)") }
        status = AudioFileCreateWithURL(URL(fileURLWithPath: path) as CFURL, kAudioFileWAVEType, &format, .eraseFile, &file)
        guard status == noErr else { fatalError("AudioFileCreateWithURL: \(status)") }
        for _ in 0 ..< 3 {
            var buffer: AudioQueueBufferRef?
            AudioQueueAllocateBuffer(queue!, 4 * 4800, &buffer)
            AudioQueueEnqueueBuffer(queue!, buffer!, 0, nil)
        }
        var on: UInt32 = 1
        AudioQueueSetProperty(queue!, kAudioQueueProperty_EnableLevelMetering, &on, UInt32(MemoryLayout<UInt32>.size))
    }

    func start() {
        running = true
        AudioQueueStart(queue!, nil)
    }

    /// The first channel's average power, as a meter view reads it.
    func meter() -> Float {
        var levels = [AudioQueueLevelMeterState](repeating: AudioQueueLevelMeterState(), count: 2)
        var size = UInt32(MemoryLayout<AudioQueueLevelMeterState>.size * 2)
        AudioQueueGetProperty(queue!, kAudioQueueProperty_CurrentLevelMeter, &levels, &size)
        return levels[0].mAveragePower
    }

    func stop() {
        running = false
        AudioQueueStop(queue!, true)
        AudioQueueDispose(queue!, true)
        AudioFileClose(file!)
    }
}

let arguments = CommandLine.arguments
let seconds = Double(arguments[2])!
let recorder = MeteringRecorder(path: arguments[1])
var readings = 0
let meterTimer = Timer.scheduledTimer(withTimeInterval: 0.1, repeats: true) { _ in
    _ = recorder.meter()
    readings += 1
}
recorder.start()
if arguments[3] == "late" {
    // Busy elsewhere for 3 s before the loop runs: the callbacks wait, and the user is told.
    sleep(3)
    RunLoop.main.run(until: Date().addingTimeInterval(seconds))
} else if arguments[3] == "cfrunlooprun" {
    let loop = CFRunLoopGetCurrent()
    Timer.scheduledTimer(withTimeInterval: seconds, repeats: false) { _ in CFRunLoopStop(loop) }
    CFRunLoopRun()
} else {
    RunLoop.main.run(until: Date().addingTimeInterval(seconds))
}
meterTimer.invalidate()
recorder.stop()
print("recorded \(recorder.packet) packets in \(recorder.callbacks) callbacks, \(readings) meter readings")
