import AQCore
import AQJack
import AudioQueue
import Foundation

/// The device an unchanged Apple program's queues use, chosen by the environment: on macOS the
/// user picks the default device in Audio MIDI Setup; here a session script sets
///
/// - `AQJACK_SERVER`: the JACK server (else `$JACK_DEFAULT_SERVER`, else `default`);
/// - `AQJACK_CLIENT_NAME`: the queues' JACK client name (else `aqjack`; JACK appends `-01` ...
///   to a name already taken);
/// - `AQJACK_CONNECT`: port globs, separated by spaces or commas. A recording queue connects
///   its `in_N` to the N-th JACK *output* port the globs match (in the globs' order, each
///   glob's ports in the graph's order), a playback queue its `out_N` to the N-th matching
///   *input* port, so one list can name both, e.g. `'gen:out_* system:playback_*'`. Unset, the
///   queues take the physical ports (`system`) as before.
///
/// Connections chosen here are the queue's own, made at its start before its first frame
/// (as `kAudioQueueProperty_ChannelAssignments` are): an outside connector racing the start
/// loses frames (768 measured with a 50 ms poller); this does not.
///
/// Read once per queue, when it is made (`AudioQueueNewInput`, `AudioQueueNewOutput` and their
/// dispatch-queue forms). The Swift-native queues take these as arguments instead.
struct DeviceEnvironment {
    let server: String?
    let clientName: String
    let connect: [String]

    /// The variables as they are now; an empty variable counts as unset.
    static func current() -> DeviceEnvironment {
        func value(_ name: String) -> String? {
            guard let raw = getenv(name) else { return nil }
            let text = String(cString: raw)
            return text.isEmpty ? nil : text
        }
        let globs = value("AQJACK_CONNECT")?.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) ?? []
        return DeviceEnvironment(server: value("AQJACK_SERVER"), clientName: value("AQJACK_CLIENT_NAME") ?? "aqjack", connect: globs)
    }

    /// The peers `AQJACK_CONNECT` names for the new queue `engine` on `driver`, whose channels
    /// face `direction` (`.input`: a recording queue, which takes from output ports), in channel
    /// order; nil when the variable is unset or the driver has no graph.
    /// - Throws: `kAudioQueueErr_InvalidDevice` for a list that matches no port of that
    ///   direction, after saying why on standard error (an unchanged program has only the
    ///   OSStatus) and disposing of `engine`.
    func peers(for engine: any AudioQueueEngine, on driver: any AudioDriver, queueDirection direction: AudioChannelDirection) throws(AudioQueueError) -> [String]? {
        do throws(DeviceEnvironmentError) {
            return try peers(on: driver, queueDirection: direction)
        } catch {
            engine.dispose()
            FileHandle.standardError.write(Data("aqjack: \(error.message)\n".utf8))
            throw AudioQueueError(AudioQueueError.invalidDeviceCode, error.message)
        }
    }

    private func peers(on driver: any AudioDriver, queueDirection direction: AudioChannelDirection) throws(DeviceEnvironmentError) -> [String]? {
        guard !connect.isEmpty, let graph = driver as? any AudioRouting else { return nil }
        let candidates = graph.audioPortNames(direction: direction == .input ? .output : .input)
        let chosen = PortMatching.select(connect, from: candidates).selected
        guard !chosen.isEmpty else {
            throw DeviceEnvironmentError(message: "AQJACK_CONNECT '\(connect.joined(separator: " "))' matches no JACK \(direction == .input ? "output" : "input") port on server '\(graph.serverName)' for this \(direction == .input ? "recording" : "playback") queue; `aqjack --ports` lists them")
        }
        return chosen
    }
}

/// Why the environment's device could not be used.
struct DeviceEnvironmentError: Error {
    let message: String
}
