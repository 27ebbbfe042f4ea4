import AVFoundation
import Foundation

// A recorder in the style of iOS code: the audio session first (category, preferred rate,
// activation, record permission, interruptions), then a recording queue at the session's rate,
// with a HAL listener on the default input device's DeviceIsAlive, as device-aware code has.
// Each event is printed with the time it came (seconds since 1970).
//
//   SessionRecorder SECONDS

let seconds = Double(CommandLine.arguments[1])!
let session = AVAudioSession.sharedInstance()
do {
    try session.setCategory(.playAndRecord, mode: .measurement, options: [.defaultToSpeaker, .allowBluetooth])
    try session.setPreferredSampleRate(44100)
    try session.setPreferredIOBufferDuration(0.005)
    try session.setActive(true)
} catch {
    print("session error: \(error)")
    exit(1)
}
session.requestRecordPermission { granted in print("record permission granted: \(granted)") }
print("session: category \(session.category == .playAndRecord ? "playAndRecord" : "?"), mode \(session.mode == .measurement ? "measurement" : "?"), "
      + "rate \(Int(session.sampleRate)) Hz (preferred \(Int(session.preferredSampleRate))), buffer \(Int((session.ioBufferDuration * 1_000_000).rounded())) us, "
      + "inputs \(session.inputNumberOfChannels), outputs \(session.outputNumberOfChannels), permission \(session.recordPermission == .granted ? "granted" : "?")")

// The route, as headphone-aware code reads it, and the first available input made preferred.
let route = session.currentRoute
func describe(_ ports: [AVAudioSessionPortDescription]) -> String {
    ports.map { "\($0.portType.rawValue) '\($0.portName)' \($0.uid) [\(($0.channels ?? []).map(\.channelName).joined(separator: " "))]" }.joined(separator: ", ")
}
print("route: inputs \(describe(route.inputs)); outputs \(describe(route.outputs)); headphones \(route.outputs.contains { $0.portType == .headphones })")
if let input = session.availableInputs?.first {
    do {
        try session.setPreferredInput(input)
        print("preferred input: \(session.preferredInput?.uid ?? "none")")
    } catch {
        print("setPreferredInput failed: \(error)")
    }
}

NotificationCenter.default.addObserver(forName: AVAudioSession.interruptionNotification, object: session, queue: nil) { note in
    let raw = note.userInfo?[AVAudioSessionInterruptionTypeKey] as? UInt ?? 99
    let options = AVAudioSession.InterruptionOptions(rawValue: note.userInfo?[AVAudioSessionInterruptionOptionKey] as? UInt ?? 0)
    switch AVAudioSession.InterruptionType(rawValue: raw) {
    case .began: print("interruption began at \(Date().timeIntervalSince1970)")
    case .ended: print("interruption ended at \(Date().timeIntervalSince1970)\(options.contains(.shouldResume) ? ", should resume" : "")")
    default: print("interruption of unknown type \(raw)")
    }
}

NotificationCenter.default.addObserver(forName: AVAudioSession.routeChangeNotification, object: session, queue: nil) { note in
    let reason = note.userInfo?[AVAudioSessionRouteChangeReasonKey] as? UInt ?? 99
    print("route change (reason \(reason)) at \(Date().timeIntervalSince1970)")
}

var address = AudioObjectPropertyAddress(mSelector: kAudioHardwarePropertyDefaultInputDevice, mScope: kAudioObjectPropertyScopeGlobal,
                                         mElement: kAudioObjectPropertyElementMain)
var device = AudioDeviceID(0)
var size = UInt32(MemoryLayout<AudioDeviceID>.size)
AudioObjectGetPropertyData(AudioObjectID(kAudioObjectSystemObject), &address, 0, nil, &size, &device)
address.mSelector = kAudioDevicePropertyDeviceIsAlive
AudioObjectAddPropertyListenerBlock(device, &address, DispatchQueue.main) { _, _ in
    var alive: UInt32 = 0
    var aliveSize = UInt32(MemoryLayout<UInt32>.size)
    var aliveAddress = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyDeviceIsAlive, mScope: kAudioObjectPropertyScopeGlobal,
                                                  mElement: kAudioObjectPropertyElementMain)
    AudioObjectGetPropertyData(device, &aliveAddress, 0, nil, &aliveSize, &alive)
    print("device is alive: \(alive) at \(Date().timeIntervalSince1970)")
}

final class Frames { var count = 0 }
let frames = Frames()
var format = AudioStreamBasicDescription(mSampleRate: session.sampleRate, mFormatID: kAudioFormatLinearPCM,
                                         mFormatFlags: kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked,
                                         mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 2,
                                         mBitsPerChannel: 16, mReserved: 0)
var queue: AudioQueueRef?
guard AudioQueueNewInput(&format, { userData, queue, buffer, _, packets, _ in
    Unmanaged<Frames>.fromOpaque(userData!).takeUnretainedValue().count += Int(packets)
    AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
}, Unmanaged.passUnretained(frames).toOpaque(), nil, nil, 0, &queue) == noErr, let queue else {
    print("AudioQueueNewInput failed")
    exit(1)
}
for _ in 0 ..< 3 {
    var buffer: AudioQueueBufferRef?
    AudioQueueAllocateBuffer(queue, 4 * 4800, &buffer)
    AudioQueueEnqueueBuffer(queue, buffer!, 0, nil)
}
AudioQueueStart(queue, nil)
print("ready at \(Date().timeIntervalSince1970)")
fflush(stdout)
RunLoop.main.run(until: Date().addingTimeInterval(seconds))
AudioQueueStop(queue, true)
AudioQueueDispose(queue, true)
print("recorded \(frames.count) frames")
