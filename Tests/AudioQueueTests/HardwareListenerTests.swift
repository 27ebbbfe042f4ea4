import AQServerSuite
import AQTestSupport
import AQJack
import AudioToolbox
import Dispatch
import Foundation
import Testing

/// When each listener was called, by what it listens to.
private final class Calls: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [String: [Date]] = [:]
    func note(_ what: String) { lock.withLock { times[what, default: []].append(Date()) } }
    func first(_ what: String, after start: Date, within seconds: Double) -> Date? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let hit = lock.withLock({ times[what]?.first(where: { $0 >= start }) }) { return hit }
            usleep(10_000)
        }
        return nil
    }
}

private let aliveListener: AudioObjectPropertyListenerProc = { _, count, addresses, data in
    let calls = Unmanaged<Calls>.fromOpaque(data!).takeUnretainedValue()
    if count > 0 && addresses.pointee.mSelector == kAudioDevicePropertyDeviceIsAlive { calls.note("alive") }
    return noErr
}

extension JackServerSuite {
    /// Issue 36: the HAL's property listeners on JACK.
    @Suite("HAL property listeners", .serialized)
    struct HardwareListenerTests {
        static func read<T>(_ object: AudioObjectID, _ selector: AudioObjectPropertySelector, as type: T.Type, default value: T) -> T {
            var address = AudioObjectPropertyAddress(mSelector: selector, mScope: kAudioObjectPropertyScopeGlobal, mElement: kAudioObjectPropertyElementMain)
            var result = value
            var size = UInt32(MemoryLayout<T>.size)
            _ = AudioObjectGetPropertyData(object, &address, 0, nil, &size, &result)
            return result
        }

        @Test("property reads while a listener watches the server go through the watching client: 40 reads of the rate and the period at least 5 times faster than the same 40 without a listener (each of which opens and closes a client of its own), with the same values")
        func readsUseTheWatchingClient() throws {
            let server = try PrivateJackServer(rate: 48000, period: 128)
            defer { server.stop() }
            setenv("AQJACK_SERVER", server.name, 1)
            defer { unsetenv("AQJACK_SERVER") }
            let output = Self.read(kAudioObjectSystemObject, kAudioHardwarePropertyDefaultOutputDevice, as: AudioDeviceID.self, default: 0)
            func reads() -> (seconds: Double, values: Set<String>) {
                let start = Date()
                var values: Set<String> = []
                for _ in 0 ..< 20 {
                    values.insert("rate \(Self.read(output, kAudioDevicePropertyNominalSampleRate, as: Float64.self, default: 0))")
                    values.insert("period \(Self.read(output, kAudioDevicePropertyBufferFrameSize, as: UInt32.self, default: 0))")
                }
                return (Date().timeIntervalSince(start), values)
            }
            let alone = reads()
            var alive = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyDeviceIsAlive, mScope: kAudioObjectPropertyScopeGlobal,
                                                   mElement: kAudioObjectPropertyElementMain)
            let listener: AudioObjectPropertyListenerBlock = { _, _ in }
            #expect(AudioObjectAddPropertyListenerBlock(output, &alive, nil, listener) == noErr)
            usleep(300_000)   // the watching client opens
            let watched = reads()
            #expect(AudioObjectRemovePropertyListenerBlock(output, &alive, nil, listener) == noErr)
            print("40 HAL property reads: \(String(format: "%.4f", alone.seconds)) s with a client each, \(String(format: "%.4f", watched.seconds)) s through the watching client")
            #expect(alone.values == ["rate 48000.0", "period 128"] && watched.values == alone.values, "\(alone.values) then \(watched.values)")
            #expect(watched.seconds * 5 < alone.seconds, "\(watched.seconds) s watched, \(alone.seconds) s alone")
        }

        @Test("listeners on a private server (AQJACK_SERVER): jack_bufsize 256 calls the BufferFrameSize block with the new period readable; a connection to system:playback_1 calls the output device's DataSource block within a second; killing jackd calls the DeviceIsAlive proc and the Devices block within a second, DeviceIsAlive reads 0 and the device list is empty; a removed listener removes once, then 'who?'; an unknown selector 'who?', an unknown object '!obj'")
        func listeners() throws {
            let server = try PrivateJackServer(rate: 48000, period: 128)
            var stopped = false
            defer { if !stopped { server.stop() } }
            setenv("AQJACK_SERVER", server.name, 1)
            defer { unsetenv("AQJACK_SERVER") }
            let calls = Calls()
            let data = Unmanaged.passUnretained(calls).toOpaque()
            var alive = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyDeviceIsAlive, mScope: kAudioObjectPropertyScopeGlobal,
                                                   mElement: kAudioObjectPropertyElementMain)
            var devices = AudioObjectPropertyAddress(mSelector: kAudioHardwarePropertyDevices, mScope: kAudioObjectPropertyScopeGlobal,
                                                     mElement: kAudioObjectPropertyElementMain)
            var period = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyBufferFrameSize, mScope: kAudioObjectPropertyScopeGlobal,
                                                    mElement: kAudioObjectPropertyElementMain)
            let queue = DispatchQueue(label: "hal-test")
            let output = Self.read(kAudioObjectSystemObject, kAudioHardwarePropertyDefaultOutputDevice, as: AudioDeviceID.self, default: 0)
            #expect(output != kAudioObjectUnknown)
            #expect(AudioObjectAddPropertyListener(output, &alive, aliveListener, data) == noErr)
            #expect(AudioObjectAddPropertyListenerBlock(kAudioObjectSystemObject, &devices, queue) { _, _ in calls.note("devices") } == noErr)
            #expect(AudioObjectAddPropertyListenerBlock(output, &period, nil) { _, _ in calls.note("period") } == noErr)
            #expect(Self.read(output, kAudioDevicePropertyDeviceIsAlive, as: UInt32.self, default: 9) == 1)
            usleep(300_000)   // the watching client opens

            let resize = Date()
            let resized = try ExternalTool.run("env", ["JACK_DEFAULT_SERVER=\(server.name)", "jack_bufsize", "256"], timeout: 20)
            #expect(resized.status == 0, "\(resized.standardError)")
            let periodCall = calls.first("period", after: resize, within: 3)
            #expect(periodCall != nil, "no BufferFrameSize call after jack_bufsize 256")
            #expect(Self.read(output, kAudioDevicePropertyBufferFrameSize, as: UInt32.self, default: 0) == 256)

            // A connection to the output device's physical ports: its DataSource listeners hear of it.
            var source = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyDataSource, mScope: kAudioObjectPropertyScopeGlobal,
                                                    mElement: kAudioObjectPropertyElementMain)
            #expect(AudioObjectAddPropertyListenerBlock(output, &source, nil) { _, _ in calls.note("route") } == noErr)
            let player = try JackClient(name: TestServer.uniqueClientName("halroute"), server: server.name)
            defer { player.close() }
            let port = try player.registerPort("out", direction: .output)
            try player.activate()
            let connect = Date()
            #expect(try player.connect(port.name, to: "system:playback_1"))
            let routeCall = calls.first("route", after: connect, within: 3)
            #expect(routeCall.map { $0.timeIntervalSince(connect) < 1 } == true, "DataSource listener: \(String(describing: routeCall?.timeIntervalSince(connect)))")
            #expect(AudioObjectRemovePropertyListenerBlock(output, &source, nil) { _, _ in } == noErr)
            player.close()

            let kill = Date()
            server.stop()
            stopped = true
            let aliveCall = calls.first("alive", after: kill, within: 5)
            let devicesCall = calls.first("devices", after: kill, within: 5)
            print("jack_bufsize → BufferFrameSize listener after \(periodCall.map { String(format: "%.3f s", $0.timeIntervalSince(resize)) } ?? "-"); "
                + "jackd stopped → DeviceIsAlive after \(aliveCall.map { String(format: "%.3f s", $0.timeIntervalSince(kill)) } ?? "-"), "
                + "Devices after \(devicesCall.map { String(format: "%.3f s", $0.timeIntervalSince(kill)) } ?? "-")")
            #expect(aliveCall.map { $0.timeIntervalSince(kill) < 1 } == true, "DeviceIsAlive listener: \(String(describing: aliveCall?.timeIntervalSince(kill)))")
            #expect(devicesCall.map { $0.timeIntervalSince(kill) < 1 } == true)
            #expect(Self.read(output, kAudioDevicePropertyDeviceIsAlive, as: UInt32.self, default: 9) == 0)
            var size: UInt32 = 0
            #expect(AudioObjectGetPropertyDataSize(kAudioObjectSystemObject, &devices, 0, nil, &size) == noErr && size == 0)

            #expect(AudioObjectRemovePropertyListener(output, &alive, aliveListener, data) == noErr)
            #expect(AudioObjectRemovePropertyListener(output, &alive, aliveListener, data) == kAudioHardwareUnknownPropertyError)
            #expect(AudioObjectRemovePropertyListenerBlock(kAudioObjectSystemObject, &devices, queue) { _, _ in } == noErr)
            #expect(AudioObjectRemovePropertyListenerBlock(output, &period, nil) { _, _ in } == noErr)
            var name = AudioObjectPropertyAddress(mSelector: kAudioObjectPropertyName, mScope: kAudioObjectPropertyScopeGlobal,
                                                  mElement: kAudioObjectPropertyElementMain)
            #expect(AudioObjectAddPropertyListener(output, &name, aliveListener, data) == kAudioHardwareUnknownPropertyError)
            #expect(AudioObjectAddPropertyListener(77, &alive, aliveListener, data) == kAudioHardwareBadObjectError)
        }
    }
}
