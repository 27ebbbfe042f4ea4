import AQJack
import Dispatch
import Foundation
import Synchronization

// The HAL's property listeners (`AudioObjectAddPropertyListener` and its block form), as SDL's
// Core Audio backend and device-aware recorders use them: told when the JACK server goes away
// or comes back (`kAudioDevicePropertyDeviceIsAlive` on both devices, and the system object's
// device list and default devices), and when its rate or period changes
// (`kAudioDevicePropertyNominalSampleRate`, `kAudioDevicePropertyBufferFrameSize`), and when a
// connection to or from a device's physical ports is made or broken (its
// `kAudioDevicePropertyDataSource`: where its sound goes, as a headphone jack's does on a Mac).
//
// A watching client of its own (`aqjack-hal-watch-PID`, no ports) is opened on the queues'
// server when the first listener is added and kept while any is; after a shutdown it tries to
// open again every 0.25 s, and a server that came back is announced like one that went. Procs
// and blocks without a queue are called on a dispatch queue of the watcher's (Apple calls them
// on a HAL thread), one notification at a time.

/// `AudioObjectPropertyListenerProc`.
public typealias AudioObjectPropertyListenerProc = @convention(c) (AudioObjectID, UInt32, UnsafePointer<AudioObjectPropertyAddress>,
                                                                   UnsafeMutableRawPointer?) -> OSStatus
/// `AudioObjectPropertyListenerBlock`.
public typealias AudioObjectPropertyListenerBlock = (UInt32, UnsafePointer<AudioObjectPropertyAddress>) -> Void

/// The listeners and the watching client.
final class HardwareWatcher: @unchecked Sendable {
    static let shared = HardwareWatcher()

    private enum Callback {
        case proc(AudioObjectPropertyListenerProc, UnsafeMutableRawPointer?)
        case block(AudioObjectPropertyListenerBlock, DispatchQueue?)
    }
    private struct Listener {
        let object: AudioObjectID
        let address: AudioObjectPropertyAddress
        let callback: Callback
    }

    /// The selectors a listener can be added for, by object kind.
    static let systemSelectors: Set<AudioObjectPropertySelector> = [kAudioHardwarePropertyDevices, kAudioHardwarePropertyDefaultInputDevice,
                                                                    kAudioHardwarePropertyDefaultOutputDevice, kAudioHardwarePropertyDefaultSystemOutputDevice]
    static let deviceSelectors: Set<AudioObjectPropertySelector> = [kAudioDevicePropertyDeviceIsAlive, kAudioDevicePropertyNominalSampleRate,
                                                                    kAudioDevicePropertyBufferFrameSize, kAudioDevicePropertyDataSource]

    private let lock = NSLock()
    private var listeners: [Listener] = []
    private var client: JackClient?
    /// The server the watching client was opened on (nil: the default one).
    private var clientServer: String?
    private var watching = false
    /// The rate and period last seen (changes only are announced).
    private var sampleRate: Int?
    private var bufferSize: Int?
    /// The physical ports when the watch client opened: capture (JACK outputs) and playback.
    private var physical: (capture: Set<String>, playback: Set<String>) = ([], [])
    private let calls = DispatchQueue(label: "aqjack.hal.listeners")

    /// Checks `object` and `address`: the status to answer when no listener can be added.
    static func check(_ object: AudioObjectID, _ address: AudioObjectPropertyAddress) -> OSStatus {
        if object == kAudioObjectSystemObject {
            return systemSelectors.contains(address.mSelector) ? noErr : kAudioHardwareUnknownPropertyError
        }
        guard HardwareDevice(rawValue: object) != nil else { return kAudioHardwareBadObjectError }
        return deviceSelectors.contains(address.mSelector) ? noErr : kAudioHardwareUnknownPropertyError
    }

    func add(_ object: AudioObjectID, _ address: AudioObjectPropertyAddress, proc: AudioObjectPropertyListenerProc, data: UnsafeMutableRawPointer?) {
        add(Listener(object: object, address: address, callback: .proc(proc, data)))
    }

    func add(_ object: AudioObjectID, _ address: AudioObjectPropertyAddress, block: @escaping AudioObjectPropertyListenerBlock, queue: DispatchQueue?) {
        add(Listener(object: object, address: address, callback: .block(block, queue)))
    }

    private func add(_ listener: Listener) {
        let start = lock.withLock { () -> Bool in
            listeners.append(listener)
            defer { watching = true }
            return !watching
        }
        if start { connect() }
    }

    /// Removes the proc listener added with the same object, address, proc and data.
    func removeProc(_ object: AudioObjectID, _ address: AudioObjectPropertyAddress, proc: AudioObjectPropertyListenerProc,
                    data: UnsafeMutableRawPointer?) -> Bool {
        remove { listener in
            guard case .proc(let other, let otherData) = listener.callback else { return false }
            return listener.object == object && Self.same(listener.address, address)
                && unsafeBitCast(other, to: UnsafeRawPointer.self) == unsafeBitCast(proc, to: UnsafeRawPointer.self) && otherData == data
        }
    }

    /// Removes the most recent block listener of the same object, address and queue (Swift
    /// closures cannot be compared, as Apple compares blocks).
    func removeBlock(_ object: AudioObjectID, _ address: AudioObjectPropertyAddress, queue: DispatchQueue?) -> Bool {
        remove { listener in
            guard case .block(_, let otherQueue) = listener.callback else { return false }
            return listener.object == object && Self.same(listener.address, address) && otherQueue === queue
        }
    }

    private func remove(where matches: (Listener) -> Bool) -> Bool {
        let (found, stop) = lock.withLock { () -> (Bool, JackClient?) in
            guard let index = listeners.lastIndex(where: matches) else { return (false, nil) }
            listeners.remove(at: index)
            guard listeners.isEmpty else { return (true, nil) }
            watching = false
            defer { client = nil }
            return (true, client)
        }
        stop?.close()
        return found
    }

    private static func same(_ a: AudioObjectPropertyAddress, _ b: AudioObjectPropertyAddress) -> Bool {
        a.mSelector == b.mSelector && a.mScope == b.mScope && a.mElement == b.mElement
    }

    /// Opens the watching client, or, with no server, keeps trying every 0.25 s while anyone listens.
    private func connect() {
        guard lock.withLock({ watching }) else { return }
        let server = DeviceEnvironment.current().server
        guard let opened = try? JackClient(name: "aqjack-hal-watch-\(getpid())", server: server) else {
            lock.withLock { if wasUp == nil { wasUp = false } }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.25) { [self] in connect() }
            return
        }
        // The watcher is the process's one (``shared``), never freed: its handlers hold it.
        opened.notifications.onShutdown { [self] _ in
            // On JACK's thread: the client is closed and reopened on another.
            DispatchQueue.global().async { [self] in serverWentAway() }
        }
        opened.notifications.onSampleRateChange { [self] rate in changed(rate: rate, period: nil) }
        opened.notifications.onBufferSizeChange { [self] frames in changed(rate: nil, period: frames) }
        try? opened.notifications.onPortConnect { [self] from, to, _ in connectionChanged(from, to) }
        let capture = Set(opened.portNames(direction: .output, physicalOnly: true, audioOnly: true))
        let playback = Set(opened.portNames(direction: .input, physicalOnly: true, audioOnly: true))
        do { try opened.activate() } catch {
            opened.close()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.25) { [self] in connect() }
            return
        }
        let (keep, cameBack) = lock.withLock { () -> (Bool, Bool) in
            guard watching else { return (false, false) }
            let wasDown = wasUp == false
            wasUp = true
            client = opened
            clientServer = server
            physical = (capture, playback)
            sampleRate = opened.sampleRate
            bufferSize = opened.bufferSize
            return (true, wasDown)
        }
        guard keep else {
            opened.close()
            return
        }
        if cameBack { announceLiveness() }
    }

    /// Whether the server was up when last looked at (nil before the first look): an open after
    /// a look that found none announces the server's return.
    private var wasUp: Bool?

    private func serverWentAway() {
        let old = lock.withLock { () -> JackClient? in
            defer {
                client = nil
                sampleRate = nil
                bufferSize = nil
                wasUp = false
            }
            return client
        }
        old?.close()
        announceLiveness()
        connect()
    }

    /// The server as the watching client sees it now, when one is open on `server`: what a
    /// property read takes instead of opening a client of its own (nil: none is watching).
    func liveSnapshot(server: String?) -> HardwareDevice.Snapshot? {
        lock.withLock {
            guard let client, clientServer == server, !client.notifications.hasShutDown.load(ordering: .acquiring) else { return nil }
            return HardwareDevice.Snapshot(client)
        }
    }

    /// The server went or came: the devices' liveness, the device list and the defaults.
    private func announceLiveness() {
        for device in HardwareDevice.allCases { notify(device.rawValue, kAudioDevicePropertyDeviceIsAlive) }
        for selector in [kAudioHardwarePropertyDevices, kAudioHardwarePropertyDefaultInputDevice,
                         kAudioHardwarePropertyDefaultOutputDevice, kAudioHardwarePropertyDefaultSystemOutputDevice] {
            notify(kAudioObjectSystemObject, selector)
        }
    }

    private func changed(rate: Int?, period: Int?) {
        let (rateChanged, periodChanged) = lock.withLock { () -> (Bool, Bool) in
            var result = (false, false)
            if let rate, sampleRate != nil, rate != sampleRate { result.0 = true }
            if let period, bufferSize != nil, period != bufferSize { result.1 = true }
            if let rate, sampleRate != nil { sampleRate = rate }
            if let period, bufferSize != nil { bufferSize = period }
            return result
        }
        for device in HardwareDevice.allCases {
            if rateChanged { notify(device.rawValue, kAudioDevicePropertyNominalSampleRate) }
            if periodChanged { notify(device.rawValue, kAudioDevicePropertyBufferFrameSize) }
        }
    }

    /// A connection was made or broken: the devices whose physical ports it touches announce
    /// their data source.
    private func connectionChanged(_ from: String, _ to: String) {
        let ports = lock.withLock { physical }
        if ports.capture.contains(from) || ports.capture.contains(to) { notify(HardwareDevice.capture.rawValue, kAudioDevicePropertyDataSource) }
        if ports.playback.contains(from) || ports.playback.contains(to) { notify(HardwareDevice.playback.rawValue, kAudioDevicePropertyDataSource) }
    }

    /// Calls every listener of `selector` on `object` (scope and element wildcards match).
    private func notify(_ object: AudioObjectID, _ selector: AudioObjectPropertySelector) {
        let matching = lock.withLock { listeners.filter { $0.object == object && $0.address.mSelector == selector } }
        for listener in matching {
            let address = AudioObjectPropertyAddress(mSelector: selector, mScope: listener.address.mScope, mElement: listener.address.mElement)
            switch listener.callback {
            case .proc(let proc, let data):
                nonisolated(unsafe) let data = data
                calls.async {
                    var copy = address
                    _ = proc(object, 1, &copy, data)
                }
            case .block(let block, let queue):
                nonisolated(unsafe) let block = block
                (queue ?? calls).async {
                    var copy = address
                    block(1, &copy)
                }
            }
        }
    }
}

/// `AudioObjectAddPropertyListener`: `inListener` is called with `inClientData` when the property
/// changes: the devices' `DeviceIsAlive`, `NominalSampleRate`, `BufferFrameSize` and
/// `DataSource` (a connection to or from their physical ports); the system
/// object's `Devices` and default devices. Others answer `kAudioHardwareUnknownPropertyError`.
@discardableResult
public func AudioObjectAddPropertyListener(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                           _ inListener: AudioObjectPropertyListenerProc, _ inClientData: UnsafeMutableRawPointer?) -> OSStatus {
    let status = HardwareWatcher.check(inObjectID, inAddress.pointee)
    guard status == noErr else { return status }
    HardwareWatcher.shared.add(inObjectID, inAddress.pointee, proc: inListener, data: inClientData)
    return noErr
}

/// `AudioObjectRemovePropertyListener`: the listener added with the same object, address, proc
/// and client data; `kAudioHardwareUnknownPropertyError` when there is none.
@discardableResult
public func AudioObjectRemovePropertyListener(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                              _ inListener: AudioObjectPropertyListenerProc, _ inClientData: UnsafeMutableRawPointer?) -> OSStatus {
    HardwareWatcher.shared.removeProc(inObjectID, inAddress.pointee, proc: inListener, data: inClientData) ? noErr : kAudioHardwareUnknownPropertyError
}

/// `AudioObjectAddPropertyListenerBlock`: as ``AudioObjectAddPropertyListener(_:_:_:_:)``, the
/// block called on `inDispatchQueue` (nil: a queue of the HAL watcher's).
@discardableResult
public func AudioObjectAddPropertyListenerBlock(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                                _ inDispatchQueue: DispatchQueue?, _ inListener: @escaping AudioObjectPropertyListenerBlock) -> OSStatus {
    let status = HardwareWatcher.check(inObjectID, inAddress.pointee)
    guard status == noErr else { return status }
    HardwareWatcher.shared.add(inObjectID, inAddress.pointee, block: inListener, queue: inDispatchQueue)
    return noErr
}

/// `AudioObjectRemovePropertyListenerBlock`: removes the most recent block listener of the same
/// object, address and queue. Swift closures cannot be compared as Apple compares blocks, so the
/// block passed is not looked at (docs/PORTING.md).
@discardableResult
public func AudioObjectRemovePropertyListenerBlock(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                                   _ inDispatchQueue: DispatchQueue?, _ inListener: @escaping AudioObjectPropertyListenerBlock) -> OSStatus {
    HardwareWatcher.shared.removeBlock(inObjectID, inAddress.pointee, queue: inDispatchQueue) ? noErr : kAudioHardwareUnknownPropertyError
}
