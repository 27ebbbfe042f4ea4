import AQMedia
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

/// The bench's per-event analysis (`aqbench events`) must find each kind of fault where it was
/// put, and tell the server's skips from the recorder's own gaps. A synthetic float WAV, no JACK.
@Suite("Recording events: wrong runs by cause")
struct RecordingEventsTests {
    static let channels = 3
    static let start: UInt32 = 1_000

    /// A float WAV of `frames` frames holding the test signal of JACK frame `start + i` at frame
    /// `i`, except where `signalFrame` says otherwise (nil: silence).
    static func write(_ name: String, frames: Int, edit: (inout [Float]) -> Void = { _ in }, signalFrame: (Int) -> UInt32?) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-events-\(getpid())-\(name).wav").path
        let format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: 0x6C70_636D, mFormatFlags: 9,
                                                 mBytesPerPacket: UInt32(4 * channels), mFramesPerPacket: 1,
                                                 mBytesPerFrame: UInt32(4 * channels), mChannelsPerFrame: UInt32(channels),
                                                 mBitsPerChannel: 32, mReserved: 0)
        let writer = try AudioFileWriter(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true)
        var samples = [Float](repeating: 0, count: frames * channels)
        for frame in 0 ..< frames {
            guard let source = signalFrame(frame) else { continue }
            for channel in 0 ..< channels { samples[frame * channels + channel] = TestSignal.sample(channel: channel, frame: source) }
        }
        edit(&samples)
        try samples.withUnsafeBytes { _ = try writer.writePackets($0.baseAddress!, byteCount: $0.count, startPacket: 0, packetCount: frames) }
        try writer.close()
        return path
    }

    @Test("silence, an older and a newer cycle and altered samples are each one run, at their frame times")
    func runsByKind() throws {
        let path = try Self.write("kinds", frames: 2_000) { frame in
            let expected = Self.start + UInt32(frame)
            switch frame {
            case 256 ..< 512: return nil                        // two cycles of silence
            case 640 ..< 768: return expected + 128             // a newer cycle's signal
            case 1_024 ..< 1_152: return expected - 256         // a signal two cycles old
            default: return expected
            }
        }
        defer { try? FileManager.default.removeItem(atPath: path) }
        var events = try RecordingEvents(path: path, channels: Self.channels, start: Self.start)
        #expect(events.frames == 2_000)
        #expect(events.runs == [
            .init(frameTime: Self.start + 256, length: 256, kind: .silence),
            .init(frameTime: Self.start + 640, length: 128, kind: .offset(128)),
            .init(frameTime: Self.start + 1_024, length: 128, kind: .offset(-256)),
        ])
        // One cycle of the silence is the server's (the generator jumped over it), one the recorder's.
        let serverSkip = FrameJumpLog.Jump(frameTime: Self.start + 384, expected: Self.start + 256)
        let (server, recorderOnly) = events.silence(against: [serverSkip])
        #expect(server == 128)
        #expect(recorderOnly == [.init(frameTime: Self.start + 256 + 128, length: 128, kind: .silence)])
        #expect(RecordingEvents.isNear(recorderOnly[0], jumps: [serverSkip]))
        #expect(!RecordingEvents.isNear(events.runs[2], jumps: [serverSkip]))
        // Read as starting one frame later, every signal frame is one frame old.
        events = try RecordingEvents(path: path, channels: Self.channels, start: Self.start + 1)
        #expect(events.runs.first == .init(frameTime: Self.start + 1, length: 256, kind: .offset(-1)))
    }

    @Test("a sample altered on one channel makes a garbled frame; a clean file has no runs")
    func garbled() throws {
        let clean = try Self.write("clean", frames: 300) { Self.start + UInt32($0) }
        defer { try? FileManager.default.removeItem(atPath: clean) }
        #expect(try RecordingEvents(path: clean, channels: Self.channels, start: Self.start).runs.isEmpty)
        let path = try Self.write("garbled", frames: 300, edit: { samples in
            samples[100 * Self.channels + 2] = Float(bitPattern: samples[100 * Self.channels + 2].bitPattern ^ 1)
        }) { Self.start + UInt32($0) }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let events = try RecordingEvents(path: path, channels: Self.channels, start: Self.start)
        #expect(events.runs == [.init(frameTime: Self.start + 100, length: 1, kind: .garbled)])
    }
}
