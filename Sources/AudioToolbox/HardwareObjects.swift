import AQJack
import Foundation

// The Core Audio HAL calls Apple programs make to ask about the default device
// (`AudioObjectGetPropertyData` and AudioToolbox's older `AudioHardwareServiceGetPropertyData`),
// answered from the JACK graph: the system object (1) has two devices, the JACK server's
// physical capture ports (the default input device, 2) and its physical playback ports (the
// default output device, 3). Each question about a device opens a short-lived JACK client on
// the server the queues use (`AQJACK_SERVER`, else `$JACK_DEFAULT_SERVER`: ``DeviceEnvironment``)
// and answers what JACK says now; with no server running, the default devices are
// `kAudioObjectUnknown`, `DeviceIsAlive` is 0 and other device questions answer
// `kAudioHardwareNotRunningError`. Listeners: HardwareListeners.swift.
// Nothing can be set: the rate and period belong to the server (`kAudioHardwareIllegalOperationError`).

public typealias AudioObjectID = UInt32
public typealias AudioDeviceID = AudioObjectID
public typealias AudioObjectPropertySelector = UInt32
public typealias AudioObjectPropertyScope = UInt32
public typealias AudioObjectPropertyElement = UInt32

public let kAudioObjectUnknown: AudioObjectID = 0
public let kAudioObjectSystemObject: AudioObjectID = 1

public let kAudioObjectPropertyScopeGlobal: AudioObjectPropertyScope = 0x676C_6F62    // 'glob'
public let kAudioObjectPropertyScopeInput: AudioObjectPropertyScope = 0x696E_7074     // 'inpt'
public let kAudioObjectPropertyScopeOutput: AudioObjectPropertyScope = 0x6F75_7470    // 'outp'
public let kAudioObjectPropertyScopeWildcard: AudioObjectPropertyScope = 0x2A2A_2A2A  // '****'
public let kAudioDevicePropertyScopeInput = kAudioObjectPropertyScopeInput
public let kAudioDevicePropertyScopeOutput = kAudioObjectPropertyScopeOutput
public let kAudioObjectPropertyElementMain: AudioObjectPropertyElement = 0
public let kAudioObjectPropertyElementMaster: AudioObjectPropertyElement = 0

public let kAudioHardwarePropertyDevices: AudioObjectPropertySelector = 0x6465_7623               // 'dev#'
public let kAudioHardwarePropertyDefaultInputDevice: AudioObjectPropertySelector = 0x6449_6E20    // 'dIn '
public let kAudioHardwarePropertyDefaultOutputDevice: AudioObjectPropertySelector = 0x644F_7574   // 'dOut'
public let kAudioHardwarePropertyDefaultSystemOutputDevice: AudioObjectPropertySelector = 0x734F_7574 // 'sOut'
public let kAudioObjectPropertyName: AudioObjectPropertySelector = 0x6C6E_616D                    // 'lnam'
public let kAudioObjectPropertyManufacturer: AudioObjectPropertySelector = 0x6C6D_616B            // 'lmak'
public let kAudioDevicePropertyDeviceUID: AudioObjectPropertySelector = 0x7569_6420               // 'uid '
/// A channel's name (element 1 ... N in the device's scope): here the JACK port's full name.
public let kAudioObjectPropertyElementName: AudioObjectPropertySelector = 0x6C63_686E           // 'lchn'
public let kAudioDevicePropertyNominalSampleRate: AudioObjectPropertySelector = 0x6E73_7274       // 'nsrt'
public let kAudioDevicePropertyAvailableNominalSampleRates: AudioObjectPropertySelector = 0x6E73_7223 // 'nsr#'
public let kAudioDevicePropertyStreamConfiguration: AudioObjectPropertySelector = 0x736C_6179     // 'slay'
public let kAudioDevicePropertyBufferFrameSize: AudioObjectPropertySelector = 0x6673_697A         // 'fsiz'
public let kAudioDevicePropertyDeviceIsAlive: AudioObjectPropertySelector = 0x6C69_766E           // 'livn'
public let kAudioDevicePropertyDataSource: AudioObjectPropertySelector = 0x7373_7263               // 'ssrc'
/// The one data source of a JACK device: its physical ports, wherever they are connected.
let jackDataSourceID: UInt32 = 0x6A61_636B                                                          // 'jack'

public let kAudioHardwareNoError: OSStatus = 0
public let kAudioHardwareNotRunningError: OSStatus = 0x7374_6F70            // 'stop'
public let kAudioHardwareUnspecifiedError: OSStatus = 0x7768_6174           // 'what'
public let kAudioHardwareUnknownPropertyError: OSStatus = 0x7768_6F3F       // 'who?'
public let kAudioHardwareBadPropertySizeError: OSStatus = 0x2173_697A       // '!siz'
public let kAudioHardwareIllegalOperationError: OSStatus = 0x6E6F_7065      // 'nope'
public let kAudioHardwareBadObjectError: OSStatus = 0x216F_626A             // '!obj'
public let kAudioHardwareBadDeviceError: OSStatus = 0x2164_6576             // '!dev'
public let kAudioHardwareUnsupportedOperationError: OSStatus = 0x756E_6F70  // 'unop'

/// The two devices and what JACK says about them.
enum HardwareDevice: AudioDeviceID, CaseIterable {
    /// The physical capture ports (JACK output ports: the default input device).
    case capture = 2
    /// The physical playback ports (JACK input ports: the default output device).
    case playback = 3

    /// A look at the server, taken now.
    struct Snapshot {
        let serverName: String
        let sampleRate: Double
        let bufferSize: UInt32
        /// Physical audio ports: capture (JACK outputs) and playback (JACK inputs).
        let capturePorts: [String]
        let playbackPorts: [String]

        /// What `client` sees of its server now.
        init(_ client: JackClient) {
            serverName = client.serverName
            sampleRate = Double(client.sampleRate)
            bufferSize = UInt32(client.bufferSize)
            capturePorts = client.portNames(direction: .output, physicalOnly: true, audioOnly: true)
            playbackPorts = client.portNames(direction: .input, physicalOnly: true, audioOnly: true)
        }
    }

    /// The queues' server now, nil when none runs: read by the property listeners' client
    /// while one watches that server (no client comes and goes per read, so a program that
    /// polls a property at a meter's rate leaves the patchbay alone), else by a client opened
    /// for the read and closed after it.
    static func snapshot() -> Snapshot? {
        let environment = DeviceEnvironment.current()
        if let live = HardwareWatcher.shared.liveSnapshot(server: environment.server) { return live }
        guard let client = try? JackClient(name: "aqjack-hal", server: environment.server) else { return nil }
        defer { client.close() }
        return Snapshot(client)
    }

    func ports(_ snapshot: Snapshot) -> [String] { self == .capture ? snapshot.capturePorts : snapshot.playbackPorts }

    /// The JACK client that owns the ports (`system` for a hardware backend): the name a queue's
    /// `kAudioQueueProperty_CurrentDevice` takes, as a device UID does on Apple platforms.
    func uid(_ snapshot: Snapshot) -> String {
        ports(snapshot).first.map { String($0.split(separator: ":", maxSplits: 1).first ?? "") } ?? "system"
    }

    func name(_ snapshot: Snapshot) -> String {
        "JACK '\(snapshot.serverName)' \(self == .capture ? "capture" : "playback")"
    }

    /// Channels in `scope`: the device's ports in its own direction, none in the other.
    func channels(_ snapshot: Snapshot, scope: AudioObjectPropertyScope) -> Int {
        switch scope {
        case kAudioObjectPropertyScopeInput: self == .capture ? snapshot.capturePorts.count : 0
        case kAudioObjectPropertyScopeOutput: self == .playback ? snapshot.playbackPorts.count : 0
        default: ports(snapshot).count
        }
    }
}

/// A property value, ready to be copied out.
private enum PropertyValue {
    case bytes([UInt8])
    case string(String)

    static func of<T>(_ value: T) -> PropertyValue { .bytes(withUnsafeBytes(of: value) { Array($0) }) }
    static func array<T>(_ values: [T]) -> PropertyValue { .bytes(values.withUnsafeBytes { Array($0) }) }

    var size: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .string: MemoryLayout<CFString>.size
        }
    }
}

/// The value of `address` on `object`, or the status that says why there is none.
private func propertyValue(_ object: AudioObjectID, _ address: AudioObjectPropertyAddress) -> Result<PropertyValue, StatusOnly> {
    if object == kAudioObjectSystemObject {
        switch address.mSelector {
        case kAudioHardwarePropertyDefaultInputDevice, kAudioHardwarePropertyDefaultOutputDevice, kAudioHardwarePropertyDefaultSystemOutputDevice:
            guard let snapshot = HardwareDevice.snapshot() else { return .success(.of(kAudioObjectUnknown)) }
            let device: HardwareDevice = address.mSelector == kAudioHardwarePropertyDefaultInputDevice ? .capture : .playback
            return .success(.of(device.ports(snapshot).isEmpty ? kAudioObjectUnknown : device.rawValue))
        case kAudioHardwarePropertyDevices:
            guard HardwareDevice.snapshot() != nil else { return .success(.array([AudioDeviceID]())) }
            return .success(.array(HardwareDevice.allCases.map(\.rawValue)))
        default: return .failure(StatusOnly(kAudioHardwareUnknownPropertyError))
        }
    }
    guard let device = HardwareDevice(rawValue: object) else { return .failure(StatusOnly(kAudioHardwareBadObjectError)) }
    guard let snapshot = HardwareDevice.snapshot() else {
        // A device whose server has gone is not alive; nothing else can be said about it.
        if address.mSelector == kAudioDevicePropertyDeviceIsAlive { return .success(.of(UInt32(0))) }
        return .failure(StatusOnly(kAudioHardwareNotRunningError))
    }
    switch address.mSelector {
    case kAudioObjectPropertyName: return .success(.string(device.name(snapshot)))
    case kAudioObjectPropertyManufacturer: return .success(.string("JACK"))
    case kAudioDevicePropertyDeviceUID: return .success(.string(device.uid(snapshot)))
    case kAudioObjectPropertyElementName:
        // Channels are elements 1 ... N of the device's own scope (or global).
        let ports = device.channels(snapshot, scope: address.mScope) > 0 || address.mScope == kAudioObjectPropertyScopeGlobal ? device.ports(snapshot) : []
        guard address.mElement >= 1, Int(address.mElement) <= ports.count else { return .failure(StatusOnly(kAudioHardwareUnknownPropertyError)) }
        return .success(.string(ports[Int(address.mElement) - 1]))
    case kAudioDevicePropertyNominalSampleRate: return .success(.of(snapshot.sampleRate))
    case kAudioDevicePropertyAvailableNominalSampleRates:
        return .success(.of(AudioValueRange(mMinimum: snapshot.sampleRate, mMaximum: snapshot.sampleRate)))
    case kAudioDevicePropertyBufferFrameSize: return .success(.of(snapshot.bufferSize))
    case kAudioDevicePropertyDeviceIsAlive: return .success(.of(UInt32(1)))
    // Where the device's sound goes or comes from: what its physical ports are connected to,
    // announced to DataSource listeners when that changes (HardwareListeners.swift).
    case kAudioDevicePropertyDataSource: return .success(.of(jackDataSourceID))
    case kAudioDevicePropertyStreamConfiguration:
        // One stream holding every channel of the scope (none: an empty list).
        let channels = device.channels(snapshot, scope: address.mScope)
        var bytes = [UInt8](repeating: 0, count: AudioBufferList.sizeInBytes(maximumBuffers: 1))
        bytes.withUnsafeMutableBytes { raw in
            let list = raw.baseAddress!.assumingMemoryBound(to: AudioBufferList.self)
            list.pointee.mNumberBuffers = channels > 0 ? 1 : 0
            list.pointee.mBuffers.mNumberChannels = UInt32(channels)
        }
        return .success(.bytes(channels > 0 ? bytes : Array(bytes[0 ..< MemoryLayout<UInt32>.stride * 2])))
    default: return .failure(StatusOnly(kAudioHardwareUnknownPropertyError))
    }
}


/// Whether `inObjectID` has the property at `inAddress`.
public func AudioObjectHasProperty(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>) -> Bool {
    if case .success = propertyValue(inObjectID, inAddress.pointee) { return true }
    return false
}

/// Nothing can be set here (the server owns rate and period): `outIsSettable` is false.
@discardableResult
public func AudioObjectIsPropertySettable(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                          _ outIsSettable: UnsafeMutablePointer<DarwinBoolean>) -> OSStatus {
    switch propertyValue(inObjectID, inAddress.pointee) {
    case .success:
        outIsSettable.pointee = false
        return noErr
    case .failure(let failure): return failure.status
    }
}

/// The size in bytes of the property's value.
@discardableResult
public func AudioObjectGetPropertyDataSize(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                           _ inQualifierDataSize: UInt32, _ inQualifierData: UnsafeRawPointer?,
                                           _ outDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    switch propertyValue(inObjectID, inAddress.pointee) {
    case .success(let value):
        outDataSize.pointee = UInt32(value.size)
        return noErr
    case .failure(let failure): return failure.status
    }
}

/// Copies the property's value: `ioDataSize` in is the room, out the bytes written. Strings are
/// `CFString`s the caller owns (Apple: "the caller is responsible for releasing"; here ARC does).
@discardableResult
public func AudioObjectGetPropertyData(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                       _ inQualifierDataSize: UInt32, _ inQualifierData: UnsafeRawPointer?,
                                       _ ioDataSize: UnsafeMutablePointer<UInt32>, _ outData: UnsafeMutableRawPointer) -> OSStatus {
    switch propertyValue(inObjectID, inAddress.pointee) {
    case .failure(let failure): return failure.status
    case .success(.string(let text)):
        return storePropertyObject(text as CFString, into: outData, size: ioDataSize, tooSmall: kAudioHardwareBadPropertySizeError)
    case .success(.bytes(let bytes)):
        // Arrays (the device list) give as many whole elements as fit; fixed values must fit.
        let isList = inAddress.pointee.mSelector == kAudioHardwarePropertyDevices
        return storePropertyBytes(isList ? Array(bytes.prefix(Int(ioDataSize.pointee) / 4 * 4)) : bytes, into: outData,
                                  size: ioDataSize, mustFit: !isList, tooSmall: kAudioHardwareBadPropertySizeError)
    }
}

/// Nothing is settable: the rate and period are the JACK server's (`jackd -r`, `jack_bufsize`).
@discardableResult
public func AudioObjectSetPropertyData(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                       _ inQualifierDataSize: UInt32, _ inQualifierData: UnsafeRawPointer?,
                                       _ inDataSize: UInt32, _ inData: UnsafeRawPointer) -> OSStatus {
    switch propertyValue(inObjectID, inAddress.pointee) {
    case .failure(let failure): return failure.status
    case .success: return kAudioHardwareIllegalOperationError
    }
}

// AudioToolbox's AudioHardwareService names (macOS 10.5 ... 10.11), which the Learning Core
// Audio recorder uses for its sample-rate query: the same answers.

public func AudioHardwareServiceHasProperty(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>) -> Bool {
    AudioObjectHasProperty(inObjectID, inAddress)
}

@discardableResult
public func AudioHardwareServiceGetPropertyDataSize(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                                    _ inQualifierDataSize: UInt32, _ inQualifierData: UnsafeRawPointer?,
                                                    _ outDataSize: UnsafeMutablePointer<UInt32>) -> OSStatus {
    AudioObjectGetPropertyDataSize(inObjectID, inAddress, inQualifierDataSize, inQualifierData, outDataSize)
}

@discardableResult
public func AudioHardwareServiceGetPropertyData(_ inObjectID: AudioObjectID, _ inAddress: UnsafePointer<AudioObjectPropertyAddress>,
                                                _ inQualifierDataSize: UInt32, _ inQualifierData: UnsafeRawPointer?,
                                                _ ioDataSize: UnsafeMutablePointer<UInt32>, _ outData: UnsafeMutableRawPointer) -> OSStatus {
    AudioObjectGetPropertyData(inObjectID, inAddress, inQualifierDataSize, inQualifierData, ioDataSize, outData)
}
