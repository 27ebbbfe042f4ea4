import AQJack
import AQCore
import AQMedia
import AQServerSuite
import AQTestSupport
import AudioQueue
import CAudioTypes
import Foundation
import Testing

struct PlaySummary: Decodable {
    let files: [String], channels: Int, sampleRate: Int, framesPlayed: Int64, expectedFrames: Int64?, startFrameTime: UInt64?
    let underrunFrames: Int, xruns: Int, ports: [String], exitReason: String
}

/// A 2-channel 16-bit WAV of the integer test signal, frames numbered from 0.
func writeIntegerSignalWave(_ path: String, frames: Int) throws {
    let format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: AudioFormatValues.linearPCM,
                                             mFormatFlags: AudioFormatValues.isSignedInteger | AudioFormatValues.isPacked,
                                             mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 2,
                                             mBitsPerChannel: 16, mReserved: 0)
    let writer = try AudioFileWriter(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true)
    var samples = [Int16](repeating: 0, count: frames * 2)
    for frame in 0 ..< frames {
        for channel in 0 ..< 2 {
            samples[frame * 2 + channel] = Int16(TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16) * 32768)
        }
    }
    try samples.withUnsafeBytes { try writer.writePackets($0.baseAddress!, byteCount: $0.count, startPacket: 0, packetCount: frames) }
    try writer.close()
}

extension JackServerSuite {
    @Suite("aqjack play")
    struct PlayCommandTests {
        @Test("files of different shapes play in one call: a mono 44.1 kHz file is resampled and copied to both channels, then a stereo 48 kHz file follows at once")
        func mixedShapes() throws {
            let mono = temporaryPath("mono44.wav")
            let stereo = temporaryPath("stereo48.wav")
            defer { for path in [mono, stereo] { try? FileManager.default.removeItem(atPath: path) } }
            #expect(try ExternalTool.run("sox", ["-V1", "-n", "-r", "44100", "-c", "1", "-b", "16", mono, "synth", "0.5", "sine", "1000", "vol", "0.5"]).status == 0)
            #expect(try ExternalTool.run("sox", ["-V1", "-n", "-r", "48000", "-c", "2", "-b", "16", stereo, "synth", "0.5", "sine", "500", "sine", "750", "vol", "0.5"]).status == 0)
            let (recorder, log) = try startFloatRecorder(channels: 2, role: "mixrec")
            let result = try AQJackCommand.run(["play", "--json", "-p", "\(recorder.driver.name):in_*", "--name", TestServer.uniqueClientName("mixplay"),
                                                mono, stereo])
            usleep(200_000)
            recorder.stop()
            recorder.dispose()
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(PlaySummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.channels == 2 && summary.sampleRate == 48000)
            #expect(abs(summary.framesPlayed - 48000) <= 2, "\(summary)")
            let samples = log.deliveries.flatMap(\.samples)
            let first = try #require((0 ..< samples.count / 2).first { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 })
            #expect(samples.count / 2 >= first + 48000)
            // The mono part: both channels identical, the 1 kHz sine clean after resampling.
            let monoPart = (first + 200 ..< first + 23800)
            #expect(monoPart.allSatisfy { samples[2 * $0] == samples[2 * $0 + 1] })
            let left = monoPart.map { samples[2 * $0] }
            let monoSNR = SineAnalysis.fittedSNR(left[...], frequency: 1000, sampleRate: 48000)
            // The stereo part: 500 Hz left, 750 Hz right, as in the file.
            let stereoPart = (first + 24200 ..< first + 47800)
            let stereoLeft = stereoPart.map { samples[2 * $0] }
            let stereoRight = stereoPart.map { samples[2 * $0 + 1] }
            let leftSNR = SineAnalysis.fittedSNR(stereoLeft[...], frequency: 500, sampleRate: 48000)
            let rightSNR = SineAnalysis.fittedSNR(stereoRight[...], frequency: 750, sampleRate: 48000)
            print("aqjack play mono 44.1 kHz + stereo 48 kHz: mono part SNR \(monoSNR) dB, stereo parts \(leftSNR) / \(rightSNR) dB")
            #expect(monoSNR >= 80 && leftSNR >= 80 && rightSNR >= 80)
        }

        @Test("plays a file into the given ports: every frame bit-exact, once, then exits 0; --loop 2 plays it twice")
        func playsIntoPorts() throws {
            let path = temporaryPath("play.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try writeIntegerSignalWave(path, frames: 24000)
            let (recorder, log) = try startFloatRecorder(channels: 2, role: "prec")
            let result = try AQJackCommand.run(["play", "--json", "--loop", "2", "-p", "\(recorder.driver.name):in_*",
                                                "--name", TestServer.uniqueClientName("player"), path])
            usleep(200_000)
            recorder.stop()
            let recorderGaps = "discontinuities \(recorder.discontinuityCount), server-skipped frames \(recorder.serverSkippedFrameCount), relabelled cycles \(recorder.relabelledCycleCount)"
            recorder.dispose()
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try JSONDecoder().decode(PlaySummary.self, from: Data(result.standardOutput.utf8))
            #expect(summary.framesPlayed == 48000 && summary.exitReason == "end")
            #expect(summary.ports == ["\(recorder.driver.name):in_1", "\(recorder.driver.name):in_2"])
            let samples = log.deliveries.flatMap(\.samples)
            let first = try #require((0 ..< samples.count / 2).first { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 })
            var wrong = 0
            var firstWrong: Int?
            for frame in 0 ..< 48000 where first + frame < samples.count / 2 {
                for channel in 0 ..< 2 where samples[2 * (first + frame) + channel] != TestSignal.integerSample(channel: channel, frame: UInt32(frame % 24000), bits: 16) {
                    wrong += 1
                    firstWrong = firstWrong ?? frame
                }
            }
            #expect(samples.count / 2 >= first + 48000)
            // Said on failure: where it went wrong, the player's underruns and xruns, and the
            // recorder's gaps (one CI run under 1,045 server xruns had 63,744 samples wrong, and
            // said nothing more).
            #expect(wrong == 0, "first wrong frame \(firstWrong.map(String.init) ?? "-"); player: underruns \(summary.underrunFrames) frames, xruns \(summary.xruns); recorder: \(recorderGaps)")
            #expect(samples[(2 * (first + 48000))...].allSatisfy { $0 == 0 })
        }

        @Test("a 44.1 kHz file on the 48 kHz server is resampled: the recorded sine has SNR of at least 90 dB")
        func resampledPlayback() throws {
            let path = temporaryPath("sine44.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let sox = Process()
            sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
            sox.arguments = ["-n", "-r", "44100", "-c", "1", "-b", "32", "-e", "floating-point", path, "synth", "2", "sine", "1000", "gain", "-6"]
            try sox.run()
            let soxExit = sox.exitStatus()
            try #require(soxExit.status == 0)
            let (recorder, log) = try startFloatRecorder(channels: 1, role: "rsrec")
            let result = try AQJackCommand.run(["play", "--json", "-p", "\(recorder.driver.name):in_1",
                                                "--name", TestServer.uniqueClientName("rsplay"), path])
            recorder.stop()
            recorder.dispose()
            #expect(result.status == 0, "\(result.standardError)")
            let samples = log.deliveries.flatMap(\.samples)
            let sound = Array(samples.drop { $0 == 0 })
            #expect(sound.count >= 2 * 48000 - 100)
            // The player's xruns (its --json summary): the server's, seen by every client.
            let xruns = result.standardOutput.firstMatch(of: /"xruns":(\d+)/).flatMap { Int($0.1) } ?? 0
            let snr = SineAnalysis.recordedSNR(sound[4096 ..< 2 * 48000 - 4096], frequency: 1000, sampleRate: 48000, xruns: xruns)
            print("played 44.1 kHz sine at 48 kHz: SNR \(snr) dB, \(xruns) xruns")
            #expect(snr >= 90)
        }

        @Test("Ctrl-C stops at once with exit 0 (a normal end, as for record); a missing file exits 1 naming it")
        func interruptAndErrors() throws {
            let path = temporaryPath("long.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try writeIntegerSignalWave(path, frames: 48000 * 10)
            let out = URL(fileURLWithPath: temporaryPath("play.out"))
            let err = URL(fileURLWithPath: temporaryPath("play.err"))
            defer { try? FileManager.default.removeItem(at: out); try? FileManager.default.removeItem(at: err) }
            let process = try AQJackCommand.start(["play", "--json", "--no-connect", "--name", TestServer.uniqueClientName("pint"), path],
                                                  standardOutput: out, standardError: err)
            usleep(1_000_000)
            let interrupted = Date()
            kill(process.processIdentifier, SIGINT)
            let processExit = process.exitStatus()
            #expect(processExit.status == 0)
            #expect(Date().timeIntervalSince(interrupted) < 1)
            let summary = try JSONDecoder().decode(PlaySummary.self, from: Data(contentsOf: out))
            #expect(summary.exitReason == "interrupt" && summary.framesPlayed > 0 && summary.framesPlayed < 48000 * 10)

            let missing = try AQJackCommand.run(["play", "/nonexistent/take.wav"])
            #expect(missing.status == 1)
            #expect(missing.standardError.contains("no file at '/nonexistent/take.wav'"))
            let usage = try AQJackCommand.run(["play", "--volume", "2", path])
            #expect(usage.status == 2 && usage.standardError.contains("--volume 2 is out of range: expected a linear volume, from 0 to 1"))
        }
    }
}

/// A float recording queue at 48 kHz that logs every buffer, started with no connections of its
/// own (the player under test connects to its `in_N` ports).
func startFloatRecorder(channels: Int, role: String) throws -> (AudioInputQueue, DeliveryLog) {
    let log = DeliveryLog()
    let bytesPerFrame = UInt32(4 * channels)
    let format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: AudioFormatValues.linearPCM,
                                             mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                             mBytesPerPacket: bytesPerFrame, mFramesPerPacket: 1, mBytesPerFrame: bytesPerFrame,
                                             mChannelsPerFrame: UInt32(channels), mBitsPerChannel: 32, mReserved: 0)
    let recorder = try AudioInputQueue(format: format, driver: JackDriver(name: TestServer.uniqueClientName(role))) { queue, buffer, startTime in
        let count = Int(buffer.pointee.mAudioDataByteSize) / 4
        log.append(.init(startTime: startTime, samples: (0 ..< count).map { buffer.pointee.mAudioData.load(fromByteOffset: $0 * 4, as: Float.self) }))
        try? queue.enqueue(buffer)
    }
    recorder.channelSources = []
    for _ in 0 ..< 4 { try recorder.enqueue(recorder.allocateBuffer(byteCapacity: 4800 * Int(bytesPerFrame))) }
    try recorder.start()
    return (recorder, log)
}
