import AQJack
import AQMedia

enum Help {
    static let version = "0.1.0"

    static let usage = """
    aqjack: Apple's Audio Queue Services on the JACK audio server.

    Usage:
      aqjack [--server NAME] [--name CLIENT] --ports [PATTERN] [--json] [--input|--output]
                                                      [--physical] [--type audio|midi|any]
      aqjack ports ...          the same as --ports
      aqjack [--server NAME] [--name CLIENT] record [-p PORT_OR_GLOB]... [-c CHANNELS]
             [-f wav|w64|rf64|aiff|aifc|caf] [-b 16|24|32|float|double] [-r RATE]
             [--src-quality best|medium|fastest] [-d SECONDS] [--start-at FRAME]
             [--force] [--meter|--no-meter] [--json] FILE
      aqjack [--server NAME] [--name CLIENT] play [-p DEST_PORT_OR_GLOB]... [--no-connect]
             [--volume 0..1] [--loop N|inf] [--start-at FRAME] [--json] FILE...
      aqjack --help | -h        this text
      aqjack --version | -V     version and library versions

    Options for every subcommand:
      --server NAME, -s NAME    JACK server to use (default: $JACK_DEFAULT_SERVER, else 'default').
                                aqjack never starts a server.
      --name CLIENT, -n CLIENT  JACK client name (default: aqjack).

    --ports lists every port of the graph: direction, physical/terminal flags, type, latency
    ranges (frames), pretty-name, aliases and connections. PATTERN is a regular expression
    searched in the port's full name, aliases and pretty-name (e.g. 'system:' or 'capture_[12]$').
    --json prints the documented JSON shape (see README, "aqjack --ports --json").

    record registers CLIENT:in_1..N, connects the matched output ports (default: the physical
    capture ports) in natural order before the first recorded frame, and records through the
    input queue until -d SECONDS, Ctrl-C, SIGTERM or the server's shutdown, finalizing FILE every
    time. The type follows the extension unless -f says otherwise; -b defaults to float (24 for
    AIFF); -r other than the server's rate resamples (libsamplerate). Frames the recorder lost
    are written as silence so the file stays aligned with the JACK timeline, and counted. WAVE
    files carry the first frame's JACK frame time as their BWF TimeReference. An existing FILE
    is refused unless --force.

    play registers CLIENT:out_1..N (the files' channel count), connects them to the physical
    playback ports (or the -p ports, in natural order; none with --no-connect), plays the files
    in order through the output queue, shows elapsed/total and underruns on a terminal, and
    exits 0 once the last frame has played; Ctrl-C stops at once (exit 130), SIGTERM too (143),
    the server's shutdown exits 1.

    Exit status: 0 ok, 1 runtime failure (e.g. no JACK server), 2 usage error.
    """

    static var versionText: String {
        "aqjack \(version) (libjack \(JackServer.libraryVersion), \(MediaLibraries.sndfileVersion), "
            + "\(MediaLibraries.samplerateVersion))"
    }
}
