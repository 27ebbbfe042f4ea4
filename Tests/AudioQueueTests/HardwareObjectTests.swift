import AQJack
import AQServerSuite
import AQTestSupport
import AudioToolbox
import Foundation
import Testing

/// The Learning Core Audio recorder's sample-rate query (chapter 4), as a Swift port writes it.
func MyGetDefaultInputDeviceSampleRate(_ outSampleRate: UnsafeMutablePointer<Float64>) -> OSStatus {
    var deviceID: AudioDeviceID = 0
    var propertyAddress = AudioObjectPropertyAddress(mSelector: kAudioHardwarePropertyDefaultInputDevice,
                                                     mScope: kAudioObjectPropertyScopeGlobal, mElement: 0)
    var propertySize = UInt32(MemoryLayout<AudioDeviceID>.size)
    var error = AudioHardwareServiceGetPropertyData(AudioObjectID(kAudioObjectSystemObject), &propertyAddress, 0, nil, &propertySize, &deviceID)
    if error != noErr { return error }
    propertyAddress.mSelector = kAudioDevicePropertyNominalSampleRate
    propertyAddress.mScope = kAudioObjectPropertyScopeGlobal
    propertyAddress.mElement = 0
    propertySize = UInt32(MemoryLayout<Float64>.size)
    error = AudioHardwareServiceGetPropertyData(deviceID, &propertyAddress, 0, nil, &propertySize, outSampleRate)
    return error
}

extension JackServerSuite {
    @Suite("Core Audio HAL queries answered from the JACK graph")
    struct HardwareObjectTests {
        @Test("The default devices are the server's physical ports: rate, period, channels, name and UID as JACK reports them")
        func defaultDevices() throws {
            var rate: Float64 = 0
            #expect(MyGetDefaultInputDeviceSampleRate(&rate) == noErr)
            let client = try JackClient(name: TestServer.uniqueClientName("hal"))
            defer { client.close() }
            #expect(rate == Float64(client.sampleRate))

            var address = AudioObjectPropertyAddress(mSelector: kAudioHardwarePropertyDefaultOutputDevice, mScope: kAudioObjectPropertyScopeGlobal,
                                                     mElement: kAudioObjectPropertyElementMain)
            var output: AudioDeviceID = 0
            var size = UInt32(4)
            #expect(AudioObjectGetPropertyData(kAudioObjectSystemObject, &address, 0, nil, &size, &output) == noErr)
            #expect(output == 3)
            address.mSelector = kAudioHardwarePropertyDevices
            #expect(AudioObjectGetPropertyDataSize(kAudioObjectSystemObject, &address, 0, nil, &size) == noErr && size == 8)

            // Channels per scope: the physical capture ports feed the input device.
            let capture = client.portNames(direction: .output, physicalOnly: true, audioOnly: true)
            let playback = client.portNames(direction: .input, physicalOnly: true, audioOnly: true)
            for (device, scope, expected) in [(AudioDeviceID(2), kAudioObjectPropertyScopeInput, capture.count), (2, kAudioObjectPropertyScopeOutput, 0),
                                              (3, kAudioObjectPropertyScopeOutput, playback.count)] {
                address = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyStreamConfiguration, mScope: scope, mElement: 0)
                #expect(AudioObjectGetPropertyDataSize(device, &address, 0, nil, &size) == noErr)
                let list = AudioBufferList.allocate(maximumBuffers: 1)
                defer { free(list.unsafeMutablePointer) }
                #expect(AudioObjectGetPropertyData(device, &address, 0, nil, &size, list.unsafeMutablePointer) == noErr)
                #expect(list.reduce(0) { $0 + Int($1.mNumberChannels) } == expected, "device \(device) scope \(scope)")
            }
            #expect(capture.count == 2)

            address = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyBufferFrameSize, mScope: kAudioObjectPropertyScopeGlobal, mElement: 0)
            var frames: UInt32 = 0
            size = 4
            #expect(AudioObjectGetPropertyData(2, &address, 0, nil, &size, &frames) == noErr && Int(frames) == client.bufferSize)

            address.mSelector = kAudioObjectPropertyName
            var name = "" as CFString
            size = UInt32(MemoryLayout<CFString>.size)
            #expect(AudioObjectGetPropertyData(2, &address, 0, nil, &size, &name) == noErr)
            #expect((name as String) == "JACK '\(client.serverName)' capture")
            address.mSelector = kAudioDevicePropertyDeviceUID
            var uid = "" as CFString
            #expect(AudioObjectGetPropertyData(2, &address, 0, nil, &size, &uid) == noErr && (uid as String) == "system")

            // What cannot be: an unknown object, an unknown property, a value too small, a set.
            address.mSelector = kAudioDevicePropertyNominalSampleRate
            var small: UInt16 = 0
            size = 2
            #expect(AudioObjectGetPropertyData(2, &address, 0, nil, &size, &small) == kAudioHardwareBadPropertySizeError)
            #expect(AudioObjectGetPropertyData(99, &address, 0, nil, &size, &small) == kAudioHardwareBadObjectError)
            var newRate: Float64 = 44100
            #expect(AudioObjectSetPropertyData(2, &address, 0, nil, 8, &newRate) == kAudioHardwareIllegalOperationError)
            address.mSelector = 0x7A7A_7A7A
            #expect(!AudioObjectHasProperty(2, &address))
            #expect(AudioObjectGetPropertyDataSize(2, &address, 0, nil, &size) == kAudioHardwareUnknownPropertyError)
        }

        @Test("With no server: the default input device is kAudioObjectUnknown and a device query answers kAudioHardwareNotRunningError")
        func noServer() {
            setenv("AQJACK_SERVER", "aqjack-no-such-server-\(getpid())", 1)
            defer { unsetenv("AQJACK_SERVER") }
            var address = AudioObjectPropertyAddress(mSelector: kAudioHardwarePropertyDefaultInputDevice, mScope: kAudioObjectPropertyScopeGlobal, mElement: 0)
            var device: AudioDeviceID = 7
            var size = UInt32(4)
            #expect(AudioObjectGetPropertyData(kAudioObjectSystemObject, &address, 0, nil, &size, &device) == noErr && device == kAudioObjectUnknown)
            var rate: Float64 = 0
            #expect(MyGetDefaultInputDeviceSampleRate(&rate) == kAudioHardwareBadObjectError)
            address.mSelector = kAudioDevicePropertyNominalSampleRate
            size = 8
            #expect(AudioObjectGetPropertyData(2, &address, 0, nil, &size, &rate) == kAudioHardwareNotRunningError)
        }
    }
}
