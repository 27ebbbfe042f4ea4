import AudioToolbox
import Foundation

// A device watcher in the style of SDL's Core Audio backend: the default output device is
// opened by ID, listeners go on the system object (the device list, the default output device)
// and on the device (alive, nominal rate, buffer frame size), each a C function with the
// watcher as its client data; every call prints what it heard and when (seconds since 1970).
// After SECONDS the listeners are removed again.
//
//   DeviceWatcher SECONDS

final class Watcher {
    var device = AudioDeviceID(0)
    var calls = 0
}

func read<T>(_ object: AudioObjectID, _ selector: AudioObjectPropertySelector, _ value: inout T) -> OSStatus {
    var address = AudioObjectPropertyAddress(mSelector: selector, mScope: kAudioObjectPropertyScopeGlobal, mElement: kAudioObjectPropertyElementMain)
    var size = UInt32(MemoryLayout<T>.size)
    return AudioObjectGetPropertyData(object, &address, 0, nil, &size, &value)
}

func now() -> String { String(format: "%.3f", Date().timeIntervalSince1970) }

/// Prints a line at once (standard output may be a file or a pipe).
func say(_ line: String) {
    print(line)
    fflush(stdout)
}

let deviceListChanged: AudioObjectPropertyListenerProc = { _, _, _, data in
    let watcher = Unmanaged<Watcher>.fromOpaque(data!).takeUnretainedValue()
    watcher.calls += 1
    var address = AudioObjectPropertyAddress(mSelector: kAudioHardwarePropertyDevices, mScope: kAudioObjectPropertyScopeGlobal,
                                             mElement: kAudioObjectPropertyElementMain)
    var size: UInt32 = 0
    AudioObjectGetPropertyDataSize(AudioObjectID(kAudioObjectSystemObject), &address, 0, nil, &size)
    say("devices changed: \(Int(size) / MemoryLayout<AudioDeviceID>.size) devices at \(now())")
    return noErr
}

let defaultDeviceChanged: AudioObjectPropertyListenerProc = { _, _, _, data in
    let watcher = Unmanaged<Watcher>.fromOpaque(data!).takeUnretainedValue()
    watcher.calls += 1
    var device = AudioDeviceID(0)
    _ = read(AudioObjectID(kAudioObjectSystemObject), kAudioHardwarePropertyDefaultOutputDevice, &device)
    say("default output device changed: \(device) at \(now())")
    return noErr
}

let deviceChanged: AudioObjectPropertyListenerProc = { objectID, count, addresses, data in
    let watcher = Unmanaged<Watcher>.fromOpaque(data!).takeUnretainedValue()
    watcher.calls += 1
    for index in 0 ..< Int(count) {
        switch addresses[index].mSelector {
        case kAudioDevicePropertyDeviceIsAlive:
            var alive: UInt32 = 1
            _ = read(objectID, kAudioDevicePropertyDeviceIsAlive, &alive)
            say("device is alive: \(alive) at \(now())")
        case kAudioDevicePropertyNominalSampleRate:
            var rate: Float64 = 0
            _ = read(objectID, kAudioDevicePropertyNominalSampleRate, &rate)
            say("sample rate: \(Int(rate)) at \(now())")
        case kAudioDevicePropertyBufferFrameSize:
            var frames: UInt32 = 0
            _ = read(objectID, kAudioDevicePropertyBufferFrameSize, &frames)
            say("buffer frame size: \(frames) at \(now())")
        default:
            say("property \(addresses[index].mSelector) at \(now())")
        }
    }
    return noErr
}

let seconds = Double(CommandLine.arguments[1])!
let watcher = Watcher()
let data = Unmanaged.passUnretained(watcher).toOpaque()
guard read(AudioObjectID(kAudioObjectSystemObject), kAudioHardwarePropertyDefaultOutputDevice, &watcher.device) == noErr,
      watcher.device != kAudioObjectUnknown else {
    say("no default output device")
    exit(1)
}
var rate: Float64 = 0
var frames: UInt32 = 0
_ = read(watcher.device, kAudioDevicePropertyNominalSampleRate, &rate)
_ = read(watcher.device, kAudioDevicePropertyBufferFrameSize, &frames)
say("default output device \(watcher.device): \(Int(rate)) Hz, \(frames) frames")

var systemAddresses = [kAudioHardwarePropertyDevices, kAudioHardwarePropertyDefaultOutputDevice].map {
    AudioObjectPropertyAddress(mSelector: $0, mScope: kAudioObjectPropertyScopeGlobal, mElement: kAudioObjectPropertyElementMain)
}
var deviceAddresses = [kAudioDevicePropertyDeviceIsAlive, kAudioDevicePropertyNominalSampleRate, kAudioDevicePropertyBufferFrameSize].map {
    AudioObjectPropertyAddress(mSelector: $0, mScope: kAudioObjectPropertyScopeGlobal, mElement: kAudioObjectPropertyElementMain)
}
var status = AudioObjectAddPropertyListener(AudioObjectID(kAudioObjectSystemObject), &systemAddresses[0], deviceListChanged, data)
status |= AudioObjectAddPropertyListener(AudioObjectID(kAudioObjectSystemObject), &systemAddresses[1], defaultDeviceChanged, data)
for index in deviceAddresses.indices { status |= AudioObjectAddPropertyListener(watcher.device, &deviceAddresses[index], deviceChanged, data) }
if status != noErr { say("AudioObjectAddPropertyListener failed: \(status)") }
say("watching at \(now())")

Thread.sleep(forTimeInterval: seconds)

var removed = AudioObjectRemovePropertyListener(AudioObjectID(kAudioObjectSystemObject), &systemAddresses[0], deviceListChanged, data)
removed |= AudioObjectRemovePropertyListener(AudioObjectID(kAudioObjectSystemObject), &systemAddresses[1], defaultDeviceChanged, data)
for index in deviceAddresses.indices { removed |= AudioObjectRemovePropertyListener(watcher.device, &deviceAddresses[index], deviceChanged, data) }
say("removed: \(removed == noErr ? "all" : "failed \(removed)"), \(watcher.calls) calls")
