import AQJack

/// What `aqjack host -i GLOB ... -o GLOB ...` selects on the server, before anything is
/// connected: `-i` over JACK output ports (the audio ones feed the host's audio inputs in order,
/// the MIDI ones its MIDI input), `-o` over JACK input ports (the audio ones fed by the host's
/// audio outputs in order, the MIDI ones by its first MIDI output). A glob that matches no port
/// of either kind is unmatched: the host exits 1 naming it.
struct HostPortSelection {
    let audioFrom: [String]
    let midiFrom: [String]
    let audioTo: [String]
    let midiTo: [String]
    let unmatched: [String]

    init(sources: [String], destinations: [String], on client: JackClient) {
        let midiSources = client.portNames(direction: .output, midiOnly: true)
        let (audio, missingAudio) = PortMatching.select(sources, from: client.portNames(direction: .output, audioOnly: true))
        let midiDestinations = client.portNames(direction: .input, midiOnly: true)
        let (to, missingTo) = PortMatching.select(destinations, from: client.portNames(direction: .input, audioOnly: true))
        audioFrom = audio
        midiFrom = PortMatching.select(sources, from: midiSources).0
        audioTo = to
        midiTo = PortMatching.select(destinations, from: midiDestinations).0
        unmatched = missingAudio.filter { pattern in !midiSources.contains { PortMatching.matches(pattern, $0) } }
            + missingTo.filter { pattern in !midiDestinations.contains { PortMatching.matches(pattern, $0) } }
    }

    /// The error line for the unmatched globs.
    func message(server: String) -> String {
        "no JACK port matches \(unmatched.map { "'\($0)'" }.joined(separator: ", ")) on server '\(server)'; `aqjack --ports` lists them"
    }
}
