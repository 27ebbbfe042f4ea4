import AudioToolbox
import Foundation

// The session's route on JACK: the server's physical capture ports are its one input (a line
// input), its physical playback ports its one output (a line output), each channel a port,
// read from the HAL (the default devices, their UIDs and channel element names) when asked.

extension AVAudioSession {
    /// `AVAudioSession.Port`: a port type, Apple's raw strings.
    public struct Port: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let lineIn = Port(rawValue: "LineIn")
        public static let builtInMic = Port(rawValue: "MicrophoneBuiltIn")
        public static let headsetMic = Port(rawValue: "MicrophoneWired")
        public static let lineOut = Port(rawValue: "LineOut")
        public static let headphones = Port(rawValue: "Headphones")
        public static let bluetoothA2DP = Port(rawValue: "BluetoothA2DPOutput")
        public static let builtInReceiver = Port(rawValue: "Receiver")
        public static let builtInSpeaker = Port(rawValue: "Speaker")
        public static let HDMI = Port(rawValue: "HDMIOutput")
        public static let airPlay = Port(rawValue: "AirPlay")
        public static let bluetoothLE = Port(rawValue: "BluetoothLEOutput")
        public static let bluetoothHFP = Port(rawValue: "BluetoothHFP")
        public static let usbAudio = Port(rawValue: "USBAudio")
        public static let carAudio = Port(rawValue: "CarAudio")
    }

    /// The route now: the physical capture ports as one `.lineIn` input and the physical
    /// playback ports as one `.lineOut` output (none of either when the server has none, or no
    /// server runs).
    public var currentRoute: AVAudioSessionRouteDescription {
        AVAudioSessionRouteDescription(inputs: Self.port(input: true).map { [$0] } ?? [], outputs: Self.port(input: false).map { [$0] } ?? [])
    }

    /// The inputs a session could use: the physical capture ports, as one `.lineIn` port; nil
    /// with no server (as Apple's answers before the session can tell).
    public var availableInputs: [AVAudioSessionPortDescription]? {
        guard Self.deviceValue(kAudioDevicePropertyDeviceIsAlive, as: UInt32.self) == 1 else { return nil }
        return Self.port(input: true).map { [$0] } ?? []
    }

    /// What ``setPreferredInput(_:)`` kept (nil: none).
    public var preferredInput: AVAudioSessionPortDescription? { lock.withLock { preferredInputPort } }

    /// Keeps `port` as the preferred input when it is one of ``availableInputs`` (compared by
    /// UID), or nil to clear it. JACK has one input, so the route does not change.
    ///
    /// - Throws: an `NSOSStatusErrorDomain` error with `kAudio_ParamError` (-50) for a port that
    ///   is not an available input.
    public func setPreferredInput(_ port: AVAudioSessionPortDescription?) throws {
        if let port, !(availableInputs ?? []).contains(where: { $0.uid == port.uid }) {
            throw NSError(domain: NSOSStatusErrorDomain, code: Int(kAudio_ParamError),
                          userInfo: [NSLocalizedDescriptionKey: "'\(port.portName)' (\(port.uid)) is not an available input; the inputs are the server's physical capture ports"])
        }
        lock.withLock { preferredInputPort = port }
    }

    /// The port of the default input or output device, with a channel per physical port; nil
    /// when the device has no channels or no server runs.
    static func port(input: Bool) -> AVAudioSessionPortDescription? {
        let count = channels(input: input)
        guard count > 0, let uid = deviceString(kAudioDevicePropertyDeviceUID, input: input),
              let name = deviceString(kAudioObjectPropertyName, input: input) else { return nil }
        let scope = input ? kAudioObjectPropertyScopeInput : kAudioObjectPropertyScopeOutput
        let channels = (1 ... count).map { number in
            AVAudioSessionChannelDescription(channelName: deviceString(kAudioObjectPropertyElementName, input: input, scope: scope, element: UInt32(number)) ?? "\(number)",
                                             owningPortUID: uid, channelNumber: number)
        }
        return AVAudioSessionPortDescription(portType: input ? .lineIn : .lineOut, portName: name, uid: uid, channels: channels)
    }

    /// A string property of the default input or output device, or nil.
    static func deviceString(_ selector: AudioObjectPropertySelector, input: Bool, scope: AudioObjectPropertyScope = kAudioObjectPropertyScopeGlobal,
                             element: AudioObjectPropertyElement = kAudioObjectPropertyElementMain) -> String? {
        var address = AudioObjectPropertyAddress(mSelector: selector, mScope: scope, mElement: element)
        var value = "" as CFString
        var size = UInt32(MemoryLayout<CFString>.size)
        let status = withUnsafeMutablePointer(to: &value) { AudioObjectGetPropertyData(input ? 2 : 3, &address, 0, nil, &size, UnsafeMutableRawPointer($0)) }
        guard status == noErr else { return nil }
        return value as String
    }
}

/// `AVAudioSessionRouteDescription`: the inputs and outputs of a route.
open class AVAudioSessionRouteDescription: NSObject, @unchecked Sendable {
    public let inputs: [AVAudioSessionPortDescription]
    public let outputs: [AVAudioSessionPortDescription]
    init(inputs: [AVAudioSessionPortDescription], outputs: [AVAudioSessionPortDescription]) {
        self.inputs = inputs
        self.outputs = outputs
    }
}

/// `AVAudioSessionPortDescription`: one port of a route (here the server's physical capture
/// or playback ports together; the UID is the JACK client that owns them, `system` for a
/// hardware backend).
open class AVAudioSessionPortDescription: NSObject, @unchecked Sendable {
    public let portType: AVAudioSession.Port
    public let portName: String
    public let uid: String
    public let channels: [AVAudioSessionChannelDescription]?
    public var hasHardwareVoiceCallProcessing: Bool { false }
    public var dataSources: [AnyObject]? { nil }
    init(portType: AVAudioSession.Port, portName: String, uid: String, channels: [AVAudioSessionChannelDescription]?) {
        self.portType = portType
        self.portName = portName
        self.uid = uid
        self.channels = channels
    }
}

/// `AVAudioSessionChannelDescription`: one channel of a port (here one JACK port, named in full).
open class AVAudioSessionChannelDescription: NSObject, @unchecked Sendable {
    public let channelName: String
    public let owningPortUID: String
    /// 1 ... N, as Apple numbers them.
    public let channelNumber: Int
    /// `kAudioChannelLabel_Unknown` (0xFFFFFFFF): JACK ports carry no label.
    public var channelLabel: UInt32 { 0xFFFF_FFFF }
    init(channelName: String, owningPortUID: String, channelNumber: Int) {
        self.channelName = channelName
        self.owningPortUID = owningPortUID
        self.channelNumber = channelNumber
    }
}
