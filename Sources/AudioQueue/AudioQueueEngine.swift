import AQCodecs
import AQJack
import AQMedia
import CAudioTypes

/// The latest device frame a start can be scheduled at: 2^53, the last frame an
/// AudioTimeStamp's Float64 `mSampleTime` still counts one by one. Later (or non-finite) start
/// times are refused, never converted (`AudioQueueStart`, `aqjack --start-at`).
public let latestStartFrame: UInt64 = 1 << 53

/// What recording and playback queues have in common: the surface the Apple spelling drives
/// without caring which direction a queue goes.
public protocol AudioQueueEngine: AnyObject, Sendable {
    var format: AudioStreamBasicDescription { get }
    var layout: LinearPCMLayout { get }
    var client: JackClient { get }
    var isRunning: Bool { get }
    var currentDevice: String { get set }
    var onRunningChange: (@Sendable (Bool) -> Void)? { get set }
    /// The queue's position in the format's rate since the latest start (`AudioQueueGetCurrentTime`).
    var currentSampleTime: Double { get }
    /// Gaps in the queue's timeline so far (underruns, overruns, xruns).
    var discontinuityTotal: Int { get }
    /// The frame time at which the next cycle starts, as of the latest cycle.
    var latestCycleEndFrame: UInt64 { get }
    /// Sets the JACK port each channel is connected to (`ChannelAssignments`).
    func assignChannels(to ports: [String])

    func allocateBuffer(byteCapacity: Int, packetDescriptionCapacity: Int) throws(AudioQueueError) -> AudioQueueBufferRef
    func freeBuffer(_ buffer: AudioQueueBufferRef) throws(AudioQueueError)
    func start(atFrame startFrame: UInt64?) throws(AudioQueueError)
    func stop(immediate: Bool)
    func pause()
    func flush()
    func reset()
    func dispose()
}

extension AudioQueueEngine {
    /// The device's current frame (JACK's estimate, extended to 64 bits) and host time (ns).
    ///
    /// The corresponding Apple function is `AudioQueueDeviceGetCurrentTime`.
    public func deviceCurrentTime() -> (frame: Double, hostNanoseconds: UInt64) {
        (Double(extendFrame(client.estimatedFrameTime)), client.microseconds * 1000)
    }

    /// Extends a 32-bit JACK frame time near now to 64 bits, using the latest cycle's.
    public func extendFrame(_ frame: UInt32) -> UInt64 {
        let reference = latestCycleEndFrame
        let delta = Int64(Int32(bitPattern: frame &- UInt32(truncatingIfNeeded: reference)))
        return UInt64(max(0, Int64(reference) + delta))
    }

    /// Host time (ns) of a device frame on JACK's clock (`AudioQueueDeviceTranslateTime`).
    public func hostNanoseconds(atDeviceFrame frame: Double) -> UInt64 {
        let whole = UInt32(truncatingIfNeeded: UInt64(frame))
        let fraction = frame - frame.rounded(.down)
        return client.microseconds(atFrame: whole) * 1000 + UInt64(fraction * 1e9 / Double(client.sampleRate))
    }

    /// The device frame at a host time (ns).
    public func deviceFrame(atHostNanoseconds nanoseconds: UInt64) -> Double {
        Double(extendFrame(client.frame(atMicroseconds: nanoseconds / 1000)))
    }

    /// The earliest device frame a start can be scheduled at: the cycle after next
    /// (`AudioQueueDeviceGetNearestStartTime`).
    public func nearestStartFrame() -> UInt64 { latestCycleEndFrame + UInt64(client.bufferSize) }
}

extension AudioInputQueue: AudioQueueEngine {
    public var latestCycleEndFrame: UInt64 { processor.nextCycleFrameTime }
    public var discontinuityTotal: Int { discontinuityCount.load(ordering: .relaxed) }
    public func assignChannels(to ports: [String]) { channelSources = ports }
    public var currentSampleTime: Double {
        guard let start = recordingStartFrame, isRunning else { return 0 }
        return max(0, (deviceCurrentTime().frame - start) * format.mSampleRate / Double(client.sampleRate))
    }
}

extension AudioOutputQueue: AudioQueueEngine {
    public var latestCycleEndFrame: UInt64 { processor.nextCycleFrame.load(ordering: .relaxed) }
    public var discontinuityTotal: Int { underrunEventCount }
    public func assignChannels(to ports: [String]) { channelDestinations = ports }
}

/// The set-up both queue directions share: opening the JACK client, and on it checking the
/// format, resolving a rate of 0 and registering one port per channel. On failure the client is
/// closed and the error says what was wrong.
enum QueueDevice {
    /// Checks `format` first (no client is opened for a bad one), then opens the client.
    static func openClient(format: AudioStreamBasicDescription, clientName: String, server: String?,
                           purpose: String) throws(AudioQueueError) -> JackClient {
        // Check the format before touching the server: linear PCM field by field; AAC as
        // FormatInfo completes it (its rate may still be 0, the server's).
        if format.mFormatID == CompressedFormatValues.mpeg4AAC {
            _ = try CompressedFormatValues.completedAAC(format)
        } else if format.mFormatID == CompressedFormatValues.appleLossless {
            // Checked by the queue itself.
        } else {
            _ = try LinearPCMLayout(validating: format)
        }
        do {
            return try JackClient(name: clientName, server: server)
        } catch {
            throw AudioQueueError(AudioQueueError.invalidDeviceCode, "cannot open the \(purpose) device: \(error)")
        }
    }

    /// Connects each of `ports` (in channel order) with its peer: `explicit[i]` when given, else
    /// the i-th audio port of the JACK client `deviceName` that faces the other way (its outputs
    /// for a recording queue, its inputs for a playback queue).
    /// - Returns: whether a new connection was made.
    static func connect(_ ports: [JackPort], on client: JackClient, deviceName: String, explicit: [String]?) throws(AudioQueueError) -> Bool {
        let recording = ports.first?.direction == .input
        let peers: [String]
        if let explicit {
            peers = explicit
        } else {
            peers = client.portNames(direction: recording ? .output : .input, audioOnly: true).filter { $0.hasPrefix(deviceName + ":") }
            guard !peers.isEmpty else {
                throw AudioQueueError(AudioQueueError.invalidDeviceCode,
                                      "no JACK client '\(deviceName)' with audio \(recording ? "output" : "input") ports on server '\(client.serverName)'; `aqjack --ports` lists them")
            }
        }
        var made = false
        for (port, peer) in zip(ports, peers) where !port.connections.contains(peer) {
            do {
                if recording { try client.connect(peer, to: port.name) } else { try client.connect(port.name, to: peer) }
                made = true
            } catch {
                throw AudioQueueError(AudioQueueError.cannotStartCode, "\(error)")
            }
        }
        return made
    }

    static func prepare(format: AudioStreamBasicDescription, client: JackClient, portPrefix: String,
                        direction: JackPortDirection) throws(AudioQueueError) -> (AudioStreamBasicDescription, LinearPCMLayout, [JackPort]) {
        let layout: LinearPCMLayout
        do {
            layout = try LinearPCMLayout(validating: format)
        } catch {
            client.close()
            throw error
        }
        var resolved = format
        if resolved.mSampleRate == 0 { resolved.mSampleRate = Double(client.sampleRate) }
        do {
            let ports = try client.registerPorts(prefix: portPrefix, count: layout.channelCount, direction: direction)
            return (resolved, layout, ports)
        } catch {
            client.close()
            throw AudioQueueError(AudioQueueError.invalidDeviceCode, "\(error)")
        }
    }
}
