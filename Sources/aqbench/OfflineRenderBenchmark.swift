import AQCore
import AQMedia
import AudioQueue
import Foundation
import Synchronization

/// `aqbench offline-render FILE`: plays a linear-PCM file through an output queue in offline
/// mode (float, the file's rate), as AudioQueueOfflineRender users do, and prints the frames
/// rendered, the wall time and the speed against real time. No server.
///
/// Three 64 KiB buffers feed the queue (refilled in the callback); renders of 4096 frames pull,
/// and go to /dev/null as sox's output does in the comparison.
func offlineRenderBenchmark(path: String) throws -> String {
    let reader = try AudioFileReader(path: path)
    let fileFormat = reader.dataFormat
    let channels = Int(fileFormat.mChannelsPerFrame)
    let byteCapacity = 65536 / reader.layout.bytesPerFrame * reader.layout.bytesPerFrame
    let nextPacket = Mutex<Int64>(0)
    let started = Date()
    let queue = try AudioOutputQueue(format: fileFormat, driver: OfflineDriver(sampleRate: Int(fileFormat.mSampleRate))) { queue, buffer in
        let start = nextPacket.withLock { $0 }
        let read = (try? reader.readPackets(startPacket: start, packetCount: byteCapacity / reader.layout.bytesPerFrame,
                                             into: buffer.pointee.mAudioData, byteCapacity: byteCapacity)) ?? 0
        if read > 0 {
            nextPacket.withLock { $0 += Int64(read) }
            buffer.pointee.mAudioDataByteSize = UInt32(read * reader.layout.bytesPerFrame)
            try? queue.enqueue(buffer)
        } else {
            queue.stop(immediate: false)
        }
    }
    defer { queue.dispose() }
    var render = fileFormat
    render.mFormatFlags = AudioFormatValues.isFloat | AudioFormatValues.isPacked
    render.mBitsPerChannel = 32
    render.mBytesPerFrame = UInt32(4 * channels)
    render.mBytesPerPacket = render.mBytesPerFrame
    try queue.setOfflineRenderFormat(render)
    for _ in 0 ..< 3 {
        let buffer = try queue.allocateBuffer(byteCapacity: byteCapacity)
        let read = try reader.readPackets(startPacket: nextPacket.withLock { $0 }, packetCount: byteCapacity / reader.layout.bytesPerFrame,
                                          into: buffer.pointee.mAudioData, byteCapacity: byteCapacity)
        guard read > 0 else { break }
        nextPacket.withLock { $0 += Int64(read) }
        buffer.pointee.mAudioDataByteSize = UInt32(read * reader.layout.bytesPerFrame)
        try queue.enqueue(buffer)
    }
    try queue.start()
    let capture = try queue.allocateBuffer(byteCapacity: 4096 * 4 * channels)
    var frames = 0
    // What sox does with its output in the comparison: written to /dev/null.
    let sink = fopen("/dev/null", "wb")
    defer { fclose(sink) }
    while true {
        let rendered = try queue.renderOffline(frameCount: 4096, into: capture)
        let floats = capture.pointee.mAudioData.assumingMemoryBound(to: Float.self)
        fwrite(floats, 4 * channels, rendered, sink)
        frames += rendered
        if rendered == 0 { break }
    }
    let seconds = Date().timeIntervalSince(started)
    let audio = Double(frames) / fileFormat.mSampleRate
    return "frames \(frames) seconds \(format(seconds, 3)) audio \(format(audio, 1)) speed \(format(audio / seconds, 0))x"
}
