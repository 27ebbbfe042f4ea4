import AQCodecs
import AQCore
import AQMedia
import AQSession
import CAudioTypes
import Foundation
import Testing

/// Transport-following playback on the offline driver's transport: no server, no sleep. The
/// feed runs at the end of each run, so the test runs one cycle at a time and every answer is
/// deterministic.
@Suite("Transport playback on the offline driver (no server needed)")
struct TransportPlaybackTests {
    static let fileFrames = 120_000
    static let period = 256

    /// File frame `frame`'s sample on `channel`: (frame + 1) / 2^20, negated on the second
    /// channel; exact in a Float, so a sample names its frame.
    static func sample(channel: Int, frame: Int) -> Float {
        let value = Float(frame + 1) / 1_048_576
        return channel == 0 ? value : -value
    }

    /// A 2-channel float WAV of ``sample(channel:frame:)`` at 48 kHz.
    static func writeFile(_ path: String, sampleRate: Double = 48000) throws {
        let format = CompressedFormatValues.floatPCM(sampleRate: sampleRate, channelCount: 2)
        let writer = try AudioFileWriter(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true)
        var samples = [Float](repeating: 0, count: fileFrames * 2)
        for frame in 0 ..< fileFrames {
            for channel in 0 ..< 2 { samples[frame * 2 + channel] = sample(channel: channel, frame: frame) }
        }
        try samples.withUnsafeBytes { try writer.writePackets($0.baseAddress!, byteCount: $0.count, startPacket: 0, packetCount: fileFrames) }
        try writer.close()
    }

    /// One cycle on the driver: whether it rolled, the transport frame of its first frame, and
    /// its two outputs.
    struct Cycle {
        var rolled: Bool
        var frame: Int
        var outputs: [[Float]]
    }

    static func runCycle(_ driver: OfflineDriver) -> Cycle {
        var outputs = [[Float]](repeating: [], count: 2)
        driver.run(frames: period, output: { channel, _, samples in outputs[channel] = Array(samples) })
        let state = driver.transportState
        return Cycle(rolled: state.isRolling, frame: Int(state.frame) - (state.isRolling ? period : 0), outputs: outputs)
    }

    /// The frames of a rolling cycle that are not the file's frame at their transport position
    /// (silence past the file's end).
    static func wrongFrames(_ cycle: Cycle) -> Int {
        (0 ..< period).filter { index in
            let frame = cycle.frame + index
            return (0 ..< 2).contains { channel in
                let expected = frame < fileFrames ? sample(channel: channel, frame: frame) : 0
                return cycle.outputs[channel][index].bitPattern != expected.bitPattern
            }
        }.count
    }

    @Test("a located start rolls from the located frame's own sample; a locate while rolling holds the transport until the file is there and rolls on from exactly that frame; silence while stopped and past the end; nothing missed")
    func followsTheTransport() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-transport-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.writeFile(path)

        // What a library user writes.
        let driver = OfflineDriver(sampleRate: 48000, bufferSize: Self.period)
        let session = try TransportPlaybackSession(source: FrameSource.open(path), driver: driver)
        try session.start()
        // (end of what a library user writes)
        #expect(session.channels == ["offline:out_1", "offline:out_2"])

        try driver.locateTransport(to: 10_000)
        for _ in 0 ..< 3 {
            let cycle = Self.runCycle(driver)
            #expect(!cycle.rolled && cycle.frame == 10_000 && cycle.outputs.allSatisfy { $0.allSatisfy { $0 == 0 } })
        }
        // Located while stopped: the file is there, so the start rolls at once.
        driver.startTransport()
        var rolled = 0, wrong = 0
        var first = Self.runCycle(driver)
        #expect(first.rolled && first.frame == 10_000)
        wrong += Self.wrongFrames(first)
        rolled += Self.period
        for _ in 0 ..< 40 {
            let cycle = Self.runCycle(driver)
            #expect(cycle.rolled)
            wrong += Self.wrongFrames(cycle)
            rolled += Self.period
        }
        #expect(driver.transportState.frame == UInt32(10_000 + 41 * Self.period))

        // A locate while rolling: starting (silent, not rolling) until the ring holds 100000.
        try driver.locateTransport(to: 100_000)
        var held = 0
        first = Self.runCycle(driver)
        while !first.rolled, held < 20 {
            #expect(first.frame == 100_000 && first.outputs.allSatisfy { $0.allSatisfy { $0 == 0 } })
            held += 1
            first = Self.runCycle(driver)
        }
        #expect(held >= 1 && held <= 3, "held for \(held) cycles")
        #expect(first.rolled && first.frame == 100_000)
        wrong += Self.wrongFrames(first)
        rolled += Self.period
        // Through the file's end (120000) and 2000 frames past it.
        while driver.transportState.frame < 122_000 {
            let cycle = Self.runCycle(driver)
            wrong += Self.wrongFrames(cycle)
            rolled += Self.period
        }
        driver.stopTransport()
        for _ in 0 ..< 3 {
            let cycle = Self.runCycle(driver)
            #expect(!cycle.rolled && cycle.outputs.allSatisfy { $0.allSatisfy { $0 == 0 } })
        }
        #expect(wrong == 0)
        #expect(session.missedFrames == 0)
        #expect(session.framesPlayed == rolled)
        #expect(session.failure == nil)
        session.stop()
    }

    @Test("a transport that rolls without waiting (sync timeout 0) counts every frame it rolled over before the file was there as missed; from there on every frame is the file's at its transport position")
    func missedFramesAreCounted() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-transport-missed-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.writeFile(path)
        let driver = OfflineDriver(sampleRate: 48000, bufferSize: Self.period, transportSyncTimeout: 0)
        let session = try TransportPlaybackSession(source: FrameSource.open(path), driver: driver)
        try session.start()
        driver.startTransport()
        var silent = 0, wrong = 0, firstSound: Int?
        for _ in 0 ..< 100 {
            let cycle = Self.runCycle(driver)
            #expect(cycle.rolled)
            for index in 0 ..< Self.period {
                let frame = cycle.frame + index
                let left = cycle.outputs[0][index], right = cycle.outputs[1][index]
                if left == 0 && right == 0 && firstSound == nil {
                    silent += 1
                } else {
                    if firstSound == nil { firstSound = frame }
                    if left.bitPattern != Self.sample(channel: 0, frame: frame).bitPattern
                        || right.bitPattern != Self.sample(channel: 1, frame: frame).bitPattern { wrong += 1 }
                }
            }
        }
        #expect(firstSound != nil && wrong == 0)
        #expect(silent > 0 && session.missedFrames == silent, "silent \(silent), missed \(session.missedFrames)")
        #expect(session.framesPlayed == 100 * Self.period - silent)
        session.stop()
    }

    @Test("a file at another rate than the device's is refused, naming both rates and the conversion")
    func otherRateRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-transport-rate-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Self.writeFile(path, sampleRate: 44100)
        let driver = OfflineDriver(sampleRate: 48000, bufferSize: Self.period)
        do {
            _ = try TransportPlaybackSession(source: FrameSource.open(path), driver: driver)
            Issue.record("a 44.1 kHz file was taken by a 48 kHz device")
        } catch let error as AudioDriverError {
            #expect(error.description.contains("44100 Hz") && error.description.contains("48000 Hz") && error.description.contains("aqjack convert -r 48000"), "\(error)")
        }
    }
}
