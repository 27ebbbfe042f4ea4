import AQServerSuite
import AQTestSupport
import AudioToolbox
import Foundation
import Synchronization
import Testing

/// What a test tap does, reached through the callback's client data.
final class TapScript: @unchecked Sendable {
    enum Kind { case gain(Float), delay(Int), siphon }
    let kind: Kind
    /// Samples the tap saw (channel 0), its callbacks' frame counts and queue times.
    var seen: [Float] = []
    var calls: [(frames: UInt32, sampleTime: Double, queueTime: Double, flags: AudioQueueProcessingTapFlags)] = []
    var statuses: [OSStatus] = []
    private var line: [[Float]] = []
    init(_ kind: Kind) { self.kind = kind }

    /// The C callback every test tap uses.
    static let callback: AudioQueueProcessingTapCallback = { clientData, tap, frames, timeStamp, flags, outFrames, ioData in
        let script = Unmanaged<TapScript>.fromOpaque(clientData).takeUnretainedValue()
        var queueTime: Float64 = -1
        var queueFrames: UInt32 = 0
        script.statuses.append(AudioQueueProcessingTapGetQueueTime(tap, &queueTime, &queueFrames))
        script.calls.append((frames, timeStamp.pointee.mSampleTime, queueTime, flags.pointee))
        let buffers = UnsafeMutableAudioBufferListPointer(ioData)
        switch script.kind {
        case .siphon:
            script.seen += UnsafeBufferPointer(start: buffers[0].mData!.assumingMemoryBound(to: Float.self), count: Int(frames))
            // A siphon may not ask for source audio.
            var got: UInt32 = 0
            var sourceFlags: AudioQueueProcessingTapFlags = []
            script.statuses.append(AudioQueueProcessingTapGetSourceAudio(tap, frames, timeStamp, &sourceFlags, &got, ioData))
        case let .gain(gain):
            var got: UInt32 = 0
            var sourceFlags: AudioQueueProcessingTapFlags = []
            script.statuses.append(AudioQueueProcessingTapGetSourceAudio(tap, frames, timeStamp, &sourceFlags, &got, ioData))
            for buffer in buffers {
                let samples = buffer.mData!.assumingMemoryBound(to: Float.self)
                for index in 0 ..< Int(got) { samples[index] *= gain }
            }
            outFrames.pointee = got
        case let .delay(delay):
            var got: UInt32 = 0
            var sourceFlags: AudioQueueProcessingTapFlags = []
            script.statuses.append(AudioQueueProcessingTapGetSourceAudio(tap, frames, timeStamp, &sourceFlags, &got, ioData))
            if script.line.isEmpty { script.line = Array(repeating: Array(repeating: 0, count: delay), count: buffers.count) }
            for (channel, buffer) in buffers.enumerated() {
                let samples = buffer.mData!.assumingMemoryBound(to: Float.self)
                script.line[channel] += UnsafeBufferPointer(start: samples, count: Int(got))
                for index in 0 ..< Int(got) { samples[index] = script.line[channel][index] }
                script.line[channel].removeFirst(Int(got))
            }
            outFrames.pointee = got
        }
    }
}

/// Apple's processing taps on playback queues rendered offline (AudioQueueOfflineRender, the
/// listing of Apple's AQOfflineRenderTest with a tap added): no server.
@Suite("Processing taps (AudioQueueProcessingTapNew), offline")
struct ProcessingTapTests {
    static let frames = 20_000

    /// A 16-bit stereo AIFF of the integer test signal.
    static func source(_ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-tap-\(getpid())-\(name).aiff").path
        try writeSignalFile(path: path, fileType: kAudioFileAIFFType, format: pcmFormat(rate: 48000, channels: 2, bits: 16, bigEndian: true), frames: frames)
        return path
    }

    /// Renders `path` with `script`'s tap (flags `flags`) on the queue, or none; checks the
    /// tap's creation and returns the rendered interleaved samples.
    static func render(_ path: String, script: TapScript?, flags: AudioQueueProcessingTapFlags = .postEffects) throws -> [Float] {
        var made: OSStatus = noErr
        var maxFrames: UInt32 = 0
        var processingFormat = AudioStreamBasicDescription()
        let (statuses, samples, _) = offlineRenderWithListing(path: path) { queue in
            guard let script else { return }
            var tap: AudioQueueProcessingTapRef?
            made = AudioQueueProcessingTapNew(queue, TapScript.callback, Unmanaged.passUnretained(script).toOpaque(), flags,
                                              &maxFrames, &processingFormat, &tap)
        }
        #expect(statuses.allSatisfy { $0 == noErr }, "\(statuses)")
        if script != nil {
            #expect(made == noErr)
            #expect(maxFrames == 2048)
            #expect(processingFormat.mFormatFlags == kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked | kAudioFormatFlagIsNonInterleaved)
            #expect(processingFormat.mChannelsPerFrame == 2 && processingFormat.mBytesPerFrame == 4 && processingFormat.mSampleRate == 48000)
        }
        #expect(samples.count == 2 * frames)
        return samples
    }

    @Test("a gain tap (×2 through GetSourceAudio) makes every rendered sample exactly twice the untapped one: +6.02 dB")
    func gainTap() throws {
        let path = try Self.source("gain")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let plain = try Self.render(path, script: nil)
        let script = TapScript(.gain(2))
        let doubled = try Self.render(path, script: script)
        #expect(zip(plain, doubled).filter { $1 != 2 * $0 }.count == 0)
        #expect(plain.contains { $0 != 0 })
        #expect(script.statuses.allSatisfy { $0 == noErr })
        // Callbacks of at most maxFrames, on the queue's timeline from 0, without gaps; the
        // first says StartOfStream.
        var next = 0.0
        for call in script.calls {
            #expect(call.frames <= 2048 && call.sampleTime == next && call.queueTime == next)
            next += Double(call.frames)
        }
        #expect(Int(next) == Self.frames)
        #expect(script.calls.first.map { $0.flags.contains(.startOfStream) } == true)
        #expect(script.calls.dropFirst().allSatisfy { !$0.flags.contains(.startOfStream) && $0.flags.contains(.postEffects) })
    }

    @Test("a siphon tap sees every frame untouched and changes nothing; its GetSourceAudio call is refused with kAudioQueueErr_InvalidTapType")
    func siphonTap() throws {
        let path = try Self.source("siphon")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let plain = try Self.render(path, script: nil)
        let script = TapScript(.siphon)
        let tapped = try Self.render(path, script: script, flags: .siphon)
        #expect(tapped == plain)
        #expect(script.seen == stride(from: 0, to: plain.count, by: 2).map { plain[$0] })
        #expect(script.statuses.enumerated().allSatisfy { $0.offset % 2 == 0 ? $0.element == noErr : $0.element == kAudioQueueErr_InvalidTapType })
    }

    @Test("a tap that delays by 100 frames: the output is the untapped output 100 frames later, zeros first (a tap reports no latency, so none is compensated)")
    func delayTap() throws {
        let path = try Self.source("delay")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let plain = try Self.render(path, script: nil)
        let delayed = try Self.render(path, script: TapScript(.delay(100)))
        #expect(delayed.prefix(200).allSatisfy { $0 == 0 })
        #expect(Array(delayed.dropFirst(200)) == Array(plain.prefix(plain.count - 200)))
    }

    @Test("tap errors have Apple's codes: a second tap, GetSourceAudio and GetQueueTime outside the callback, a tap on a running queue, flags naming no kind; dispose works once")
    func errors() throws {
        var format = pcmFormat(rate: 48000, channels: 2, bits: 16)
        var queue: AudioQueueRef?
        let callback: AudioQueueOutputCallback = { _, _, _ in }
        #expect(AudioQueueNewOutput(&format, callback, nil, nil, nil, 0, &queue) == noErr)
        let aq = try #require(queue)
        defer { AudioQueueDispose(aq, true) }
        let script = TapScript(.gain(1))
        let data = Unmanaged.passUnretained(script).toOpaque()
        var maxFrames: UInt32 = 0
        var processing = AudioStreamBasicDescription()
        var tap: AudioQueueProcessingTapRef?
        #expect(AudioQueueProcessingTapNew(aq, TapScript.callback, data, [], &maxFrames, &processing, &tap) == kAudioQueueErr_InvalidTapType)
        #expect(AudioQueueProcessingTapNew(aq, TapScript.callback, data, .preEffects, &maxFrames, &processing, &tap) == noErr)
        let made = try #require(tap)
        var second: AudioQueueProcessingTapRef?
        #expect(AudioQueueProcessingTapNew(aq, TapScript.callback, data, .preEffects, &maxFrames, &processing, &second) == kAudioQueueErr_TooManyTaps)
        var stamp = AudioTimeStamp()
        var flags: AudioQueueProcessingTapFlags = []
        var got: UInt32 = 0
        var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 1, mDataByteSize: 0, mData: nil))
        #expect(AudioQueueProcessingTapGetSourceAudio(made, 128, &stamp, &flags, &got, &list) == kAudioQueueErr_InvalidTapContext)
        var time: Float64 = 0
        #expect(AudioQueueProcessingTapGetQueueTime(made, &time, &got) == kAudioQueueErr_InvalidTapContext)
        #expect(AudioQueueProcessingTapDispose(made) == noErr)
        #expect(AudioQueueProcessingTapDispose(made) == kAudioQueueErr_InvalidTapContext)
        // Once disposed, a new tap may go on, but not while the queue runs (rendering offline).
        var render = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
        #expect(AudioQueueSetOfflineRenderFormat(aq, &render, nil) == noErr)
        #expect(AudioQueueStart(aq, nil) == noErr)
        #expect(AudioQueueProcessingTapNew(aq, TapScript.callback, data, .preEffects, &maxFrames, &processing, &tap) == kAudioQueueErr_InvalidRunState)
        #expect(AudioQueueStop(aq, true) == noErr)
        #expect(AudioQueueProcessingTapNew(aq, TapScript.callback, data, .preEffects, &maxFrames, &processing, &tap) == noErr)
        #expect(AudioQueueStart(aq, nil) == noErr)
        #expect(AudioQueueProcessingTapDispose(try #require(tap)) == kAudioQueueErr_InvalidRunState)
    }
}

/// The recording queue's callback for the tap test: logs each buffer with its start time.
private let tapRecordingCallback: AudioQueueInputCallback = { userData, queue, buffer, startTime, _, _ in
    let log = Unmanaged<DeliveryLog>.fromOpaque(userData!).takeUnretainedValue()
    let count = Int(buffer.pointee.mAudioDataByteSize) / 4
    let floats = buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
    log.append(.init(startTime: startTime.pointee, samples: Array(UnsafeBufferPointer(start: floats, count: count))))
    AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
}

extension JackServerSuite {
    @Suite("Processing taps on a recording queue")
    struct RecordingTapTests {
        @Test("a ×0.5 tap on a float recording queue (AudioQueueNewInput) fed by the generator: every sample exactly half the signal at its timestamp")
        func gainTapOnInput() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("tapgen"), channelCount: 2)
            var format = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
            let log = DeliveryLog()
            var queue: AudioQueueRef?
            #expect(AudioQueueNewInput(&format, tapRecordingCallback, Unmanaged.passUnretained(log).toOpaque(), nil, nil, 0, &queue) == noErr)
            let aq = try #require(queue)
            var device = generator.client.name as CFString
            #expect(AudioQueueSetProperty(aq, kAudioQueueProperty_CurrentDevice, &device, UInt32(MemoryLayout<CFString>.size)) == noErr)
            let script = TapScript(.gain(0.5))
            var maxFrames: UInt32 = 0
            var processing = AudioStreamBasicDescription()
            var tap: AudioQueueProcessingTapRef?
            #expect(AudioQueueProcessingTapNew(aq, TapScript.callback, Unmanaged.passUnretained(script).toOpaque(), .preEffects,
                                               &maxFrames, &processing, &tap) == noErr)
            for _ in 0 ..< 4 {
                var buffer: AudioQueueBufferRef?
                #expect(AudioQueueAllocateBuffer(aq, 4800 * 8, &buffer) == noErr)
                #expect(AudioQueueEnqueueBuffer(aq, try #require(buffer), 0, nil) == noErr)
            }
            #expect(AudioQueueStart(aq, nil) == noErr)
            usleep(1_000_000)
            #expect(AudioQueueStop(aq, true) == noErr)
            #expect(AudioQueueDispose(aq, true) == noErr)
            var frames = 0, wrong = 0
            for delivery in log.deliveries {
                let first = UInt32(truncatingIfNeeded: Int64(delivery.startTime.mSampleTime))
                for frame in 0 ..< delivery.samples.count / 2 {
                    for channel in 0 ..< 2 where delivery.samples[2 * frame + channel] != 0.5 * TestSignal.sample(channel: channel, frame: first &+ UInt32(frame)) {
                        wrong += 1
                    }
                }
                frames += delivery.samples.count / 2
            }
            #expect(frames >= 38_400 && wrong == 0, "\(frames) frames, \(wrong) samples wrong")
            // On a recording queue GetSourceAudio works and GetQueueTime is the output queues' only.
            #expect(script.statuses.enumerated().allSatisfy { $0.offset % 2 == 0 ? $0.element == kAudioQueueErr_InvalidTapType : $0.element == noErr })
        }
    }
}
