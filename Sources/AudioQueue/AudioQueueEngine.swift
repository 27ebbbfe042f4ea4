import AQCodecs
import AQCore
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
    /// The device the queue runs on: a JACK client, or an ``OfflineDriver`` its caller clocks.
    var driver: any AudioDriver { get }
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
    /// Which way the queue's own channels go: `.input` for a recording queue, `.output` for playback.
    var channelDirection: AudioChannelDirection { get }

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
        (Double(extendFrame(driver.estimatedFrameTime)), driver.microseconds * 1000)
    }

    /// Extends a 32-bit JACK frame time near now to 64 bits, using the latest cycle's.
    public func extendFrame(_ frame: UInt32) -> UInt64 {
        FrameTimeExtender.extend(frame, near: latestCycleEndFrame)
    }

    /// Host time (ns) of a device frame on JACK's clock (`AudioQueueDeviceTranslateTime`).
    public func hostNanoseconds(atDeviceFrame frame: Double) -> UInt64 {
        let whole = UInt32(truncatingIfNeeded: UInt64(frame))
        let fraction = frame - frame.rounded(.down)
        return driver.microseconds(atFrame: whole) * 1000 + UInt64(fraction * 1e9 / Double(driver.sampleRate))
    }

    /// The device frame at a host time (ns).
    public func deviceFrame(atHostNanoseconds nanoseconds: UInt64) -> Double {
        Double(extendFrame(driver.frame(atMicroseconds: nanoseconds / 1000)))
    }

    /// The earliest device frame a start can be scheduled at: the cycle after next
    /// (`AudioQueueDeviceGetNearestStartTime`).
    public func nearestStartFrame() -> UInt64 { latestCycleEndFrame + UInt64(driver.bufferSize) }

    /// Sets each channel's peer from a device and a channel number
    /// (`kAudioQueueProperty_ChannelAssignments`): `device` is a full JACK port name, or a JACK
    /// client whose `channel`-th audio port (1-based, in the server's order) facing the queue
    /// (its outputs for a recording queue, its inputs for playback) is the peer.
    ///
    /// - Throws: `kAudioQueueErr_InvalidPropertyValue` naming an assignment no port answers.
    public func assignChannels(_ assignments: [(device: String, channel: Int)]) throws(AudioQueueError) {
        let peers = (driver as? any AudioRouting)?.audioPortNames(direction: channelDirection == .input ? .output : .input) ?? []
        var ports: [String] = []
        for (device, channel) in assignments {
            if peers.contains(device) {
                ports.append(device)
                continue
            }
            let devicePorts = peers.filter { $0.hasPrefix(device + ":") }
            guard channel >= 1, channel <= devicePorts.count else {
                throw AudioQueueError(AudioQueueError.invalidPropertyValueCode,
                                      "channel \(channel) of '\(device)': it has \(devicePorts.count) audio ports facing the queue")
            }
            ports.append(devicePorts[channel - 1])
        }
        assignChannels(to: ports)
    }
}

extension AudioInputQueue: AudioQueueEngine {
    public var latestCycleEndFrame: UInt64 { processor.nextCycleFrameTime }
    public var discontinuityTotal: Int { discontinuityCount }
    public func assignChannels(to ports: [String]) { channelSources = ports }
    public var channelDirection: AudioChannelDirection { .input }
    public var currentSampleTime: Double {
        guard let start = recordingStartFrame, isRunning else { return 0 }
        // The start frame is compensated for latency (when asked): so is the device's now.
        let now = deviceCurrentTime().frame - Double(latencyCompensationFrames)
        return max(0, (now - start) * format.mSampleRate / Double(driver.sampleRate))
    }
}

extension AudioOutputQueue: AudioQueueEngine {
    public var latestCycleEndFrame: UInt64 { processor.nextCycleFrame.load(ordering: .relaxed) }
    public var discontinuityTotal: Int { underrunEventCount }
    public func assignChannels(to ports: [String]) { channelDestinations = ports }
    public var channelDirection: AudioChannelDirection { .output }
}

/// The set-up both queue directions share: connecting channels to a device, starting the
/// processor. On failure the driver is closed and
/// the error says what was wrong.
enum QueueDevice {
    /// Connects each of `channels` (full names, in channel order) with its peer: `explicit[i]`
    /// when given, else the i-th audio port of the device `deviceName` that faces the other way
    /// (its outputs for a recording queue, its inputs for a playback queue). A driver without a
    /// graph (offline) connects nothing.
    /// - Returns: the last connection made now (its channel's index and the peer's full name), or
    ///   nil when every one existed already.
    static func connect(_ channels: [String], direction: AudioChannelDirection, on driver: any AudioDriver,
                        deviceName: String, explicit: [String]?) throws(AudioQueueError) -> MadeConnection? {
        guard let graph = driver as? any AudioRouting else { return nil }
        let recording = direction == .input
        let peers: [String]
        if let explicit {
            peers = explicit
        } else {
            peers = graph.audioPortNames(direction: recording ? .output : .input).filter { $0.hasPrefix(deviceName + ":") }
            guard !peers.isEmpty else {
                throw AudioQueueError(AudioQueueError.invalidDeviceCode,
                                      "no JACK client '\(deviceName)' with audio \(recording ? "output" : "input") ports on server '\(graph.serverName)'; `aqjack --ports` lists them")
            }
        }
        // No connection is looked up first: jack_connect answers EEXIST for one that exists. (A
        // query after a graph change sleeps 1.1 periods in libjack, its WaitGraphChange, until
        // the server has taken the change; docs/MEASUREMENTS.md.)
        var last: MadeConnection?
        for (index, (channel, peer)) in zip(channels, peers).enumerated() {
            do {
                if try recording ? graph.connect(peer, to: channel) : graph.connect(channel, to: peer) {
                    last = MadeConnection(channel: index, peer: peer)
                }
            } catch {
                throw AudioQueueError(AudioQueueError.cannotStartCode, "\(error)")
            }
        }
        return last
    }

    /// A connection a start made: the queue's channel (its port's index) and the peer port.
    struct MadeConnection {
        var channel: Int
        var peer: String
    }

    /// The first JACK frame sure to carry connections made just now, given `nextCycleFrame`,
    /// the start of the cycle after the latest one the queue's processor ran in.
    ///
    /// The server takes new connections at the start of the first cycle after they are made.
    /// When a cycle has begun without the processor having run in it yet, `nextCycleFrame` is
    /// that begun cycle, which may still have the old graph: one period later is the first cycle
    /// sure to have every new connection, so all channels start there together.
    ///
    /// Sure only when the cycle before it finished in time: JACK2 switches in a new graph only
    /// after a finished cycle. So a start that made connections lets its process thread find the
    /// first cycle whose graph has them instead (AQCore's `ConnectionWait`), at the latest
    /// ``latestFrameForNewConnections(nextCycleFrame:on:)``.
    static func firstFrameWithNewConnections(nextCycleFrame: UInt64, on driver: any AudioDriver) -> UInt64 {
        nextCycleFrame + UInt64(driver.bufferSize)
    }

    /// The latest frame a start that waits for its connection may begin at, given the same
    /// `nextCycleFrame`: 8 periods after ``firstFrameWithNewConnections(nextCycleFrame:on:)``, for
    /// a graph switch that late cycles held back; only a connection removed before it came into
    /// the graph waits them out.
    static func latestFrameForNewConnections(nextCycleFrame: UInt64, on driver: any AudioDriver) -> UInt64 {
        firstFrameWithNewConnections(nextCycleFrame: nextCycleFrame, on: driver) + 8 * UInt64(driver.bufferSize)
    }

    /// Starts `processor` on `driver`, closing the driver when that fails.
    static func start<Processor: RealtimeProcessor>(_ processor: Processor, on driver: any AudioDriver) throws(AudioQueueError) {
        do {
            try driver.start(processor: processor)
        } catch {
            driver.close()
            throw AudioQueueError(AudioQueueError.invalidDeviceCode, "\(error)")
        }
    }
}
