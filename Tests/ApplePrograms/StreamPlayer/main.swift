import AudioToolbox
import Foundation

// An internet-radio-style player: bytes arrive in 2 KiB pieces (here reads of a file, as from
// a network connection) and go to AudioFileStream; once it is ready to produce packets an
// output queue is made with the stream's format (and its magic cookie, when it has one), and
// every batch of packets it parses goes to the queue in a buffer of its own, with the packet
// descriptions, freed again in the output callback. At the end the queue is flushed and
// stopped after the last buffer, and the program waits for kAudioQueueProperty_IsRunning to drop.
// As the classic streamers do, it reads kAudioFileStreamProperty_FormatList when the parser
// announces it and plays HE-AAC ('aach') when the stream offers it, else the data format.
//
//   StreamPlayer FILE   (MP3, AAC in ADTS or M4A, HE-AAC, Opus or AC-3 in CAF ...)

final class Player {
    var stream: AudioFileStreamID?
    var queue: AudioQueueRef?
    var packets = 0
    var failed = false
    var highEfficiencyFormat: AudioStreamBasicDescription?
    let stopped = DispatchSemaphore(value: 0)
}

let outputCallback: AudioQueueOutputCallback = { _, queue, buffer in
    AudioQueueFreeBuffer(queue, buffer)
}

let runningListener: AudioQueuePropertyListenerProc = { userData, queue, _ in
    let player = Unmanaged<Player>.fromOpaque(userData!).takeUnretainedValue()
    var running: UInt32 = 0
    var size = UInt32(MemoryLayout<UInt32>.size)
    AudioQueueGetProperty(queue, kAudioQueueProperty_IsRunning, &running, &size)
    if running == 0 { player.stopped.signal() }
}

let propertyListener: AudioFileStream_PropertyListenerProc = { clientData, streamID, propertyID, _ in
    let player = Unmanaged<Player>.fromOpaque(clientData).takeUnretainedValue()
    if propertyID == kAudioFileStreamProperty_FormatList {
        var listSize: UInt32 = 0
        var writable: DarwinBoolean = false
        guard AudioFileStreamGetPropertyInfo(streamID, kAudioFileStreamProperty_FormatList, &listSize, &writable) == noErr else { return }
        let count = Int(listSize) / MemoryLayout<AudioFormatListItem>.size
        let items = UnsafeMutablePointer<AudioFormatListItem>.allocate(capacity: count)
        defer { items.deallocate() }
        guard AudioFileStreamGetProperty(streamID, kAudioFileStreamProperty_FormatList, &listSize, items) == noErr else { return }
        for index in 0 ..< count where items[index].mASBD.mFormatID == kAudioFormatMPEG4AAC_HE {
            player.highEfficiencyFormat = items[index].mASBD
            break
        }
        return
    }
    guard propertyID == kAudioFileStreamProperty_ReadyToProducePackets else { return }
    var format = AudioStreamBasicDescription()
    var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    AudioFileStreamGetProperty(streamID, kAudioFileStreamProperty_DataFormat, &size, &format)
    if let highEfficiency = player.highEfficiencyFormat { format = highEfficiency }
    var status = AudioQueueNewOutput(&format, outputCallback, clientData, nil, nil, 0, &player.queue)
    guard status == noErr, let queue = player.queue else {
        print("AudioQueueNewOutput failed: \(status)")
        player.failed = true
        return
    }
    var cookieSize: UInt32 = 0
    var writable: DarwinBoolean = false
    if AudioFileStreamGetPropertyInfo(streamID, kAudioFileStreamProperty_MagicCookieData, &cookieSize, &writable) == noErr, cookieSize > 0 {
        let cookie = UnsafeMutableRawPointer.allocate(byteCount: Int(cookieSize), alignment: 1)
        defer { cookie.deallocate() }
        AudioFileStreamGetProperty(streamID, kAudioFileStreamProperty_MagicCookieData, &cookieSize, cookie)
        AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, cookie, cookieSize)
    }
    AudioQueueAddPropertyListener(queue, kAudioQueueProperty_IsRunning, runningListener, clientData)
    status = AudioQueueStart(queue, nil)
    if status != noErr { print("AudioQueueStart failed: \(status)") }
}

let packetsProc: AudioFileStream_PacketsProc = { clientData, numberBytes, numberPackets, inputData, packetDescriptions in
    let player = Unmanaged<Player>.fromOpaque(clientData).takeUnretainedValue()
    guard let queue = player.queue, let packetDescriptions else { return }
    var buffer: AudioQueueBufferRef?
    guard AudioQueueAllocateBufferWithPacketDescriptions(queue, numberBytes, numberPackets, &buffer) == noErr, let buffer else {
        player.failed = true
        return
    }
    memcpy(buffer.pointee.mAudioData, inputData, Int(numberBytes))
    buffer.pointee.mAudioDataByteSize = numberBytes
    for index in 0 ..< Int(numberPackets) { buffer.pointee.mPacketDescriptions![index] = packetDescriptions[index] }
    buffer.pointee.mPacketDescriptionCount = numberPackets
    let status = AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
    if status != noErr {
        print("AudioQueueEnqueueBuffer failed: \(status)")
        player.failed = true
    }
    player.packets += Int(numberPackets)
}

let player = Player()
guard AudioFileStreamOpen(Unmanaged.passUnretained(player).toOpaque(), propertyListener, packetsProc, 0, &player.stream) == noErr,
      let stream = player.stream else {
    print("AudioFileStreamOpen failed")
    exit(1)
}
let handle = FileHandle(forReadingAtPath: CommandLine.arguments[1])!
while !player.failed {
    let data = handle.readData(ofLength: 2048)
    if data.isEmpty { break }
    let status = data.withUnsafeBytes { AudioFileStreamParseBytes(stream, UInt32(data.count), $0.baseAddress, []) }
    if status != noErr {
        print("AudioFileStreamParseBytes failed: \(status)")
        exit(1)
    }
}
guard let queue = player.queue, !player.failed else {
    print("no queue played the stream")
    exit(1)
}
AudioQueueFlush(queue)
AudioQueueStop(queue, false)
player.stopped.wait()
AudioQueueDispose(queue, true)
AudioFileStreamClose(stream)
print("played \(player.packets) packets" + (player.highEfficiencyFormat != nil ? " as HE-AAC" : ""))
