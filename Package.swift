// swift-tools-version:6.1
// aqjack: Apple's Audio Queue Services on the JACK audio server.
//
// Module layout (docs/ARCHITECTURE.md, "Layout"): one Swift module reaches each C library; the real-time
// core (AQCore) imports neither Foundation nor any C library module.
import PackageDescription

let package = Package(
    name: "aqjack",
    products: [
        .executable(name: "aqjack", targets: ["aqjack"]),
        // What other packages import: Apple's spelling (`import AudioToolbox`), the Swift-native
        // queues (`import AudioQueue`), files and codecs (`import AQCodecs`, with AQMedia), and
        // the real-time core and JACK client beneath them.
        .library(name: "AudioToolbox", targets: ["AudioToolbox"]),
        // `import AVFoundation` / `import AVFAudio` of ported iOS code: AVAudioSession on JACK.
        .library(name: "AVFoundation", targets: ["AVFoundation", "AVFAudio"]),
        .library(name: "AVFAudio", targets: ["AVFAudio"]),
        .library(name: "AudioQueue", targets: ["AudioQueue"]),
        // Recording and playback sessions over the queues: files, takes, the transport, the
        // disk-writer thread.
        .library(name: "AQSession", targets: ["AQSession"]),
        .library(name: "AQCodecs", targets: ["AQCodecs", "AQMedia"]),
        .library(name: "AQCore", targets: ["AQCore"]),
        .library(name: "AQJack", targets: ["AQJack"]),
        // LV2 plugins as processing stages (lilv): the plugin host.
        .library(name: "AQPlugins", targets: ["AQPlugins"]),
        // Plugin graphs: nodes, connections, run order, delay compensation.
        .library(name: "AQGraph", targets: ["AQGraph"]),
    ],
    targets: [
        // C libraries from Debian, each through a module map and a shim header.
        .systemLibrary(name: "CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband", providers: [.apt(["librubberband-dev"])]),
        // EBU R 128 loudness for Broadcast Wave's version 2 fields (record --loudness).
        .systemLibrary(name: "CEBUR128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        .systemLibrary(name: "CLilv", pkgConfig: "lilv-0", providers: [.apt(["liblilv-dev"])]),
        // The HTTP and WebSocket server of --http (docs/ARCHITECTURE.md says why civetweb).
        .systemLibrary(name: "CCivetweb", providers: [.apt(["libcivetweb-dev"])]),
        // The LV2 host's C side: the log feature (a variadic printf) and atom sequence helpers,
        // over lv2-dev's headers.
        .target(name: "CLV2Support"),
        // LADSPA's header (Debian ladspa-sdk); plugins are opened with dlopen at run time.
        .target(name: "CLADSPASupport", linkerSettings: [.linkedLibrary("dl")]),
        // FFmpeg's headers, with its libraries loaded by dlopen on first use (see CFFmpeg.h: linking
        // them tripled the start-up time of every aqjack command).
        .target(name: "CFFmpeg", linkerSettings: [.linkedLibrary("dl")]),

        // Real-time core: rings, process-cycle types, processors. Synchronization + Glibc only.
        //
        // AQ_RT_CHECKS turns on the @_noLocks annotations of the process-thread functions, so the
        // compiler rejects any allocation, lock or reference count on that path. Release builds only:
        // a debug build compiles each file alone and without generic specialisation, so every
        // cross-file or generic call would be flagged as opaque. Scripts/test.sh builds release first.
        .target(name: "AQCore", swiftSettings: [.define("AQ_RT_CHECKS", .when(configuration: .release))]),
        // The JACK client wrapper: the only importer of CJack.
        .target(name: "AQJack", dependencies: ["AQCore", "CJack"]),
        // Files, resampling, time-pitch and loudness: the only importer of CSndFile, CSampleRate,
        // CSoxr, CRubberBand and CEBUR128.
        .target(name: "AQMedia", dependencies: ["AQCore", "CSndFile", "CSampleRate", "CSoxr", "CRubberBand", "CEBUR128", "CAudioTypes"]),
        // Codecs and compressed files (AAC through libavcodec, ADTS, CAF packet files, MPEG-4
        // through libavformat, magic cookies): the only importer of CFFmpeg.
        .target(name: "AQCodecs", dependencies: ["CFFmpeg", "AQCore", "AQMedia", "CAudioTypes"]),
        // The plugin host (LV2 through lilv, LADSPA through dlopen): the only importer of CLilv.
        .target(name: "AQPlugins", dependencies: ["AQCore", "AQMedia", "AQGraph", "CLilv", "CLV2Support", "CLADSPASupport"]),
        // Plugin graphs (issue 33): nodes, connections, run order and delay compensation, and
        // a graph live on any AudioDriver; no plugin format (AQPlugins binds LV2 to it).
        .target(name: "AQGraph", dependencies: ["AQCore"], swiftSettings: [.define("AQ_RT_CHECKS", .when(configuration: .release))]),
        // Core Audio structs and callback typedefs with Apple's layouts (C, for @convention(c)).
        .target(name: "CAudioTypes"),
        // The Swift-native queue engine over any AudioDriver (JACK's is AQJack's JackDriver, the
        // offline one AQCore's): it does not import AQJack.
        .target(name: "AudioQueue", dependencies: ["AQCore", "AQMedia", "AQCodecs", "CAudioTypes"]),
        // Apple's spelling (types, constants, OSStatus functions) over AudioQueue and AQMedia, so
        // that code written for macOS/iOS compiles with its `import AudioToolbox` unchanged.
        .target(name: "AudioToolbox", dependencies: ["AudioQueue", "AQJack", "AQMedia", "AQCodecs", "CAudioTypes"]),
        // AVAudioSession answered from the JACK server through AudioToolbox's HAL, and the
        // AVFoundation module that re-exports it (issue 36).
        .target(name: "AVFAudio", dependencies: ["AudioToolbox"]),
        .target(name: "AVFoundation", dependencies: ["AVFAudio"]),
        // The session library: recordings and playback over the queues (takes, splits, the
        // transport, the disk-writer thread `aqjack-disk`). Imports no driver.
        .target(name: "AQSession", dependencies: ["AQCore", "AQMedia", "AQCodecs", "AudioQueue", "CAudioTypes"]),
        // Session control: the OSC 1.0 message codec (`aqjack record --osc`), fuzzed.
        .target(name: "AQControl"),
        // The web surface: civetweb's server with aqjack's rules, the status document, the page.
        .target(name: "AQWeb", dependencies: ["CCivetweb"]),
        // The command-line tool.
        .executableTarget(name: "aqjack", dependencies: ["AQJack", "AQMedia", "AQCodecs", "AudioQueue", "AQSession", "AQPlugins", "AQControl", "AQWeb"]),

        // Test support reused by later issues: deterministic generator client, ring sink, server helpers.
        // The test signal's generator runs on JACK's process thread: the same real-time checks as AQCore.
        .target(name: "AQTestSupport", dependencies: ["AQCore", "AQGraph", "AQJack", "AQMedia", "CSndFile", "CAudioTypes"],
                swiftSettings: [.define("AQ_RT_CHECKS", .when(configuration: .release))]),
        // Checks of recorded files, optimized in debug builds too: the tests check recordings of
        // hundreds of millions of samples. Apart from AQTestSupport, whose generator and sinks
        // must keep their debug speed (optimized, a freewheeling server outran the test's sink).
        .target(name: "AQTestChecks", dependencies: ["AQTestSupport"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // The serialized suite every JACK test joins; apart from AQTestSupport because it needs
        // Swift Testing, which the statically linked release tools (aqbench) cannot link.
        .target(name: "AQServerSuite"),
        // Counts malloc/free/mutex calls on marked threads; linked only into test binaries.
        .target(name: "CRTProbe"),
        // libFuzzer target for every parser and Apple's entry points for untrusted bytes (Scripts/fuzz.sh).
        .executableTarget(name: "FuzzParsers", dependencies: ["AQCodecs", "AQMedia", "CAudioTypes", "AQControl", "AudioToolbox"]),
        // Benchmarks, run by Scripts/bench.sh.
        .executableTarget(name: "aqbench", dependencies: ["AQCore", "AQJack", "AQTestSupport", "AQMedia", "AudioQueue", "AQPlugins"]),

        .testTarget(name: "AQCoreTests", dependencies: ["AQCore"]),
        .testTarget(name: "AQSessionTests", dependencies: ["AQSession", "AQCore", "AQMedia", "AQCodecs", "AudioQueue", "AQTestSupport", "CAudioTypes"]),
        .testTarget(name: "AQPluginsTests", dependencies: ["AQPlugins", "AQCore", "AQGraph", "AQTestSupport"]),
        .testTarget(name: "AQGraphTests", dependencies: ["AQGraph", "AQCore", "AQTestSupport"]),
        .testTarget(name: "AQWebTests", dependencies: ["AQWeb", "AQTestSupport"]),
        .testTarget(name: "AQCodecsTests", dependencies: ["AQCodecs", "AQMedia", "AQTestSupport", "CSndFile", "CAudioTypes"]),
        .testTarget(name: "AQMediaTests", dependencies: ["AQMedia", "AQCodecs", "CSndFile", "CAudioTypes"]),
        .testTarget(name: "AQJackTests", dependencies: ["AQServerSuite", "AQCore", "AQJack", "AQTestSupport", "CRTProbe", "AQPlugins", "AQMedia", "AQGraph"]),
        .testTarget(name: "AudioQueueTests", dependencies: ["AQServerSuite", "AQJack", "AudioQueue", "AudioToolbox", "AQCodecs", "AQTestSupport", "CSndFile", "CAudioTypes"]),
        .testTarget(name: "aqjackTests", dependencies: ["AQServerSuite", "aqjack", "aqbench", "AQJack", "AQSession", "AQTestSupport", "AQTestChecks", "AudioQueue", "AudioToolbox", "AQCodecs", "AQMedia", "CSndFile", "AQControl"]),
    ]
)
