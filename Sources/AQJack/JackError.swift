import AQCore
import CJack

/// The status bits `jack_client_open` reports (`jack_status_t`), with what each means.
public struct JackStatus: OptionSet, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let failure = JackStatus(rawValue: JackFailure.rawValue)
    public static let invalidOption = JackStatus(rawValue: JackInvalidOption.rawValue)
    public static let nameNotUnique = JackStatus(rawValue: JackNameNotUnique.rawValue)
    public static let serverStarted = JackStatus(rawValue: JackServerStarted.rawValue)
    public static let serverFailed = JackStatus(rawValue: JackServerFailed.rawValue)
    public static let serverError = JackStatus(rawValue: JackServerError.rawValue)
    public static let noSuchClient = JackStatus(rawValue: JackNoSuchClient.rawValue)
    public static let loadFailure = JackStatus(rawValue: JackLoadFailure.rawValue)
    public static let initFailure = JackStatus(rawValue: JackInitFailure.rawValue)
    public static let shmFailure = JackStatus(rawValue: JackShmFailure.rawValue)
    public static let versionError = JackStatus(rawValue: JackVersionError.rawValue)
    public static let backendError = JackStatus(rawValue: JackBackendError.rawValue)
    public static let clientZombie = JackStatus(rawValue: JackClientZombie.rawValue)

    /// Each bit set, with its meaning (jack/types.h), e.g. `0x11 (JackFailure: overall operation failed; ...)`.
    public var description: String {
        let meanings: [(JackStatus, String)] = [
            (.failure, "JackFailure: overall operation failed"),
            (.invalidOption, "JackInvalidOption: the operation contained an invalid or unsupported option"),
            (.nameNotUnique, "JackNameNotUnique: the desired client name was not unique"),
            (.serverStarted, "JackServerStarted: the JACK server was started for this client"),
            (.serverFailed, "JackServerFailed: unable to connect to the JACK server"),
            (.serverError, "JackServerError: communication error with the JACK server"),
            (.noSuchClient, "JackNoSuchClient: requested client does not exist"),
            (.loadFailure, "JackLoadFailure: unable to load internal client"),
            (.initFailure, "JackInitFailure: unable to initialize client"),
            (.shmFailure, "JackShmFailure: unable to access shared memory"),
            (.versionError, "JackVersionError: client's protocol version does not match the server's"),
            (.backendError, "JackBackendError: the server's backend failed"),
            (.clientZombie, "JackClientZombie: the client was zombified by the server"),
        ]
        let set = meanings.filter { contains($0.0) }.map(\.1)
        let hex = "0x" + String(rawValue, radix: 16)
        return set.isEmpty ? hex : "\(hex) (\(set.joined(separator: "; ")))"
    }
}

/// Errors from the JACK client wrapper. Each message names what was tried and what to do.
public enum JackError: AudioStatusCarrying, Equatable {
    /// No JACK server of that name is running (the client never starts one).
    case serverNotRunning(server: String, status: JackStatus)
    /// The server refused or failed the client for another reason.
    case openFailed(server: String, client: String, status: JackStatus)
    /// `jack_port_register` failed (name taken, too long, or the server's port limit reached).
    case portRegistrationFailed(port: String)
    /// `jack_connect` / `jack_disconnect` failed.
    case connectionFailed(source: String, destination: String, connect: Bool, code: Int32)
    /// No port of that name exists.
    case noSuchPort(String)
    /// A call that JACK refused, with its return code.
    case callFailed(function: String, code: Int32)
    /// A call that is only valid in another state (e.g. changing ports while active).
    case invalidState(String)
    /// A server or client name libjack cannot take (too long, or empty), refused before any
    /// libjack call: `what` is "server" or "client".
    case invalidName(what: String, name: String, limit: Int)

    public var description: String {
        switch self {
        case let .serverNotRunning(server, status):
            return "no JACK server named '\(server)' is running (status \(status)). "
                + "Start one, e.g. `jackd -n \(server) -d dummy -r 48000 -p 256` (no sound card needed) "
                + "or `jackd -n \(server) -d alsa`, or choose another with --server NAME / JACK_DEFAULT_SERVER."
        case let .openFailed(server, client, status):
            return "JACK server '\(server)' refused client '\(client)': status \(status). "
                + "Is a client of that name already connected? (--name chooses another)"
        case let .portRegistrationFailed(port):
            return "could not register JACK port '\(port)': the name may be taken or too long, "
                + "or the server's port limit (jackd -p before -d) is reached"
        case let .connectionFailed(source, destination, connect, code):
            return "could not \(connect ? "connect" : "disconnect") '\(source)' \(connect ? "to" : "from") '\(destination)' "
                + "(JACK returned \(code)); the source must be an output port and the destination an input port of the same type"
        case let .noSuchPort(name):
            return "no JACK port named '\(name)'; `aqjack --ports` lists them"
        case let .callFailed(function, code):
            return "\(function) failed with code \(code)"
        case let .invalidState(message):
            return message
        case let .invalidName(what, name, limit):
            return "the JACK \(what) name '\(name.prefix(80))\(name.count > 80 ? "..." : "")' is \(name.utf8.count) bytes: expected 1 ... \(limit)"
        }
    }

    /// The `OSStatus` Apple's queue answers for the same failure: no server or no such port is
    /// `kAudioQueueErr_InvalidDevice` (-66680, the device is the JACK graph), a call in the wrong
    /// state `kAudioQueueErr_InvalidRunState` (-66678), anything else JACK refused
    /// `kAudioQueueErr_CannotStart` (-66681).
    public var status: Int32 {
        switch self {
        case .serverNotRunning, .openFailed, .noSuchPort, .invalidName: -66680
        case .invalidState: -66678
        case .portRegistrationFailed, .connectionFailed, .callFailed: -66681
        }
    }

    public var message: String { description }
}
