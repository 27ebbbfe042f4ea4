@_exported import AudioToolbox
import Dispatch
import Foundation

/// `AVAudioSession` on JACK: the calls a ported recorder or player makes, answered from the JACK
/// server the queues use (`AQJACK_SERVER`, else `$JACK_DEFAULT_SERVER`), through the HAL
/// (`AudioObjectGetPropertyData` on the default devices).
///
/// - Category, mode and options (`setCategory`, `setMode`) are accepted and kept: JACK has no
///   policy to apply them to. `setActive(true)` fails when no server runs.
/// - `sampleRate`, `ioBufferDuration`, `inputNumberOfChannels` and `outputNumberOfChannels` are
///   the server's rate, period and physical capture and playback ports, read when asked. The
///   preferred values are kept and answered, but the server's stay what they are (its rate and
///   period are set when jackd starts, or with `jack_bufsize`).
/// - The route (`currentRoute`, `availableInputs`, `setPreferredInput`) is the server's
///   physical ports, one line input and one line output (AVAudioSessionRoute.swift).
/// - Record permission is granted.
/// - `interruptionNotification` is posted (`NotificationCenter.default`, on the HAL watcher's
///   queue) with `.began` when the server goes away and `.ended` with `.shouldResume` when it
///   comes back, from the HAL's `DeviceIsAlive` listener, while the session is active;
///   `routeChangeNotification` with `.routeConfigurationChange` when a connection to or from
///   the server's physical ports is made or broken (the HAL's `DataSource` listeners).
///
/// Threads: any.
open class AVAudioSession: NSObject, @unchecked Sendable {
    public struct Category: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public static let ambient = Category("AVAudioSessionCategoryAmbient")
        public static let soloAmbient = Category("AVAudioSessionCategorySoloAmbient")
        public static let playback = Category("AVAudioSessionCategoryPlayback")
        public static let record = Category("AVAudioSessionCategoryRecord")
        public static let playAndRecord = Category("AVAudioSessionCategoryPlayAndRecord")
        public static let multiRoute = Category("AVAudioSessionCategoryMultiRoute")
    }

    public struct Mode: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public static let `default` = Mode("AVAudioSessionModeDefault")
        public static let voiceChat = Mode("AVAudioSessionModeVoiceChat")
        public static let gameChat = Mode("AVAudioSessionModeGameChat")
        public static let videoRecording = Mode("AVAudioSessionModeVideoRecording")
        public static let measurement = Mode("AVAudioSessionModeMeasurement")
        public static let moviePlayback = Mode("AVAudioSessionModeMoviePlayback")
        public static let videoChat = Mode("AVAudioSessionModeVideoChat")
        public static let spokenAudio = Mode("AVAudioSessionModeSpokenAudio")
        public static let voicePrompt = Mode("AVAudioSessionModeVoicePrompt")
    }

    public struct CategoryOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let mixWithOthers = CategoryOptions(rawValue: 0x1)
        public static let duckOthers = CategoryOptions(rawValue: 0x2)
        public static let allowBluetooth = CategoryOptions(rawValue: 0x4)
        public static let defaultToSpeaker = CategoryOptions(rawValue: 0x8)
        public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 0x11)
        public static let allowBluetoothA2DP = CategoryOptions(rawValue: 0x20)
        public static let allowAirPlay = CategoryOptions(rawValue: 0x40)
        public static let overrideMutedMicrophoneInterruption = CategoryOptions(rawValue: 0x80)
    }

    public struct SetActiveOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
    }

    public enum InterruptionType: UInt, Sendable {
        case began = 1
        case ended = 0
    }

    public struct InterruptionOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let shouldResume = InterruptionOptions(rawValue: 1)
    }

    public enum RouteChangeReason: UInt, Sendable {
        case unknown = 0
        case newDeviceAvailable = 1
        case oldDeviceUnavailable = 2
        case categoryChange = 3
        case override = 4
        case wakeFromSleep = 6
        case noSuitableRouteForCategory = 7
        case routeConfigurationChange = 8
    }

    public enum RecordPermission: UInt, Sendable {
        case undetermined = 0x756E_6474   // 'undt'
        case denied = 0x6465_6E79         // 'deny'
        case granted = 0x6772_6E74        // 'grnt'
    }

    public static let interruptionNotification = Notification.Name("AVAudioSessionInterruptionNotification")
    public static let routeChangeNotification = Notification.Name("AVAudioSessionRouteChangeNotification")
    public static let mediaServicesWereResetNotification = Notification.Name("AVAudioSessionMediaServicesWereResetNotification")

    private static let shared = AVAudioSession()

    /// The process's session.
    open class func sharedInstance() -> AVAudioSession { shared }

    let lock = NSLock()
    /// What setPreferredInput kept (AVAudioSessionRoute.swift).
    var preferredInputPort: AVAudioSessionPortDescription?
    private var state = (category: Category.soloAmbient, mode: Mode.default, options: CategoryOptions(), active: false,
                         preferredSampleRate: 0.0, preferredIOBufferDuration: 0.0, preferredInput: 0, preferredOutput: 0)
    private var watching = false

    override private init() {}

    open var category: Category { lock.withLock { state.category } }
    open var mode: Mode { lock.withLock { state.mode } }
    open var categoryOptions: CategoryOptions { lock.withLock { state.options } }

    open func setCategory(_ category: Category) throws { lock.withLock { state.category = category } }
    open func setCategory(_ category: Category, options: CategoryOptions = []) throws {
        lock.withLock { (state.category, state.options) = (category, options) }
    }
    open func setCategory(_ category: Category, mode: Mode, options: CategoryOptions = []) throws {
        lock.withLock { (state.category, state.mode, state.options) = (category, mode, options) }
    }
    open func setMode(_ mode: Mode) throws { lock.withLock { state.mode = mode } }

    /// Activates the session: the server must be running (else an `NSOSStatusErrorDomain` error
    /// with `kAudioHardwareNotRunningError`); from then on its going away and coming back are
    /// posted as interruptions.
    open func setActive(_ active: Bool, options: SetActiveOptions = []) throws {
        if active {
            guard Self.deviceValue(kAudioDevicePropertyDeviceIsAlive, as: UInt32.self) == 1 else {
                throw NSError(domain: NSOSStatusErrorDomain, code: Int(kAudioHardwareNotRunningError),
                              userInfo: [NSLocalizedDescriptionKey: "no JACK server is running (start jackd, or set AQJACK_SERVER to a running one)"])
            }
        }
        let startWatching = lock.withLock { () -> Bool in
            state.active = active
            defer { watching = watching || active }
            return active && !watching
        }
        if startWatching { watchServer() }
    }

    /// Interruptions from the HAL's DeviceIsAlive listener on the default output device, route
    /// changes from the DataSource listeners of both devices.
    private func watchServer() {
        var address = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyDeviceIsAlive, mScope: kAudioObjectPropertyScopeGlobal,
                                                 mElement: kAudioObjectPropertyElementMain)
        let device: AudioObjectID = 3
        AudioObjectAddPropertyListenerBlock(device, &address, nil) { [self] _, _ in
            guard lock.withLock({ state.active }) else { return }
            let alive = Self.deviceValue(kAudioDevicePropertyDeviceIsAlive, as: UInt32.self) == 1
            var info: [AnyHashable: Any] = [AVAudioSessionInterruptionTypeKey: (alive ? InterruptionType.ended : .began).rawValue]
            if alive { info[AVAudioSessionInterruptionOptionKey] = InterruptionOptions.shouldResume.rawValue }
            NotificationCenter.default.post(name: Self.interruptionNotification, object: self, userInfo: info)
        }
        address.mSelector = kAudioDevicePropertyDataSource
        for route: AudioObjectID in [2, 3] {
            AudioObjectAddPropertyListenerBlock(route, &address, nil) { [self] _, _ in
                guard lock.withLock({ state.active }) else { return }
                NotificationCenter.default.post(name: Self.routeChangeNotification, object: self,
                                                userInfo: [AVAudioSessionRouteChangeReasonKey: RouteChangeReason.routeConfigurationChange.rawValue])
            }
        }
    }

    /// A device property of the default output device (the system's default input device for
    /// the input side), or nil when the HAL has none.
    static func deviceValue<T>(_ selector: AudioObjectPropertySelector, as type: T.Type, input: Bool = false,
                                       scope: AudioObjectPropertyScope = kAudioObjectPropertyScopeGlobal) -> T? {
        var address = AudioObjectPropertyAddress(mSelector: selector, mScope: scope, mElement: kAudioObjectPropertyElementMain)
        let device: AudioObjectID = input ? 2 : 3
        let value = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
        defer { value.deallocate() }
        var size = UInt32(MemoryLayout<T>.size)
        guard AudioObjectGetPropertyData(device, &address, 0, nil, &size, value) == noErr else { return nil }
        return value.load(as: T.self)
    }

    /// Channels of the device's one stream (its physical ports), 0 without a server.
    static func channels(input: Bool) -> Int {
        var address = AudioObjectPropertyAddress(mSelector: kAudioDevicePropertyStreamConfiguration,
                                                 mScope: input ? kAudioObjectPropertyScopeInput : kAudioObjectPropertyScopeOutput,
                                                 mElement: kAudioObjectPropertyElementMain)
        var size: UInt32 = 0
        let device: AudioObjectID = input ? 2 : 3
        guard AudioObjectGetPropertyDataSize(device, &address, 0, nil, &size) == noErr, size >= 8 else { return 0 }
        let list = UnsafeMutableRawPointer.allocate(byteCount: Int(size), alignment: 8)
        defer { list.deallocate() }
        guard AudioObjectGetPropertyData(device, &address, 0, nil, &size, list) == noErr else { return 0 }
        let buffers = list.load(as: UInt32.self)
        return buffers == 0 ? 0 : Int(list.load(fromByteOffset: 8, as: UInt32.self))
    }

    /// The server's rate, Hz (0 with no server).
    open var sampleRate: Double { Self.deviceValue(kAudioDevicePropertyNominalSampleRate, as: Double.self) ?? 0 }
    /// The server's period, seconds (0 with no server).
    open var ioBufferDuration: TimeInterval {
        guard let frames = Self.deviceValue(kAudioDevicePropertyBufferFrameSize, as: UInt32.self), sampleRate > 0 else { return 0 }
        return Double(frames) / sampleRate
    }
    open var inputNumberOfChannels: Int { Self.channels(input: true) }
    open var outputNumberOfChannels: Int { Self.channels(input: false) }
    open var maximumInputNumberOfChannels: Int { inputNumberOfChannels }
    open var maximumOutputNumberOfChannels: Int { outputNumberOfChannels }
    open var isInputAvailable: Bool { inputNumberOfChannels > 0 }

    open var preferredSampleRate: Double { lock.withLock { state.preferredSampleRate } }
    open var preferredIOBufferDuration: TimeInterval { lock.withLock { state.preferredIOBufferDuration } }
    open var preferredInputNumberOfChannels: Int { lock.withLock { state.preferredInput } }
    open var preferredOutputNumberOfChannels: Int { lock.withLock { state.preferredOutput } }
    /// Kept and answered by ``preferredSampleRate``; the server's rate does not change.
    open func setPreferredSampleRate(_ sampleRate: Double) throws { lock.withLock { state.preferredSampleRate = sampleRate } }
    /// Kept and answered by ``preferredIOBufferDuration``; the server's period does not change.
    open func setPreferredIOBufferDuration(_ duration: TimeInterval) throws { lock.withLock { state.preferredIOBufferDuration = duration } }
    open func setPreferredInputNumberOfChannels(_ count: Int) throws { lock.withLock { state.preferredInput = count } }
    open func setPreferredOutputNumberOfChannels(_ count: Int) throws { lock.withLock { state.preferredOutput = count } }

    /// Latency of the server's physical ports would be JACK's; one period each way here.
    open var inputLatency: TimeInterval { ioBufferDuration }
    open var outputLatency: TimeInterval { ioBufferDuration }

    open var recordPermission: RecordPermission { .granted }
    /// Calls `response` with `true`, on another thread, as iOS answers an app already allowed.
    open func requestRecordPermission(_ response: @escaping @Sendable (Bool) -> Void) {
        DispatchQueue.global().async { response(true) }
    }
    open var isOtherAudioPlaying: Bool { false }
    open var secondaryAudioShouldBeSilencedHint: Bool { false }
}

/// `AVAudioSessionInterruptionTypeKey`: an `AVAudioSession.InterruptionType` raw value.
public let AVAudioSessionInterruptionTypeKey = "AVAudioSessionInterruptionTypeKey"
/// `AVAudioSessionInterruptionOptionKey`: `AVAudioSession.InterruptionOptions` raw value.
public let AVAudioSessionInterruptionOptionKey = "AVAudioSessionInterruptionOptionKey"
/// `AVAudioSessionRouteChangeReasonKey`.
public let AVAudioSessionRouteChangeReasonKey = "AVAudioSessionRouteChangeReasonKey"
