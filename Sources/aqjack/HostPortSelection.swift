import AQJack

/// What `aqjack host -i GLOB ... -o GLOB ...` selects on the server, before anything is
/// connected: `-i` over JACK output ports (the audio ones feed the host's audio inputs in order,
/// the MIDI ones its MIDI input), `-o` over audio input ports. A glob that matches no port of
/// either kind is unmatched: the host exits 1 naming it.
struct HostPortSelection {
    let audioFrom: [String]
    let midiFrom: [String]
    let audioTo: [String]
    let unmatched: [String]

    init(sources: [String], destinations: [String], on client: JackClient) {
        let midiSources = client.portNames(direction: .output, midiOnly: true)
        let (audio, missingAudio) = PortMatching.select(sources, from: client.portNames(direction: .output, audioOnly: true))
        let (to, missingTo) = PortMatching.select(destinations, from: client.portNames(direction: .input, audioOnly: true))
        audioFrom = audio
        midiFrom = PortMatching.select(sources, from: midiSources).0
        audioTo = to
        unmatched = missingAudio.filter { pattern in !midiSources.contains { PortMatching.matches(pattern, $0) } } + missingTo
    }

    /// The error line for the unmatched globs.
    func message(server: String) -> String {
        "no JACK port matches \(unmatched.map { "'\($0)'" }.joined(separator: ", ")) on server '\(server)'; `aqjack --ports` lists them"
    }
}
