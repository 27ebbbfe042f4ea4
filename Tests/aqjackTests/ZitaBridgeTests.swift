import AQJack
import AQMedia
import AQServerSuite
import CAudioTypes
import AQTestSupport
import Foundation
import Testing

/// A mono 48 kHz float WAV, `frames` long, silent but for a Gaussian pulse (amplitude 0.5,
/// σ = 3 frames: its spectrum is far below either rate's Nyquist, so it survives resampling with
/// its shape) centred on frame `peak`.
private func writePulseWave(_ path: String, frames: Int, peak: Int) throws {
    let format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: AudioFormatValues.linearPCM,
                                             mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                             mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 1,
                                             mBitsPerChannel: 32, mReserved: 0)
    let writer = try AudioFileWriter(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true)
    let samples = (0 ..< frames).map { frame -> Float in
        let distance = Double(frame - peak) / 3
        return Float(0.5 * exp(-distance * distance / 2))
    }
    try samples.withUnsafeBytes { try writer.writePackets($0.baseAddress!, byteCount: $0.count, startPacket: 0, packetCount: frames) }
    try writer.close()
}

/// Where a mono recording's largest sample is, refined between frames by the parabola through
/// it and its neighbours, with that sample's value.
private func pulsePeak(_ samples: [Float]) -> (frame: Double, amplitude: Float)? {
    guard let index = samples.indices.max(by: { abs(samples[$0]) < abs(samples[$1]) }), index > 0, index < samples.count - 1,
          samples[index] != 0 else { return nil }
    let (before, at, after) = (Double(samples[index - 1]), Double(samples[index]), Double(samples[index + 1]))
    let curvature = before - 2 * at + after
    return (Double(index) + (curvature == 0 ? 0 : 0.5 * (before - after) / curvature), samples[index])
}

extension JackServerSuite {
    /// zita-njbridge (0.4.8) between a studio server (48 kHz, period 256) and a remote one
    /// (44.1 kHz, period 128) on 127.0.0.1: a bridge each way, the remote patching what it
    /// receives back to the studio, so a pulse played and recorded on the studio's clock makes a
    /// round trip through both bridges and both resamplers. zita-n2j holds a link's latency
    /// constant and reports none on its ports: `--latency-offset` is how a recording takes it
    /// out (docs/JACK.md, "Remote machines: zita-njbridge").
    @Suite("zita-njbridge: --latency-offset takes out a bridge's unreported latency", .serialized)
    struct ZitaBridgeTests {
        @Test("a round trip 48 kHz → 44.1 kHz → 48 kHz: the pulse measured once at its latency L (file frame 12000 + L); a second take recorded with and without --latency-offset L: exactly L frames apart, the corrected one at frame 12000 to within two frames")
        func latencyOffsetCorrects() throws {
            let studio = try PrivateJackServer(rate: 48000, period: 256, portMaximum: 64, realtime: true)
            defer { studio.stop() }
            let remote = try PrivateJackServer(rate: 44100, period: 128, portMaximum: 64, realtime: true)
            defer { remote.stop() }
            let out = try ZitaBridge(from: studio.name, to: remote.name, channels: 1)
            defer { out.stop() }
            let back = try ZitaBridge(from: remote.name, to: studio.name, channels: 1)
            defer { back.stop() }
            let patch = try JackClient(name: TestServer.uniqueClientName("zitaloop"), server: remote.name)
            _ = try patch.connect("\(out.receiver):out_1", to: "\(back.sender):in_1")
            patch.close()
            // zita-n2j says "Receiving." when it starts resampling; its delay-locked loop settles
            // in the seconds after (measured: a take 3 s after the start found nothing yet).
            sleep(3)
            let pulse = temporaryPath("zita-pulse.wav")
            defer { try? FileManager.default.removeItem(atPath: pulse) }
            try writePulseWave(pulse, frames: 24000, peak: 12000)

            /// Plays the pulse and records 1 s from the same frame of the studio's clock, 0.5 s
            /// from now, once for each offset (nil: none given) at the same time; the pulse's
            /// peak in each file.
            func roundTrip(latencyOffsets: [Int?]) throws -> [(frame: Double, amplitude: Float)] {
                let takes = latencyOffsets.indices.map { temporaryPath("zita-take-\($0).wav") }
                defer {
                    for path in takes.flatMap({ [$0, $0 + ".out", $0 + ".err"] }) + [pulse + ".out", pulse + ".err"] {
                        try? FileManager.default.removeItem(atPath: path)
                    }
                }
                let clock = try JackClient(name: TestServer.uniqueClientName("zitaclock"), server: studio.name)
                let start = clock.estimatedFrameTime &+ 24000
                clock.close()
                let recorders = try zip(takes, latencyOffsets).map { take, offset in
                    try AQJackCommand.start(["--server", studio.name, "--name", TestServer.uniqueClientName("zitarec"),
                                             "record", "--json", "--no-meter", "-c", "1", "-d", "1", "--start-at", "\(start)",
                                             "-p", "\(back.receiver):out_1"] + (offset.map { ["--latency-offset", "\($0)"] } ?? []) + [take],
                                            standardOutput: URL(fileURLWithPath: take + ".out"), standardError: URL(fileURLWithPath: take + ".err"))
                }
                let player = try AQJackCommand.start(["--server", studio.name, "--name", TestServer.uniqueClientName("zitaplay"),
                                                      "play", "--json", "--start-at", "\(start)", "-p", "\(out.sender):in_1", pulse],
                                                     standardOutput: URL(fileURLWithPath: pulse + ".out"), standardError: URL(fileURLWithPath: pulse + ".err"))
                let played = player.exitStatus(within: 30)
                #expect(played.succeeded, "\((try? String(contentsOfFile: pulse + ".err", encoding: .utf8)) ?? "")")
                return try zip(zip(takes, latencyOffsets), recorders).map { pair, recorder in
                    let (take, offset) = pair
                    let recorded = recorder.exitStatus(within: 30)
                    #expect(recorded.succeeded, "\((try? String(contentsOfFile: take + ".err", encoding: .utf8)) ?? "")")
                    let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: take + ".out"))) as? [String: Any]
                    // zita-n2j reports no latency: what the recorder takes out is the offset alone.
                    #expect(summary?["latencyCompensationFrames"] as? Int == offset ?? 0)
                    let contents = try SoundFileContents(path: take)
                    return try #require(pulsePeak(contents.samples), "no pulse came back: \(back.log.suffix(400))")
                }
            }

            let measured = try #require(try roundTrip(latencyOffsets: [nil]).first)
            let latency = measured.frame - 12000
            let offset = Int(latency.rounded())
            let second = try roundTrip(latencyOffsets: [nil, offset])
            let (again, corrected) = (second[0], second[1])
            print("zita-njbridge round trip 48 kHz/256 → 44.1 kHz/128 → 48 kHz: pulse at \(measured.frame) (latency \(latency) frames, amplitude \(measured.amplitude)); "
                + "a second take at \(again.frame) without an offset, at \(corrected.frame) with --latency-offset \(offset) (amplitude \(corrected.amplitude))")
            // Two bridges hold at least a period of each server each (zita-njbridge's manual).
            #expect(latency > Double(2 * (256 + 128 * 48000 / 44100)))
            // The pulse intact through two resamplings.
            for peak in [measured, again, corrected] { #expect(abs(peak.amplitude - 0.5) < 0.02) }
            // The offset is taken out to the frame: the same audio, exactly `offset` frames earlier.
            #expect(abs(again.frame - corrected.frame - Double(offset)) < 1e-6)
            // The bridges' latency holds from one take to the next, within their resamplers'
            // wander (measured: up to 1.8 frames over five takes), so the measured offset puts
            // the pulse back at its place to within two frames.
            #expect(abs(corrected.frame - 12000) <= 2, "the pulse at \(corrected.frame), not 12000")
        }
    }
}
