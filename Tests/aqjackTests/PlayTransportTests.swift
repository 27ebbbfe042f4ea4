import AQCore
import AQJack
import AQMedia
import AQServerSuite
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

struct TransportPlaySummary: Decodable {
    let file: String, channels: Int, fileFrames: Int64, framesPlayed: Int, missedFrames: Int, seeks: Int, xruns: Int, exitReason: String
}

/// A 2-channel float WAV of ``TestSignal``, file frame i holding the signal's frame i.
func writeFloatSignalWave(_ path: String, frames: Int) throws {
    let format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: AudioFormatValues.linearPCM,
                                             mFormatFlags: AudioFormatValues.isFloat | AudioFormatValues.isPacked,
                                             mBytesPerPacket: 8, mFramesPerPacket: 1, mBytesPerFrame: 8, mChannelsPerFrame: 2,
                                             mBitsPerChannel: 32, mReserved: 0)
    let writer = try AudioFileWriter(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true)
    var samples = [Float](repeating: 0, count: frames * 2)
    for frame in 0 ..< frames {
        for channel in 0 ..< 2 { samples[frame * 2 + channel] = TestSignal.sample(channel: channel, frame: UInt32(frame)) }
    }
    try samples.withUnsafeBytes { try writer.writePackets($0.baseAddress!, byteCount: $0.count, startPacket: 0, packetCount: frames) }
    try writer.close()
}

extension JackServerSuite {
    @Suite("aqjack play --transport")
    struct PlayTransportTests {
        @Test("play --transport: silent while stopped; after a locate (48000) and a locate while rolling (240000) every frame that rolled is the file's frame at its transport position, from the first rolling cycle on (a slow-sync client: the transport waits for the file), none missed; silence past the file's end")
        func followsTransport() throws {
            let path = temporaryPath("transport-play.wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try writeFloatSignalWave(path, frames: 270_000)
            let capture = try CaptureClient(name: TestServer.uniqueClientName("ptcap"), channelCount: 2, capacityFrames: 1 << 20)
            try capture.activate()
            let control = capture.client
            control.stopTransport()
            try control.locateTransport(to: 48_000)
            let name = TestServer.uniqueClientName("ptplay")
            let out = URL(fileURLWithPath: path + ".json"), err = URL(fileURLWithPath: path + ".err")
            defer { for file in [out, err] { try? FileManager.default.removeItem(at: file) } }
            let player = try AQJackCommand.start(["play", "--transport", "--json", "-p", "\(capture.client.name):in_*", "--name", name, path],
                                                 standardOutput: out, standardError: err)
            defer { if player.isRunning { kill(player.processIdentifier, SIGKILL) } }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, control.portInfo(named: "\(name):out_2")?.connections.isEmpty ?? true { usleep(20_000) }
            usleep(200_000)
            #expect(threadNames(of: player.processIdentifier).contains("aqjack-feed"), "\(threadNames(of: player.processIdentifier))")
            control.startTransport()
            usleep(500_000)
            try control.locateTransport(to: 240_000)   // while rolling; 30,000 frames before the end
            usleep(1_000_000)                          // rolls past the file's end
            control.stopTransport()
            usleep(200_000)
            kill(player.processIdentifier, SIGTERM)
            let playerExit = player.exitStatus()
            #expect(playerExit.status == 0, "\((try? String(contentsOf: err, encoding: .utf8)) ?? "")")
            let summary = try JSONDecoder().decode(TransportPlaySummary.self, from: Data(contentsOf: out))
            // What the capture client got, cycle by cycle, against the transport of that cycle.
            var rolled = 0, wrong = 0, loudWhileStopped = 0, pastEnd = 0
            var positions: Set<UInt64> = []
            while let _ = capture.reader.readCycle({ record, samples in
                for frame in 0 ..< record.frameCount {
                    let position = record.transportFrame + UInt64(frame)
                    for channel in 0 ..< 2 {
                        let sample = samples[frame * 2 + channel]
                        if !record.transportRolling {
                            if sample != 0 { loudWhileStopped += 1 }
                        } else if position >= 270_000 {
                            if sample != 0 { wrong += 1 }
                        } else if sample.bitPattern != TestSignal.sample(channel: channel, frame: UInt32(position)).bitPattern {
                            wrong += 1
                        }
                    }
                    if record.transportRolling {
                        rolled += 1
                        if position >= 270_000 { pastEnd += 1 }
                        if frame == 0 { positions.insert(position / 48000) }
                    }
                }
            }) {}
            // Both rolls were heard: from 48000 on, and from 240000 to past the end.
            #expect(rolled > 48_000 && positions.contains(1) && positions.contains(5) && pastEnd > 0, "rolled \(rolled), seconds \(positions.sorted())")
            #expect(wrong <= summary.xruns * 128 * 2 && loudWhileStopped == 0, "wrong \(wrong), loud while stopped \(loudWhileStopped), \(summary)")
            if summary.xruns == 0 { #expect(summary.missedFrames == 0, "\(summary)") }
            #expect(summary.seeks >= 2 && summary.exitReason == "terminate")
        }

        @Test("play --transport refuses more than one file and options that place the file elsewhere (exit 2)")
        func refusals() throws {
            let two = try AQJackCommand.run(["play", "--transport", "a.wav", "b.wav"])
            #expect(two.status == 2 && two.standardError.contains("--transport plays one FILE"), "\(two.standardError)")
            let loop = try AQJackCommand.run(["play", "--transport", "--loop", "2", "a.wav"])
            #expect(loop.status == 2 && loop.standardError.contains("drop --loop, --start-at, --volume and --lv2"), "\(loop.standardError)")
        }
    }
}
