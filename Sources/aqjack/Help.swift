import AQCodecs
import AQJack
import AQMedia

enum Help {
    static let version = "0.1.0"

    /// One subcommand's help: its synopsis and what it does.
    struct Topic {
        let name: String
        let synopsis: String
        let text: String
    }

    /// Every subcommand, in the order `aqjack --help` lists them.
    static let topics: [Topic] = [
        Topic(name: "demo", synopsis: """
              aqjack [--server NAME] [--name CLIENT] demo [-d SECONDS] [--force] [FILE]
            """, text: """
            demo plays a test signal through an output queue and records it back through an input
            queue connected by JACK, writes FILE (default aqjack-demo.wav, replaced on every run;
            another FILE is refused if it exists unless --force), checks every frame and the start
            frame, and prints a report with meters. With no JACK server running it starts a private
            dummy one, and says so.
            """),
        Topic(name: "ports", synopsis: """
              aqjack [--server NAME] [--name CLIENT] --ports [PATTERN] [--json] [--input|--output]
                                                              [--physical] [--type audio|midi|any]
              aqjack ports ...          the same as --ports
            """, text: """
            --ports lists every port of the graph: direction, physical/terminal flags, type, latency
            ranges (frames), pretty-name, aliases and connections. PATTERN is a regular expression
            searched in the port's full name, aliases and pretty-name (e.g. 'system:' or 'capture_[12]$').
            --json prints the documented JSON shape (docs/CLI.md, "aqjack --ports").
            """),
        Topic(name: "record", synopsis: """
              aqjack [--server NAME] [--name CLIENT] record [-p PORT_OR_GLOB]... [-c CHANNELS]
                     [-f wav|w64|rf64|aiff|aifc|caf|aac|m4a|mp4] [-b 16|24|32|float|double]
                     [--codec lpcm|aac|alac] [--bitrate BPS] [-q QUALITY] [-r RATE]
                     [--src-quality best|medium|fastest] [--resampler soxr|libsamplerate] [-d SECONDS] [--start-at FRAME]
                     [--split SECONDS | --split-size BYTES] [--on-file CMD] [--transport | --transport-multi]
                     [--trigger DBFS [--hold SECONDS] | --armed] [--pre-roll SECONDS] [--osc PORT [--osc-host ADDRESS] [--osc-token TOKEN]]
                     [--http [ADDRESS:]PORT [--http-token TOKEN | --http-token-file PATH]] [--events FILE|-]
                     [--silence-alarm DBFS SECONDS] [--min-free MINUTES] [--stems] [--name-format PATTERN] [--split-at PERIOD]
                     [--follow | --auto-connect] [--latency-offset FRAMES] [-m MIDI_PORT_OR_GLOB]...
                     [--description TEXT] [--originator NAME] [--originator-reference REF]
                     [--project NAME] [--scene NAME] [--take NAME] [--loudness]
                     [--plugin URI_OR_LABEL [--set SYMBOL=VALUE]... [--preset NAME]]... [--no-latency-compensation]
                     [--force] [--meter|--no-meter] [--json] FILE
            """, text: """
            record registers CLIENT:in_1..N, connects the matched output ports (default: the physical
            capture ports) in natural order before the first recorded frame, and records through the
            input queue until -d SECONDS, Ctrl-C, SIGTERM or the server's shutdown, finalizing FILE every
            time. The type follows the extension unless -f says otherwise; -b defaults to float (24 for
            AIFF); -r other than the server's rate resamples (soxr; --resampler libsamplerate). Frames the recorder lost
            are written as silence so the file stays aligned with the JACK timeline, and counted; files
            are written by the disk-writer thread, which holds 3 s of audio for a stalling disk. WAVE
            files carry the first frame's JACK frame time as their BWF TimeReference. An existing FILE
            is refused unless --force.

            record --codec aac (the default for .aac, .m4a and .mp4; CAF takes --codec aac) encodes
            AAC-LC on the queue thread (--bitrate, default 64 kbit/s per channel; -q Apple's 0..127
            codec quality). With -d the file holds exactly that many frames after the encoder's priming
            (CAF 'pakt', MPEG-4 edit list). A killed AAC recording keeps every packet in ADTS (.aac)
            and CAF (its packet table is updated in place, for the first ~46 minutes), and every
            complete one-second fragment in M4A/MP4.
            --codec alac records Apple Lossless (-b 16 or 24) to .m4a or .mp4.
            --split SECONDS (--split-size BYTES) writes NAME-001.ext, NAME-002.ext ... of that length,
            sample continuous; --on-file CMD runs CMD PATH for each finished file (JSON on its stdin).
            --transport waits while JACK's transport is stopped and records exactly the frames it rolls
            (TimeReference = the transport frame it rolled from), ending at the stop; --transport-multi
            writes NAME-001.ext ... one per roll (and per relocation while rolling) until Ctrl-C.
            --trigger DBFS records NAME-001.ext ... from the first frame at that peak level to --hold
            seconds (default 1) after the last; --armed starts and ends takes at each SIGUSR1;
            --pre-roll SECONDS starts each take that long before its trigger, from memory.
            --osc PORT (UDP on 127.0.0.1, or --osc-host; 0: any free port, noted) takes /aqjack/start,
            /stop, /split, /status, /quit and /subscribe (the session's events to the sender as
            /aqjack/event NAME JSON), alone or beside --trigger or --armed, from this user's
            sockets only; with --osc-token TOKEN (or AQJACK_OSC_TOKEN), required for any --osc-host but
            loopback, from whoever sends TOKEN as the first argument. A command repeated within one
            0.1 s buffer counts once; a take that holds no frame is removed. AAC and ALAC take all of
            these (not --split-size): each file is encoded by itself, its priming marked, exactly its frames.
            --http [ADDRESS:]PORT (127.0.0.1 unless an address is given; 0: any free port, noted) serves
            a page with live meters and the commands' buttons at /, the status as JSON at /status,
            Prometheus metrics at /metrics, a WebSocket /live pushing the status 20 times a second, and
            POST /control/VERB (stop; start, stop and split for takes). Any other address needs
            --http-token TOKEN (or --http-token-file PATH, or AQJACK_HTTP_TOKEN), which every request
            carries as Authorization: Bearer TOKEN or ?token=TOKEN (docs/WEB.md); GET /events streams
            the session's events (take started and finished, file closed, xrun, overrun, disk low,
            silence, sound, server shutdown) as Server-Sent Events, and --events FILE (- for standard
            output) writes them as one JSON object a line, with or without --http.
            --silence-alarm DBFS SECONDS warns (and posts the event silence) when every channel stays
            below DBFS that long, and notes when sound returns (the event sound); to within one 0.1 s
            buffer. The meter line and --json show the time the disk still holds at the data rate;
            aqjack warns once (disk-low) under 10 minutes, or under --min-free MINUTES, which also
            refuses to start (exit 1) a recording the disk holds less than that long.
            -m PORT_OR_GLOB records JACK MIDI ports to a Standard MIDI File beside each audio file
            (NAME.mid, a track per port, one tick a frame from the file's first frame; with --stems
            one named after the recording).
            --follow keeps what is connected to the inputs (a patchbay's choice) connected as its
            clients come and go; -p GLOB --auto-connect connects matching ports that appear later.
            --latency-offset FRAMES takes a source's unreported latency (a network bridge) out.
            --stems writes a mono file per channel, FILE with .NAME before its extension, NAME the
            source port's pretty-name or name (take.system_capture_1.wav), split and finalized together
            (compressed: each stem encoded by itself, --bitrate each stem's).
            --name-format PATTERN names the files (parts, takes) after their first frame's local time
            through strftime, in FILE's folder with its extension; --split-at PERIOD (30s, 15m, 1h)
            cuts the recording at the top of each PERIOD of the wall clock, sample continuous.
            WAVE and RF64 files carry a BWF bext chunk (--description, --originator,
            --originator-reference; the first frame's wall-clock date and time and JACK frame) and an
            iXML chunk (--project, --scene, --take, a track per channel named after its port);
            --loudness adds bext version 2's EBU R 128 loudness, measured as the file is written.
            CAF files carry the same names in their 'info' chunk, MPEG-4 files in their tags.
            """),
        Topic(name: "play", synopsis: """
              aqjack [--server NAME] [--name CLIENT] play [-p DEST_PORT_OR_GLOB]... [--no-connect]
                     [--volume 0..1] [--loop N|inf] [--start-at FRAME] [--resampler soxr|libsamplerate]
                     [--plugin URI_OR_LABEL [--set SYMBOL=VALUE]... [--preset NAME]]...
                     [--http [ADDRESS:]PORT [--http-token TOKEN | --http-token-file PATH]] [--events FILE|-] [--json] FILE...
              aqjack [--server NAME] [--name CLIENT] play --transport [-p DEST_PORT_OR_GLOB]... [--no-connect]
                     [--http [ADDRESS:]PORT [--http-token TOKEN | --http-token-file PATH]] [--events FILE|-] [--json] FILE
              aqjack [--server NAME] [--name CLIENT] play [-p MIDI_PORT_OR_GLOB]... [--no-connect] [--start-at FRAME] [--json] FILE.mid
            """, text: """
            play registers CLIENT:out_1..N (the widest file's channel count), connects them to the physical
            playback ports (or the -p ports, in natural order; none with --no-connect), plays the files
            in order through the output queue, shows elapsed/total and underruns on a terminal, and
            exits 0 once the last frame has played; Ctrl-C or SIGTERM stops at once (exit 0, as for
            record); the server's shutdown or a file that cannot be read to its end exits 1.
            play --transport puts one file on JACK's transport timeline (file frame 0 at transport frame
            0): it plays where the transport rolls, and holds a start or locate until it is ready there.
            --http and --events as for record (docs/WEB.md): the page's meters are what plays, its one
            command stop; with --transport the state is waiting while the transport is stopped, and
            --events logs a transport event at each start and stop.
            play FILE.mid (.midi, .smf) plays a Standard MIDI File (format 0 or 1, tracks merged) to
            CLIENT:midi_out, connected to the physical MIDI inputs or the -p ones: each event at the
            start frame plus its time in the file, to the frame; Ctrl-C turns off the notes sounding.
            """),
        Topic(name: "convert", synopsis: """
              aqjack convert IN OUT [-f FILE_TYPE] [--codec lpcm|aac|alac|flac] [--bitrate BPS]
                     [-q 0..127] [-r RATE] [-c CHANNELS] [-b 16|24|32] [--src-quality best|medium|fastest]
                     [--resampler soxr|libsamplerate] [--plugin URI_OR_LABEL [--set SYMBOL=VALUE]... [--preset NAME]]... [--graph FILE]
                     [--force] [--json]
            """, text: """
            convert is afconvert's job: reads anything aqjack reads (PCM, FLAC, ALAC, Ogg, MP3 through
            libsndfile; AAC in ADTS, CAF, M4A, MP4) and writes linear PCM (WAVE, AIFF, AIFC, CAF, W64,
            RF64), FLAC (.flac), ALAC (.caf or .m4a with --codec alac) or AAC (.aac, .m4a, .mp4,
            .caf --codec aac).
            The file type follows OUT's extension unless -f says otherwise; options may come before or
            after the file names. AAC input is trimmed by its priming and remainder frames. FLAC and
            ALAC keep 16- and 24-bit samples bit-exact. A progress bar shows on a terminal.
            --graph FILE runs the output through a graph saved by host's control socket (save), its
            latency hidden as a --plugin chain's: as many graph inputs and outputs as channels (-c).
            """),
        Topic(name: "info", synopsis: """
              aqjack info FILE... [--json]
            """, text: """
            info prints afinfo's description of each FILE: file type, data format (ASBD fields),
            packets, frames, duration, bit rate, priming/remainder frames, cookie size, BWF time
            reference; --json prints {"schema":"aqjack.info/1","files":[...]}.
            """),
        Topic(name: "plugins", synopsis: """
              aqjack plugins [PATTERN] [--json]   the installed LV2 and LADSPA plugins (ports, ranges, latency, presets)
              aqjack plugins --check [PATTERN] [--json]   run each for 1 s of noise; list those that fail
            """, text: """
            plugins lists the installed LV2 plugins (what lilv finds, as lv2ls lists them), then the LADSPA
            ones (every library in LADSPA_PATH, else ~/.ladspa, /usr/local/lib/ladspa and /usr/lib/ladspa;
            named urn:ladspa:ID or by label wherever a plugin is named) whose
            URI or name contains PATTERN (any case; all without one): their audio, control and MIDI
            ports, control ranges, latency and presets; --json prints {"schema":"aqjack.plugins/1",...}.
            --check instantiates and runs each of them as host would, for one second of white noise,
            in a child process of its own (a crash or hang takes only the child; a hang is killed
            after 30 s), and prints FAIL URI: REASON for each that fails (refused, crashed, hung, or
            output not finite), then the count; exit 0 when none failed, 1 otherwise.
            --json prints {"schema":"aqjack.plugin-check/1","checked":N,"failed":F,"plugins":[...]}.
            """),
        Topic(name: "host", synopsis: """
              aqjack [--server NAME] [--name CLIENT] host URI [--set SYMBOL=VALUE]... [--preset NAME] [--state DIR]
                     [-i SOURCE_PORT_OR_GLOB]... [-o DEST_PORT_OR_GLOB]... [--json]   an LV2 plugin live on JACK
              aqjack [--server NAME] [--name CLIENT] host URI [--set SYMBOL=VALUE]... [--preset NAME]
                     URI [--set SYMBOL=VALUE]... ... [-i ...]... [-o ...]... [--json]   a chain of them
              aqjack ... host [URI ...] --control PORT [--control-host ADDRESS] [--control-token TOKEN] [--channels N]
              aqjack ... host [URI ...] --osc PORT [--osc-host ADDRESS] [--osc-token TOKEN] [--channels N]
              aqjack ... host --graph FILE [--control PORT] [--osc PORT] [-i ...]... [-o ...]...   a saved graph
              aqjack ... host [URI ...] --http [ADDRESS:]PORT [--http-token TOKEN] [--events FILE|-]   the graph on a web page
            """, text: """
            host runs one LV2 plugin live on JACK (jalv's console mode, for scripts): ports named by
            the plugin's symbols (a CV port is an audio port marked signal-type CV; a MIDI output a
            JACK MIDI port), the -i ports feeding its inputs (audio, then CV, in order; MIDI ports to
            its MIDI input), its outputs feeding the -o ports (MIDI input ports from its first MIDI
            output), its latency reported to JACK; controls
            set with --set or --preset and changed live by SYMBOL=VALUE lines on standard input,
            until Ctrl-C or SIGTERM (exit 0) or the server's end (exit 1). --state DIR restores the
            plugin's state from DIR at the start when one is saved there and saves it at the end
            (a saved value outside a control's range is refused, as --set refuses it).
            A LADSPA plugin (urn:ladspa:ID or its label) runs as a one-plugin graph (ports in_1 ...,
            out_1 ...; no console or --state). A plugin whose event input takes time:Position is
            told the JACK transport's frame, speed, bar, beat and tempo whenever it changes.
            With several URIs, host runs them as a chain (each --set and --preset applies to the
            URI before it), as many channels wide as its widest plugin: ports in_1 ... and out_1 ...,
            each channel through the plugins in order, a mono plugin once per channel, an instrument
            (no audio input) starting the channels afresh, a MIDI-only plugin on none (another
            plugin must have that many audio inputs and outputs, else exit 2), the sum of their
            latencies reported to JACK; MIDI flows from midi_in along the chain (a plugin's MIDI
            output feeding the plugins after it) to midi_out; no console or --state for a chain yet.
            --control PORT (TCP on 127.0.0.1; 0: any free port, noted) runs the plugins as a graph
            edited while it plays, one command a line: add URI [ID], remove ID, connect SRC DST
            (audio or CV to audio; midi_in, midi_out and plugins' MIDI ports to MIDI),
            disconnect SRC DST, set ID SYMBOL VALUE, get ID SYMBOL, bypass ID on|off, preset ID NAME,
            save-preset ID NAME (to ~/.lv2),
            monitor ID SYMBOL on|off, midi-map ID SYMBOL CHANNEL CC [MIN MAX], midi-unmap ID SYMBOL,
            midi-learn ID SYMBOL (controllers on the host's midi_in port), list, latency, save FILE,
            load FILE (docs/CONTROL.md); each
            answered "ok ..." or "error CODE message". Only this user's connections are taken; with
            --control-token TOKEN (or AQJACK_CONTROL_TOKEN), required for any --control-host but
            loopback, whoever sends "auth TOKEN" first. With no URI the graph starts empty, with
            --channels N inputs and outputs (default 2). --graph FILE hosts a graph saved by save.
            --osc PORT (UDP on 127.0.0.1) takes the same commands as OSC messages, /aqjack/VERB with the
            words as arguments, each answered /aqjack/reply ADDRESS LINE; --osc-token TOKEN (or
            AQJACK_OSC_TOKEN), required for any --osc-host but loopback, is every message's first argument.
            --http [ADDRESS:]PORT serves a page with the outputs' meters and the graph to edit (plugins
            added and removed, sliders, bypass, presets, connections), GET /graph, /plugins, /status,
            /events, and the same commands as POST /control/VERB with the words as the body;
            --events FILE|- logs the events (docs/WEB.md).
            """),
    ]

    /// The topic of subcommand `name` (`--ports` is `ports`), or nil.
    static func topic(_ name: String) -> Topic? {
        topics.first { $0.name == (name == "--ports" ? "ports" : name) }
    }

    /// `aqjack help CMD` and `aqjack CMD --help`: the synopsis, what it does, the options every
    /// subcommand takes and the exit status.
    static func text(of topic: Topic) -> String {
        "Usage:\n" + topic.synopsis + "\n\n" + topic.text + "\n\n" + commonOptions + "\n\n" + exitStatus
    }

    /// The usage line a usage error inside subcommand `name` ends with.
    static func usageLine(of name: String?) -> String {
        guard let name, let topic = topic(name) else {
            return "usage: aqjack [--server NAME] [--name CLIENT] SUBCOMMAND ...; aqjack --help lists them, aqjack help SUBCOMMAND says more"
        }
        return "usage:\n" + topic.synopsis + "\naqjack help \(topic.name) for more"
    }

    static let commonOptions = """
    Options for every subcommand:
      --server NAME, -s NAME    JACK server to use (default: $JACK_DEFAULT_SERVER, else 'default').
                                aqjack never starts a server (but demo, when none runs).
      --name CLIENT, -n CLIENT  JACK client name (default: aqjack).
      --help, -h                this subcommand's help.
    """

    static let exitStatus = "Exit status: 0 ok, 1 runtime failure (e.g. no JACK server), 2 usage error."

    /// `aqjack --help`: every synopsis, then where to read more.
    static var usage: String {
        """
        aqjack: Apple's Audio Queue Services on the JACK audio server.

        Usage:
        \(topics.map { $0.synopsis + "\n" }.joined())  aqjack help SUBCOMMAND | aqjack SUBCOMMAND --help   that subcommand's options and what it does
          aqjack --help | -h        this text
          aqjack --version | -V     version and library versions

        \(commonOptions)

        \(topics.map(\.text).joined(separator: "\n\n"))

        \(exitStatus)
        """
    }

    static var versionText: String {
        "aqjack \(version) (libjack \(JackServer.libraryVersion), \(MediaLibraries.sndfileVersion), "
            + "\(MediaLibraries.samplerateVersion), \(CodecLibraries.avcodecVersion), \(CodecLibraries.avformatVersion))"
    }
}
