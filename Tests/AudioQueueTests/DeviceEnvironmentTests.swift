import AQServerSuite
import AQTestSupport
import AudioToolbox
import Foundation
import Testing

/// What a recording queue's callback received: each buffer's start frame and float samples.
final class BufferSamplesLog: @unchecked Sendable {
    let lock = NSLock()
    var buffers: [(start: Double, samples: [Float])] = []
}

let bufferSamplesCallback: AudioQueueInputCallback = { userData, queue, buffer, startTime, _, _ in
    let log = Unmanaged<BufferSamplesLog>.fromOpaque(userData!).takeUnretainedValue()
    let count = Int(buffer.pointee.mAudioDataByteSize) / 4
    let samples = Array(UnsafeBufferPointer(start: buffer.pointee.mAudioData.assumingMemoryBound(to: Float.self), count: count))
    log.lock.withLock { log.buffers.append((startTime.pointee.mSampleTime, samples)) }
    AudioQueueEnqueueBuffer(queue, buffer, 0, nil)
}

extension JackServerSuite {
    @Suite("The device of an unchanged program, chosen by the environment (AQJACK_*)")
    struct DeviceEnvironmentTests {
        static let variables = ["AQJACK_CLIENT_NAME", "AQJACK_CONNECT", "AQJACK_SERVER"]

        @Test("AQJACK_CLIENT_NAME and AQJACK_CONNECT: AudioQueueNewInput's queue is that client, fed by the ports the globs choose in their order, and its first buffer is the generator's signal from its first frame on (nothing lost to the start)")
        func recordsFromTheChosenPorts() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("envgen"), channelCount: 2)
            let name = TestServer.uniqueClientName("envrec")
            setenv("AQJACK_CLIENT_NAME", name, 1)
            // Channel 1 from out_2, channel 2 from out_1: the globs' order, not the graph's.
            setenv("AQJACK_CONNECT", "\(generator.client.name):out_2, \(generator.client.name):out_1 nobody:*", 1)
            defer { Self.variables.forEach { unsetenv($0) } }
            var format = pcmFormat(rate: 48000, channels: 2, bits: 32, float: true)
            let log = BufferSamplesLog()
            var queue: AudioQueueRef?
            try #require(AudioQueueNewInput(&format, bufferSamplesCallback, Unmanaged.passUnretained(log).toOpaque(), nil, nil, 0, &queue) == noErr)
            let aq = try #require(queue)
            for _ in 0 ..< 3 {
                var buffer: AudioQueueBufferRef?
                #expect(AudioQueueAllocateBuffer(aq, 4800 * 8, &buffer) == noErr)
                #expect(AudioQueueEnqueueBuffer(aq, buffer!, 0, nil) == noErr)
            }
            #expect(AudioQueueStart(aq, nil) == noErr)
            #expect(generator.ports[1].connections == ["\(name):in_1"])
            #expect(generator.ports[0].connections == ["\(name):in_2"])
            usleep(600_000)
            AudioQueueStop(aq, true)
            AudioQueueDispose(aq, true)
            let buffers = log.lock.withLock { log.buffers }
            let first = try #require(buffers.first)
            var wrong = 0, frames = 0
            for buffer in buffers {
                let start = UInt32(truncatingIfNeeded: Int64(buffer.start))
                for frame in 0 ..< buffer.samples.count / 2 {
                    let time = start &+ UInt32(frame)
                    if buffer.samples[2 * frame] != TestSignal.sample(channel: 1, frame: time) { wrong += 1 }
                    if buffer.samples[2 * frame + 1] != TestSignal.sample(channel: 0, frame: time) { wrong += 1 }
                }
                frames += buffer.samples.count / 2
            }
            // The first buffer already holds the signal on both channels: the queue connected
            // before its first frame.
            #expect(first.samples.count == 9600 && wrong == 0, "\(wrong) wrong samples in \(frames) frames")
            #expect(frames >= 19200)
        }

        @Test("AQJACK_CONNECT matching no port of the queue's direction: AudioQueueNewInput and AudioQueueNewOutput answer kAudioQueueErr_InvalidDevice and make no queue")
        func globMatchingNothing() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("envnone"), channelCount: 1)
            // The generator's output port can feed a recording queue but not take a player's frames.
            setenv("AQJACK_CONNECT", "\(generator.client.name):*", 1)
            setenv("AQJACK_CLIENT_NAME", TestServer.uniqueClientName("envbad"), 1)
            defer { Self.variables.forEach { unsetenv($0) } }
            var format = pcmFormat(rate: 48000, channels: 1, bits: 32, float: true)
            var output: AudioQueueRef?
            #expect(AudioQueueNewOutput(&format, { _, _, _ in }, nil, nil, nil, 0, &output) == kAudioQueueErr_InvalidDevice)
            #expect(output == nil)
            setenv("AQJACK_CONNECT", "nobody:*", 1)
            var input: AudioQueueRef?
            #expect(AudioQueueNewInput(&format, { _, _, _, _, _, _ in }, nil, nil, nil, 0, &input) == kAudioQueueErr_InvalidDevice)
            #expect(input == nil)
        }
    }
}
