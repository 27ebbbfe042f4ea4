/// Which way a driver channel carries frames, seen from the queue: `.input` brings frames in
/// (a recording queue's channels), `.output` takes them out (a playback queue's).
public enum AudioChannelDirection: Sendable {
    case input, output
}

/// What a named channel carries: frames of sound; frames of control voltage (a plugin's CV port:
/// on JACK an audio port marked with the signal-type metadata "CV", which patchbays keep away
/// from speakers); or MIDI events.
public enum ChannelKind: Sendable {
    case audio, controlVoltage, midi
}

/// What went wrong in a driver call, in words that name the device and the cause.
public struct AudioDriverError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A device that runs a ``RealtimeProcessor`` once per cycle and keeps the frame clock the
/// queues stamp their buffers with.
///
/// Two implementations: `JackDriver` (AQJack: a JACK client, cycles on JACK's process thread)
/// and ``OfflineDriver`` (cycles on the caller's thread, when the caller asks for them: no
/// server, no threads, deterministic).
///
/// Threads: every member may be called from any thread except where noted; none of them may be
/// called on the process thread.
public protocol AudioDriver: AnyObject, Sendable {
    /// The device's name as others see it (JACK: the client name; channel names start with it).
    var name: String { get }
    /// Frames per second of the frame clock.
    var sampleRate: Int { get }
    /// Frames per cycle (JACK's period); the largest cycle a processor is given.
    var bufferSize: Int { get }

    /// The frame clock now, 32 bits, wrapping (JACK: `jack_frame_time`, an estimate between
    /// cycles; offline: the first frame of the next cycle).
    var estimatedFrameTime: UInt32 { get }
    /// The clock's time now, microseconds (JACK: `jack_get_time`; offline: derived from frames).
    var microseconds: UInt64 { get }
    /// The time (µs) at which `frame` starts, and the frame at a time, on this clock.
    func microseconds(atFrame frame: UInt32) -> UInt64
    func frame(atMicroseconds micros: UInt64) -> UInt32

    /// Makes `count` channels `<name>:<prefix>1 ...` facing `direction` and returns their full
    /// names. Channels are given to the processor in the order made, inputs and outputs apart.
    func makeChannels(prefix: String, count: Int, direction: AudioChannelDirection) throws(AudioDriverError) -> [String]
    /// Makes one channel per name, `<name>:<channel name>`, facing `direction`, and returns their
    /// full names: audio and control-voltage channels join the processor's channels after those
    /// made so far; MIDI ones are the cycle's ``ProcessCycle/midiInputs`` or
    /// ``ProcessCycle/midiOutputs`` in the order made (a plugin host names its channels after the
    /// plugin's port symbols).
    /// - Throws: a name the device refuses (taken, too long), or a device running.
    func makeChannels(named names: [String], direction: AudioChannelDirection, kind: ChannelKind) throws(AudioDriverError) -> [String]
    /// Marks audio channel `name` (a full name this driver made) as carrying audio or control
    /// voltage (`.audio` or `.controlVoltage`), as what it carries changes: on JACK, sets or
    /// removes its signal-type metadata "CV", which patchbays read; offline, where no one looks,
    /// nothing. Not on the process thread.
    func markChannel(_ name: String, as kind: ChannelKind) throws(AudioDriverError)
    /// Starts calling `processor` once per cycle with the channels made so far. The driver keeps
    /// it alive until ``stop()`` or ``close()``.
    func start<Processor: RealtimeProcessor>(processor: Processor) throws(AudioDriverError)
    /// Stops the cycles; when this returns the processor is not called any more.
    func stop()
    /// Stops and releases the device. Idempotent.
    func close()

    /// Whether the device has gone away (JACK: the server shut down or threw the client out).
    var hasShutDown: Bool { get }
    /// Cycles the device reported missing or late (JACK: xruns; offline: frames skipped on purpose).
    var xrunCount: Int { get }
    /// Whether cycles run only inside a caller's call (offline): then no cycle is ever in flight
    /// while the queue thread looks, and waits for one are skipped.
    var isClockedByCaller: Bool { get }

    // MARK: Events

    /// Whether cycles have no deadline now (JACK: the server freewheels, the next cycle starts
    /// once every client has returned), so a processor may wait for its reader instead of
    /// dropping frames. A caller-clocked driver answers false: its cycles run on the caller's
    /// thread, which must not wait for a queue thread that waits for the same call to return.
    var isFreewheeling: Bool { get }
    /// Adds a handler called with the new state each time ``isFreewheeling`` changes, on a thread
    /// of the driver's that is not the process thread (JACK: its notification thread).
    func onFreewheelChange(_ handler: @escaping @Sendable (Bool) -> Void)

    /// The latency (frames, smallest ... largest over the paths to the channel) of each channel
    /// facing `direction`, in the order made: for `.input` the capture latency of what feeds it,
    /// for `.output` the playback latency after it. Zero on a device without a graph (offline).
    func channelLatencies(direction: AudioChannelDirection) -> [ClosedRange<Int>]
    /// Tells the device the latency its processor adds from its input channels to its output
    /// channels, frames (a plugin's look-ahead): JACK adds it to what its ports report, so every
    /// client downstream sees it; offline, ``processingLatency`` says it. Not on the process thread.
    func publishProcessingLatency(_ frames: Int)
    /// The latency last published (``publishProcessingLatency(_:)``), frames.
    var processingLatency: Int { get }

    /// Adds a handler called at the end of every run a caller-clocked driver makes (on the
    /// caller's thread, before the call returns), so a queue finishes its work on the frames
    /// first. A driver with its own clock (JACK) never calls it: its queues wake on cycles.
    func onRunEnd(_ handler: @escaping @Sendable () -> Void)
    /// A caller-clocked driver runs one cycle of 0 frames, so the processor takes its control
    /// requests (a discard, a stop) now; the clock stays. A driver with its own clock does
    /// nothing: its next cycle comes by itself.
    func settle()
}

/// A driver whose channels sit in a graph of other devices' ports (JACK), so a queue connects
/// its channels to a named device or to explicit ports when it starts.
public protocol AudioRouting: AnyObject, Sendable {
    /// The server the graph belongs to, for messages.
    var serverName: String { get }
    /// Full names of the audio ports in the graph that carry frames `direction`, from their
    /// owner's point of view (`.output`: ports a recording queue can take frames from).
    func audioPortNames(direction: AudioChannelDirection) -> [String]
    /// The full names of the ports `port` is connected to.
    func connections(of port: String) -> [String]
    /// Connects an output port to an input port (full names); an existing connection counts as
    /// success. Returns whether the connection is new.
    @discardableResult
    func connect(_ source: String, to destination: String) throws(AudioDriverError) -> Bool
}

/// The transport as one read of it saw it: a timeline position shared by the device's clients,
/// which rolls (moves on with the frames), starts (waits for slow-sync clients,
/// ``TransportSyncing``) or stands still.
public struct TransportState: Sendable, Equatable {
    /// Whether the transport rolls.
    public let isRolling: Bool
    /// Whether it is starting (waiting for slow-sync clients) or rolling.
    public let isStartingOrRolling: Bool
    /// The transport frame.
    public let frame: UInt32

    public init(isRolling: Bool, isStartingOrRolling: Bool, frame: UInt32) {
        self.isRolling = isRolling
        self.isStartingOrRolling = isStartingOrRolling
        self.frame = frame
    }
}

/// A driver with a transport (JACK's; the offline driver's own): each cycle tells its processor
/// whether the transport rolls and at which transport frame (``ProcessCycle/transportRolling``,
/// ``ProcessCycle/transportFrame``), and a processor that is ``TransportSyncing`` holds a start
/// or a locate until it is ready to play from there. Requests take effect from the next cycle on.
public protocol AudioTransport: AnyObject, Sendable {
    /// The transport now. Any thread.
    var transportState: TransportState { get }
    /// Starts the transport rolling (after the slow-sync clients are ready).
    func startTransport()
    /// Stops the transport.
    func stopTransport()
    /// Moves the transport to `frame`; a rolling transport starts again from there.
    func locateTransport(to frame: UInt32) throws(AudioDriverError)
}
