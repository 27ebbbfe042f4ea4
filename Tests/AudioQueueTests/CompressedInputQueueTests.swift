import AQCodecs
import AQJack
import AQMedia
import AQServerSuite
import AQTestSupport
import AudioQueue
import CAudioTypes
import Foundation
import Synchronization
import Testing

/// Collects the packets a compressed recording queue delivers.
final class PacketLog: @unchecked Sendable {
    private let lock = NSLock()
    private var packets: [[UInt8]] = []
    private var stamps: [Double] = []

    func append(_ buffer: AudioQueueBufferRef, _ startTime: AudioTimeStamp) {
        let count = Int(buffer.pointee.mPacketDescriptionCount)
        lock.withLock {
            stamps.append(startTime.mSampleTime)
            for index in 0 ..< count {
                let description = buffer.pointee.mPacketDescriptions![index]
                packets.append(Array(UnsafeRawBufferPointer(start: buffer.pointee.mAudioData + Int(description.mStartOffset),
                                                            count: Int(description.mDataByteSize))))
            }
        }
    }

    var all: [[UInt8]] { lock.withLock { packets } }
}

extension JackServerSuite {
    @Suite("Compressed recording queue")
    struct CompressedInputQueueTests {
        @Test("ALAC across two freewheel switches (about 10 s of audio in 0.2 s): the decoded stream is the generator's 16-bit signal, frame for frame, nothing lost")
        func alacAcrossFreewheel() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("fwgen"), channelCount: 2, integerBits: 16)
            var format = AudioStreamBasicDescription()
            format.mFormatID = AudioFormatValues.appleLossless
            format.mChannelsPerFrame = 2
            format.mFormatFlags = ALAC.formatFlag(bitDepth: 16)
            let log = PacketLog()
            let queue = try AudioInputQueue(format: format, driver: JackDriver(name: TestServer.uniqueClientName("fwrec"))) { queue, buffer, startTime in
                log.append(buffer, startTime)
                try? queue.enqueue(buffer)
            }
            defer { queue.dispose() }
            #expect(queue.format.mFramesPerPacket == 4096 && queue.format.mSampleRate == 48000)
            let cookie = queue.magicCookie
            #expect(cookie.count == 24)
            queue.channelSources = ["\(generator.client.name):out_1", "\(generator.client.name):out_2"]
            for _ in 0 ..< 4 { try queue.enqueue(queue.allocateBuffer(byteCapacity: queue.maximumOutputPacketSize * 4)) }
            try queue.start()
            usleep(1_000_000)
            for _ in 0 ..< 2 {
                try generator.client.setFreewheel(true)
                usleep(100_000)
                try generator.client.setFreewheel(false)
                usleep(500_000)
            }
            queue.stop()
            let inserted = queue.insertedSilenceFrameCount
            let repeated = queue.repeatedFrameCount
            let underruns = queue.underrunFrameCount
            let decoder = try ALACDecoder(cookie: cookie, sampleRate: 48000, channelCount: 2)
            var samples: [Float] = []
            for packet in log.all {
                try packet.withUnsafeBytes { try decoder.decode($0) { pointer, frames in samples += UnsafeBufferPointer(start: pointer, count: frames * 2) } }
            }
            print("ALAC across 2 freewheel switches: \(samples.count / 2) frames, \(inserted) silent frames inserted, \(repeated) repeated frames dropped, underruns \(underruns)")
            #expect(underruns == 0)
            #expect(samples.count / 2 > 48000 * 2)
            let check = integerSignalStartAllowingSilence(samples, channels: 2, bits: 16)
            #expect(check != nil, "the stream is not the generator's signal on the device timeline")
            #expect((check?.silentFrames ?? -1) <= inserted)
        }
    }
}
