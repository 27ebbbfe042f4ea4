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

    Exit status: 0 ok, 1 runtime failure (e.g. no JACK server), 2 usage error.
    """

    static var versionText: String {
        "aqjack \(version) (libjack \(JackServer.libraryVersion), \(MediaLibraries.sndfileVersion), "
            + "\(MediaLibraries.samplerateVersion))"
    }
}
