// aqbench: the figures Scripts/bench.sh prints. Each figure is a ratio against a reference
// measured in the same run. Benchmarks report; they never fail.
import AQCore
import AQCodecs
import AQJack
import AQMedia
import AQTestSupport
import Foundation

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

let arguments = CommandLine.arguments

// Helper modes for Scripts/bench.sh's recorder comparison.
switch arguments.dropFirst().first {
case "generate":
    // aqbench generate CHANNELS SECONDS: a test-signal client `bench-gen` for that long.
    let generator = try GeneratorClient(name: "bench-gen", channelCount: Int(arguments[2])!)
    print("ready \(generator.client.estimatedFrameTime)")
    fflush(nil)
    // Each frame-time jump of the generator's cycles, as it comes ("jump FRAME_TIME SKIPPED",
    // 32-bit JACK frames): the bench matches a recorder's gaps against these (the server skipped
    // those frames for every client) to find the gaps that were the recorder's alone.
    let deadline = Date().addingTimeInterval(Double(arguments[3])!)
    var printed = 0
    while Date() < deadline {
        Thread.sleep(forTimeInterval: 0.1)
        let (jumps, total) = generator.processor.jumps.jumps(from: printed)
        for jump in jumps { print("jump \(jump.frameTime) \(jump.skippedFrames)") }
        if total > printed + jumps.count { print("jumps-unlogged \(total - printed - jumps.count)") }
        printed = total
        if !jumps.isEmpty { fflush(nil) }
    }
    // How the generator's own callbacks kept time: the bench tells its late cycles from the
    // recorder's with these.
    FileHandle.standardError.write(Data("bench-gen timing: \(generator.client.processTiming)\n".utf8))
    exit(0)
case "sink":
    // aqbench sink CHANNELS SECONDS: a stand-in sound card `bench-sink` with CHANNELS physical
    // inputs; prints "ready", then, once every channel has carried a non-zero sample, the JACK
    // frame (mod the test signal's period) of the first frame in which all of them did and the
    // frames between the first channel's start and the last's, and exits (or after SECONDS).
    let channels = Int(arguments[2])!
    let sink = try CaptureClient(name: "bench-sink", channelCount: channels, capacityFrames: 1 << 16, physical: true)
    try sink.activate()
    print("ready")
    fflush(nil)
    var started = [Bool](repeating: false, count: channels)
    var startedCount = 0
    var firstAny: UInt64?
    let deadline = Date().addingTimeInterval(Double(arguments[3])!)
    while startedCount < channels && Date() < deadline {
        guard sink.reader.waitForCycle(milliseconds: 100) else { continue }
        while startedCount < channels, let _ = sink.reader.readCycle({ cycle, samples in
            for frame in 0 ..< cycle.frameCount where startedCount < channels {
                for channel in 0 ..< channels where !started[channel] && samples[frame * channels + channel] != 0 {
                    started[channel] = true
                    startedCount += 1
                    firstAny = firstAny ?? cycle.frameTime + UInt64(frame)
                    if startedCount == channels {
                        print("complete \((cycle.frameTime + UInt64(frame)) & UInt64(TestSignal.framePeriod - 1)) apart \(cycle.frameTime + UInt64(frame) - firstAny!)")
                    }
                }
            }
        }) {}
    }
    if startedCount < channels { print("incomplete \(startedCount)") }
    exit(0)
case "cold-capture":
    // aqbench cold-capture CHANNELS RING-SECONDS: the capture cycle with a ring that is never
    // in cache and freshly written inputs, against a planar copy (ns per cycle).
    let result = ProcessBenchmark.coldCaptureCycle(channelCount: Int(arguments[2])!, period: 128, cycles: 5000, ringSeconds: Int(arguments[3])!)
    print("capture \(format(result.processor / 1000, 1)) us, planar copy \(format(result.planarCopy / 1000, 1)) us per cycle")
    exit(0)
case "reader":
    // aqbench reader CHANNELS RING-SECONDS [PERIOD]: the consumer's read of a capture cycle
    // (interleaving the planar block), against a plain copy of as many bytes.
    let period = arguments.count > 4 ? Int(arguments[4])! : 128
    let result = ProcessBenchmark.readerCycle(channelCount: Int(arguments[2])!, period: period, cycles: 3000, ringSeconds: Int(arguments[3])!)
    print("reader \(format(result.reader / 1000, 1)) us, copy \(format(result.copy / 1000, 1)) us per cycle")
    exit(0)
case "feeder":
    // aqbench feeder CHANNELS RING-SECONDS CHUNK: the playback feeder's write of interleaved
    // frames into its planar ring, CHUNK frames at a time, against a plain copy.
    let result = ProcessBenchmark.feederWrite(channelCount: Int(arguments[2])!, chunk: Int(arguments[4])!, chunks: 2000, ringSeconds: Int(arguments[3])!)
    print("feeder \(format(result.feeder / 1000, 1)) us, copy \(format(result.copy / 1000, 1)) us per chunk")
    exit(0)
case "cold-playback":
    // aqbench cold-playback CHANNELS RING-SECONDS: the playback cycle, against a planar copy.
    let result = ProcessBenchmark.coldPlaybackCycle(channelCount: Int(arguments[2])!, period: 128, cycles: 5000, ringSeconds: Int(arguments[3])!)
    print("playback \(format(result.processor / 1000, 1)) us, planar copy \(format(result.planarCopy / 1000, 1)) us per cycle")
    exit(0)
case "offline-render":
    // aqbench offline-render FILE: AudioOutputQueue offline rendering speed (no server).
    print(try offlineRenderBenchmark(path: arguments[2]))
    exit(0)
case "host-cycle":
    // aqbench host-cycle URI PERIOD [CONTROL]: the live host's callback cost per cycle, ns.
    let nanoseconds = try PluginBenchmark.hostCycle(uri: arguments[2], period: Int(arguments[3])!, cycles: 20_000,
                                                    changeControl: arguments.count > 4 ? arguments[4] : nil)
    print(String(format: "%.0f", nanoseconds))
    exit(0)
case "port-wait":
    // aqbench port-wait PORT SECONDS: with its client already open ("ready"), polls every
    // 0.5 ms until PORT is on the graph and prints the wall-clock time it saw it (ns since the
    // epoch, as `date +%s%N`), or "timeout". A start measure finer than jack_lsp polls (each
    // jack_lsp opens a client: about 50 ms here).
    let client = try JackClient(name: "bench-port-wait")
    print("ready")
    fflush(nil)   // every stream: "ready" must reach the script now
    let deadline = Date().addingTimeInterval(Double(arguments[3]) ?? 20)
    while Date() < deadline {
        if client.portInfo(named: arguments[2]) != nil {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            print(Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
            exit(0)
        }
        usleep(500)
    }
    print("timeout")
    exit(1)
case "frame":
    // aqbench frame: the current JACK frame time, mod 2^22.
    let client = try JackClient(name: "bench-clock")
    print(client.estimatedFrameTime & (TestSignal.framePeriod - 1))
    exit(0)
case "analyze":
    // aqbench analyze FILE CHANNELS EXEC_FRAME RATE: start latency and lost frames of a recording.
    let analysis = try RecordingAnalysis(path: arguments[2], channels: Int(arguments[3])!)
    let execFrame = UInt32(arguments[4])!
    let rate = Double(arguments[5])!
    let startDelay = analysis.firstCompleteFrame.map { Double(($0 &- execFrame) & (TestSignal.framePeriod - 1)) / rate }
    print(String(format: "frames %d leadingPartialFrames %d lostFrames %d execToFirstCompleteFrame %.3f repeatedFrames %d",
                 analysis.frames, analysis.leadingPartialFrames, analysis.lostFrames, startDelay ?? -1, analysis.repeatedFrames))
    exit(0)
case "events":
    // aqbench events FILE CHANNELS START_FRAME GENERATOR_OUTPUT [STALLS [PERIOD]]: the runs of wrong
    // frames in a recording of the test signal whose first frame is JACK frame START_FRAME, by
    // cause (RecordingEvents), its silent frames matched against the "jump" lines `aqbench
    // generate` printed. One line: "silence RUNS FRAMES server FRAMES recorder-only FRAMES
    // isolated FRAMES older RUNS FRAMES newer RUNS FRAMES garbled RUNS FRAMES unexplained RUNS
    // FRAMES" (isolated: recorder-only frames more than 4 cycles of PERIOD frames, default 128,
    // from any jump of the generator's; unexplained: wrong runs more than 4 cycles from any such
    // jump and from any stalled callback of the recorder listed in STALLS, aqjack's
    // AQJACK_STALLS file), then the recorder-only gaps ("FRAME_TIME+LENGTH"), at most 40, then
    // every run (at most 200). (The margin was 512 frames whatever the period: at period 1024 a
    // run one cycle after a server skip counted as unexplained.)
    let events = try RecordingEvents(path: arguments[2], channels: Int(arguments[3])!, start: UInt32(truncatingIfNeeded: UInt64(arguments[4])!))
    let generatorJumps = try String(contentsOfFile: arguments[5], encoding: .utf8).split(separator: "\n").compactMap { line -> FrameJumpLog.Jump? in
        let fields = line.split(separator: " ")
        guard fields.count == 3, fields[0] == "jump", let time = UInt32(fields[1]), let skipped = Int32(fields[2]) else { return nil }
        return FrameJumpLog.Jump(frameTime: time, expected: time &- UInt32(bitPattern: skipped))
    }
    let (server, recorderOnly) = events.silence(against: generatorJumps)
    func tally(_ include: (RecordingEvents.Kind) -> Bool) -> String {
        let runs = events.runs.filter { include($0.kind) }
        return "\(runs.count) \(runs.reduce(0) { $0 + $1.length })"
    }
    let margin = UInt32(4 * (arguments.count > 7 ? Int(arguments[7])! : 128))
    let isolated = recorderOnly.filter { !RecordingEvents.isNear($0, jumps: generatorJumps, margin: margin) }
    // The recorder's stalled callbacks (AQJACK_STALLS lines: FRAME_TIME ...), as marks of no length.
    let stalls = try arguments.count > 6 ? String(contentsOfFile: arguments[6], encoding: .utf8).split(separator: "\n").compactMap { line in
        line.split(separator: " ").first.flatMap { UInt32($0) }.map { FrameJumpLog.Jump(frameTime: $0, expected: $0) }
    } : []
    let unexplained = events.runs.filter { !RecordingEvents.isNear($0, jumps: generatorJumps + stalls, margin: margin) }
    print("silence \(tally { $0 == .silence }) server \(server) recorder-only \(recorderOnly.reduce(0) { $0 + $1.length })"
          + " isolated \(isolated.reduce(0) { $0 + $1.length })"
          + " older \(tally { if case .offset(let k) = $0 { k < 0 } else { false } })"
          + " newer \(tally { if case .offset(let k) = $0 { k > 0 } else { false } })"
          + " garbled \(tally { $0 == .garbled })"
          + " unexplained \(unexplained.count) \(unexplained.reduce(0) { $0 + $1.length })")
    print(recorderOnly.prefix(40).map { "\($0.frameTime)+\($0.length)" }.joined(separator: " "))
    // Every run, for a closer look: FRAME_TIME+LENGTH:KIND (s silence, g garbled, else the offset).
    print(events.runs.prefix(200).map { run in
        let kind: String
        switch run.kind {
        case .silence: kind = "s"
        case .garbled: kind = "g"
        case .offset(let offset): kind = String(offset)
        }
        return "\(run.frameTime)+\(run.length):\(kind)"
    }.joined(separator: " "))
    exit(0)
case "multisine":
    // aqbench multisine SECONDS RATE CHANNELS: the music-like test signal as raw f32 on stdout.
    let rate = Double(arguments[3])!
    let samples = MultiSine.interleaved(frameCount: Int(Double(arguments[2])! * rate), channelCount: Int(arguments[4])!, sampleRate: rate)
    samples.withUnsafeBytes { FileHandle.standardOutput.write(Data($0)) }
    exit(0)
case "verify":
    // aqbench verify FILE CHANNELS START_FRAME [FIRST_CHANNEL]: streams a float recording of the
    // test signal through libsndfile and compares every sample bit for bit with TestSignal at
    // JACK frame START_FRAME + i, the file's channel c with the signal's FIRST_CHANNEL + c (0-based;
    // default 0: one part of a split recording starts later); prints "frames N wrong W
    // wrongFrames F" (W samples that differ, in F frames).
    let channels = Int(arguments[3])!
    let start = UInt64(arguments[4])!
    let firstChannel = arguments.count > 5 ? Int(arguments[5])! : 0
    var wrong = 0
    var wrongFrames = 0
    let frame = try streamFloatFrames(path: arguments[2], channels: channels) { samples, firstFrame, count in
        for offset in 0 ..< count {
            let jackFrame = UInt32(truncatingIfNeeded: start + UInt64(firstFrame + offset))
            let before = wrong
            for channel in 0 ..< channels where samples[offset * channels + channel].bitPattern != TestSignal.sample(channel: firstChannel + channel, frame: jackFrame).bitPattern {
                wrong += 1
            }
            if wrong != before { wrongFrames += 1 }
        }
    }
    print("frames \(frame) wrong \(wrong) wrongFrames \(wrongFrames)")
    exit(0)
case "float-wav":
    // aqbench float-wav IN.f32 RATE CHANNELS OUT.wav: raw f32 into a float WAV, bit for bit
    // (libsndfile), so an SNR measures the converter and not a tool's own conversion (sox's
    // internal 32-bit integers alone cost a float signal 138 dB: measured).
    let samples = FileManager.default.contents(atPath: arguments[2])!.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    let channels = UInt32(arguments[4])!
    let format = CompressedFormatValues.floatPCM(sampleRate: Double(arguments[3])!, channelCount: Int(channels))
    let file = try AudioFile.create(path: arguments[5], fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true)
    _ = try samples.withUnsafeBytes { try file.pcmWriter!.writePackets($0.baseAddress!, byteCount: $0.count, startPacket: 0, packetCount: samples.count / Int(channels)) }
    try file.close()
    exit(0)
case "wav-f32":
    // aqbench wav-f32 IN OUT.f32: any file libsndfile reads, as raw interleaved f32.
    let reader = try AudioFileReader(path: arguments[2])
    var samples = [Float](repeating: 0, count: Int(reader.packetCount) * reader.layout.channelCount)
    let frames = try samples.withUnsafeMutableBufferPointer { try reader.readFloatFrames(startFrame: 0, into: $0.baseAddress!, maximumFrames: Int(reader.packetCount)) }
    samples.removeLast(samples.count - frames * reader.layout.channelCount)
    _ = samples.withUnsafeBytes { FileManager.default.createFile(atPath: arguments[3], contents: Data($0)) }
    exit(0)
case "snr":
    // aqbench snr REFERENCE.f32 TEST.f32 CHANNELS LAGS EDGE: the best SNR (dB) of TEST against
    // REFERENCE over the given lags (comma-separated, frames TEST is late by), skipping EDGE
    // frames at both ends.
    let reference = FileManager.default.contents(atPath: arguments[2])!.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    let test = FileManager.default.contents(atPath: arguments[3])!.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    let channels = Int(arguments[4])!
    let edge = Int(arguments[6])!
    var best = (snr: -Double.infinity, lag: 0)
    for lag in arguments[5].split(separator: ",").compactMap({ Int($0) }) {
        let frames = min(reference.count, test.count - lag * channels) / channels - 2 * edge
        guard frames > 0 else { continue }
        var signal = 0.0, noise = 0.0
        for index in edge * channels ..< (edge + frames) * channels {
            let r = Double(reference[index])
            let e = Double(test[index + lag * channels]) - r
            signal += r * r
            noise += e * e
        }
        let snr = 10 * log10(signal / max(noise, 1e-300))
        if snr > best.snr { best = (snr, lag) }
    }
    print(String(format: "%.2f dB (lag %d)", best.snr, best.lag))
    exit(0)
default:
    break
}

let aqjackPath = arguments.count > 1 ? arguments[1] : ".build/release/aqjack"

print("== ring throughput (single thread, write then read one chunk), against memcpy in + memcpy out")
for chunk in [256, 8192, 32768] {
    let result = RingBenchmark.singleThread(chunkSamples: chunk, rounds: max(2000, 50_000_000 / chunk))
    let gigabytes = Double(result.bytes) / 1e9
    print("  chunk \(chunk) samples: ring \(format(gigabytes / result.ring)) GB/s, memcpy \(format(gigabytes / result.memcpy)) GB/s, "
          + "ring/memcpy time ratio \(format(result.ring / result.memcpy))")
}
let twoThreadSamples = 200_000_000
let twoThreadSeconds = RingBenchmark.twoThreads(totalSamples: twoThreadSamples, chunkSamples: 1024)
print("  two threads, 1024-sample chunks: \(format(Double(twoThreadSamples * 4) / 1e9 / twoThreadSeconds)) GB/s")

print("== capture process cycle at period 128, 48 kHz (period = 2666.7 us), off-line")
for channels in [2, 64, 256] {
    let nanoseconds = ProcessBenchmark.captureCycle(channelCount: channels, period: 128, cycles: 20_000)
    let periodNanoseconds = 128.0 / 48000.0 * 1e9
    print("  \(channels) channels: \(format(nanoseconds / 1000, 3)) us per cycle = \(format(100 * nanoseconds / periodNanoseconds, 3)) % of the period")
}
print("  with a 2 s ring (never in cache) and inputs written afresh every cycle, against a planar copy of the inputs:")
for channels in [256, 1024, 2040] {
    let result = ProcessBenchmark.coldCaptureCycle(channelCount: channels, period: 128, cycles: 5000, ringSeconds: 2)
    print("  \(channels) channels: \(format(result.processor / 1000, 1)) us per cycle, planar copy \(format(result.planarCopy / 1000, 1)) us: ratio \(format(result.processor / result.planarCopy))")
}
print("== playback process cycle at period 128, with a 2 s ring filled just before each cycle, against a planar copy")
for channels in [2, 256, 1024, 2040] {
    let result = ProcessBenchmark.coldPlaybackCycle(channelCount: channels, period: 128, cycles: 5000, ringSeconds: 2)
    print("  \(channels) channels: \(format(result.processor / 1000, 1)) us per cycle, planar copy \(format(result.planarCopy / 1000, 1)) us: ratio \(format(result.processor / result.planarCopy))")
}

print("== aqjack --ports against jack_lsp -c -l (median of 21 runs, same server)")
do {
    let generator = try GeneratorClient(name: "bench-gen", channelCount: 16)
    let capture = try CaptureClient(name: "bench-cap", channelCount: 16, capacityFrames: 1 << 14)
    try capture.activate()
    try capture.connect(from: generator.portNames)
    let sink = CaptureSink(reader: capture.reader) { _, _ in }
    let ours = try CommandBenchmark.medianSeconds(aqjackPath, ["--ports"], runs: 21)
    let reference = try CommandBenchmark.medianSeconds("/usr/bin/jack_lsp", ["-c", "-l"], runs: 21)
    print("  ports in graph: \(capture.client.portNames().count)")
    print("  aqjack --ports \(format(ours * 1000)) ms, jack_lsp -c -l \(format(reference * 1000)) ms, ratio \(format(ours / reference))")
    let oursJSON = try CommandBenchmark.medianSeconds(aqjackPath, ["--ports", "--json"], runs: 21)
    print("  aqjack --ports --json \(format(oursJSON * 1000)) ms, ratio to jack_lsp \(format(oursJSON / reference))")
    try capture.client.deactivate()
    sink.stop()
} catch {
    print("  skipped: \(error)")
}
