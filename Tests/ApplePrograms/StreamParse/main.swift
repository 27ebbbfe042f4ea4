import AudioToolbox
import Foundation

// The parsing half of a streaming player: bytes arrive in pieces (here 2 KiB reads of a file,
// as from a network connection) and go to AudioFileStream; the packets it finds are counted.

final class StreamState {
    var streamID: AudioFileStreamID?
    var format = AudioStreamBasicDescription()
    var cookieSize: UInt32 = 0
    var ready = false
    var packets = 0
    var bytes = 0
}

let propertyListener: AudioFileStream_PropertyListenerProc = { clientData, streamID, propertyID, _ in
    let state = Unmanaged<StreamState>.fromOpaque(clientData).takeUnretainedValue()
    switch propertyID {
    case kAudioFileStreamProperty_DataFormat:
        var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        AudioFileStreamGetProperty(streamID, kAudioFileStreamProperty_DataFormat, &size, &state.format)
    case kAudioFileStreamProperty_MagicCookieData:
        var writable: DarwinBoolean = false
        AudioFileStreamGetPropertyInfo(streamID, kAudioFileStreamProperty_MagicCookieData, &state.cookieSize, &writable)
    case kAudioFileStreamProperty_ReadyToProducePackets:
        state.ready = true
    default:
        break
    }
}

let packetsProc: AudioFileStream_PacketsProc = { clientData, numberBytes, numberPackets, _, packetDescriptions in
    let state = Unmanaged<StreamState>.fromOpaque(clientData).takeUnretainedValue()
    state.packets += Int(numberPackets)
    state.bytes += Int(numberBytes)
    if let packetDescriptions {
        // Variable bit rate: each packet's size is in its description.
        for index in 0 ..< Int(numberPackets) where packetDescriptions[index].mDataByteSize == 0 {
            print("empty packet at \(index)")
        }
    }
}

let state = StreamState()
var streamID: AudioFileStreamID?
var status = AudioFileStreamOpen(Unmanaged.passUnretained(state).toOpaque(), propertyListener, packetsProc, 0, &streamID)
guard status == noErr, let streamID else {
    print("AudioFileStreamOpen failed: \(status)")
    exit(1)
}
state.streamID = streamID

let handle = FileHandle(forReadingAtPath: CommandLine.arguments[1])!
while true {
    let data = handle.readData(ofLength: 2048)
    if data.isEmpty { break }
    status = data.withUnsafeBytes { AudioFileStreamParseBytes(streamID, UInt32(data.count), $0.baseAddress, []) }
    if status != noErr {
        print("AudioFileStreamParseBytes failed: \(status)")
        exit(1)
    }
}
AudioFileStreamClose(streamID)

let formatID = CFSwapInt32HostToBig(state.format.mFormatID)
let name = withUnsafeBytes(of: formatID) { String(decoding: $0, as: UTF8.self) }
print("format \(name) \(Int(state.format.mSampleRate)) Hz \(state.format.mChannelsPerFrame) ch, cookie \(state.cookieSize) bytes, ready \(state.ready), packets \(state.packets), bytes \(state.bytes)")
