import AQServerSuite
import AQTestSupport
import AudioToolbox
import CSndFile
import Foundation
import Testing

// Seed 003 (an Objective-C recorder class: 44.1 kHz mono 16-bit WAVE, callbacks on the current
// run loop, level metering, stop by pause/flush/stop(async)/free/dispose/close) and seed 004 (a
// commented iOS recorder: 44.1 kHz stereo 16-bit big-endian AIFF, buffers of 10000 packets,
// AudioQueueDispose(async) then AudioFileClose), transcribed to Swift against AudioToolbox.
// aqjack-specific lines are marked; the server runs at 48 kHz, so both resample.

/// Seed 003's L17AudioManager, with its four parts.
final class L17AudioManager {
    static let NUM_BUFFERS = 3
    var dataFormat = AudioStreamBasicDescription()
    var queue: AudioQueueRef?
    var buffers: [AudioQueueBufferRef?] = Array(repeating: nil, count: NUM_BUFFERS)
    var audioFile: AudioFileID?
    var currentPacket: Int64 = 0
    let fileName: String
    let device: String

    // b. Init dataFormat
    init(fileName: String, device: String) {
        self.fileName = fileName
        self.device = device
        dataFormat.mSampleRate = 44100.0
        dataFormat.mFormatID = kAudioFormatLinearPCM
        dataFormat.mFramesPerPacket = 1
        dataFormat.mChannelsPerFrame = 1
        dataFormat.mBytesPerFrame = 2
        dataFormat.mBytesPerPacket = 2
        dataFormat.mBitsPerChannel = 16
        dataFormat.mReserved = 0
        dataFormat.mFormatFlags = kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked
    }

    // c. Start Record
    func start() -> [OSStatus] {
        var statuses: [OSStatus] = []
        statuses.append(AudioQueueNewInput(&dataFormat, AudioInputCallback, Unmanaged.passUnretained(self).toOpaque(),
                                           CFRunLoopGetCurrent(), CFRunLoopMode.commonModes.rawValue, 0, &queue))
        var deviceName = device as CFString   // aqjack: the JACK client to record from
        statuses.append(AudioQueueSetProperty(queue!, kAudioQueueProperty_CurrentDevice, &deviceName, UInt32(MemoryLayout<CFString>.size)))
        for i in 0 ..< Self.NUM_BUFFERS {
            statuses.append(AudioQueueAllocateBuffer(queue!, UInt32(dataFormat.mSampleRate / 10.0) * dataFormat.mBytesPerFrame, &buffers[i]))
            statuses.append(AudioQueueEnqueueBuffer(queue!, buffers[i]!, 0, nil))
        }
        var enabledLevelMeter: UInt32 = 1
        statuses.append(AudioQueueSetProperty(queue!, kAudioQueueProperty_EnableLevelMetering, &enabledLevelMeter, UInt32(MemoryLayout<UInt32>.size)))
        currentPacket = 0
        let path = Array(fileName.utf8)
        statuses.append(AudioFileCreateWithURL(CFURLCreateFromFileSystemRepresentation(nil, path, path.count, false), kAudioFileWAVEType,
                                               &dataFormat, .eraseFile, &audioFile))
        statuses.append(AudioQueueStart(queue!, nil))
        return statuses
    }

    // d. Stop Record
    func stop() -> [OSStatus] {
        var statuses: [OSStatus] = []
        statuses.append(AudioQueuePause(queue!))
        statuses.append(AudioQueueFlush(queue!))
        statuses.append(AudioQueueStop(queue!, false))
        for i in 0 ..< Self.NUM_BUFFERS {
            _ = AudioQueueFreeBuffer(queue!, buffers[i]!)   // enqueued buffers answer BufferInQueue, as on Apple's
        }
        statuses.append(AudioQueueDispose(queue!, true))
        statuses.append(AudioFileClose(audioFile!))
        return statuses
    }
}

// a. AudioInputCallback
let AudioInputCallback: AudioQueueInputCallback = { inUserData, inAQ, inBUffer, inStartTime, inNumberPacketDescriptions, inPacketDescs in
    let audioManager = Unmanaged<L17AudioManager>.fromOpaque(inUserData!).takeUnretainedValue()
    var inNumberPacketDescriptions = inNumberPacketDescriptions
    let status = AudioFileWritePackets(audioManager.audioFile!, false, inBUffer.pointee.mAudioDataByteSize, inPacketDescs,
                                       audioManager.currentPacket, &inNumberPacketDescriptions, inBUffer.pointee.mAudioData)
    if status == noErr {
        audioManager.currentPacket += Int64(inNumberPacketDescriptions)
        AudioQueueEnqueueBuffer(audioManager.queue!, inBUffer, 0, nil)
    }
}

extension JackServerSuite {
    @Suite("Seeds 003 and 004: recorders from the walk-throughs, transcribed")
    struct SeedRecorderTests {
        @Test("seed 003: 44.1 kHz mono 16-bit WAVE on the run loop, with meters read while recording")
        func seed003() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("s3gen"), channelCount: 1,
                                                wavePeriod: GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.9, sampleRate: 48000))
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-seed003-\(getpid()).wav").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let manager = L17AudioManager(fileName: path, device: generator.client.name)
            let started = manager.start()
            #expect(started.allSatisfy { $0 == noErr }, "\(started)")
            // The callbacks run on this thread's run loop, as on the app's main thread.
            var meters: [AudioQueueLevelMeterState] = []
            for _ in 0 ..< 8 {
                CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.25, false)
                var level = AudioQueueLevelMeterState()
                var size = UInt32(MemoryLayout<AudioQueueLevelMeterState>.size)
                #expect(AudioQueueGetProperty(manager.queue!, kAudioQueueProperty_CurrentLevelMeter, &level, &size) == noErr)
                meters.append(level)
            }
            let stopped = manager.stop()
            #expect(stopped.allSatisfy { $0 == noErr }, "\(stopped)")

            // A 0.9 sine: peak 0.9, RMS 0.9/√2, once buffers have come back.
            let last = try #require(meters.last)
            #expect(abs(last.mPeakPower - 0.9) < 0.01)
            #expect(abs(Double(last.mAveragePower) - 0.9 / 2.0.squareRoot()) < 0.01)

            let file = try SoundFileContents(path: path)
            // A WAVE file (written as RF64, turned back into WAVE at close: libsndfile then labels it WAVEX).
            #expect([Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), Int32(SF_FORMAT_WAVEX | SF_FORMAT_PCM_16)]
                .contains(file.format & Int32(SF_FORMAT_TYPEMASK | SF_FORMAT_SUBMASK)))
            #expect(file.sampleRate == 44100 && file.channels == 1)
            #expect(Int64(file.frames) == manager.currentPacket && file.frames >= 44100 * 3 / 2)
            let snr = SineAnalysis.fittedSNR(file.samples[2048 ..< file.frames - 2048], frequency: 1000, sampleRate: 44100)
            print("seed 003 SNR \(snr) dB")
            #expect(snr >= 90)
        }

        @Test("seed 004: 44.1 kHz stereo 16-bit big-endian AIFF, 10000-packet buffers, disposed asynchronously then closed")
        func seed004() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("s4gen"), channelCount: 2,
                                                wavePeriod: GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.9, sampleRate: 48000))
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-seed004-\(getpid()).aiff").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let aqData = UnsafeMutablePointer<AQRecorderState>.allocate(capacity: 1)
            aqData.initialize(to: AQRecorderState())
            defer { aqData.deinitialize(count: 1); aqData.deallocate() }
            aqData.pointee.mDataFormat.mFormatID = kAudioFormatLinearPCM
            aqData.pointee.mDataFormat.mSampleRate = 44100.0
            aqData.pointee.mDataFormat.mChannelsPerFrame = 2
            aqData.pointee.mDataFormat.mBitsPerChannel = 16
            aqData.pointee.mDataFormat.mBytesPerPacket = aqData.pointee.mDataFormat.mChannelsPerFrame * UInt32(MemoryLayout<Int16>.size)
            aqData.pointee.mDataFormat.mBytesPerFrame = aqData.pointee.mDataFormat.mChannelsPerFrame * UInt32(MemoryLayout<Int16>.size)
            aqData.pointee.mDataFormat.mFramesPerPacket = 1
            let fileType = kAudioFileAIFFType
            aqData.pointee.mDataFormat.mFormatFlags = kLinearPCMFormatFlagIsBigEndian | kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked
            var format = aqData.pointee.mDataFormat
            var queue: AudioQueueRef?
            #expect(AudioQueueNewInput(&format, HandleInputBuffer, aqData, nil, CFRunLoopMode.commonModes.rawValue, 0, &queue) == noErr)
            aqData.pointee.mQueue = queue
            var deviceName = generator.client.name as CFString   // aqjack: the JACK client to record from
            AudioQueueSetProperty(queue!, kAudioQueueProperty_CurrentDevice, &deviceName, UInt32(MemoryLayout<CFString>.size))
            var dataFormatSize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            AudioQueueGetProperty(queue!, kAudioQueueProperty_StreamDescription, &format, &dataFormatSize)
            aqData.pointee.mDataFormat = format
            let filePath = Array(path.utf8)
            var audioFile: AudioFileID?
            #expect(AudioFileCreateWithURL(CFURLCreateFromFileSystemRepresentation(nil, filePath, filePath.count, false), fileType,
                                           &format, .eraseFile, &audioFile) == noErr)
            aqData.pointee.mAudioFile = audioFile
            aqData.pointee.bufferByteSize = 10000 * aqData.pointee.mDataFormat.mBytesPerPacket
            for i in 0 ..< kNumberBuffers {
                AudioQueueAllocateBuffer(queue!, aqData.pointee.bufferByteSize, &aqData.pointee.mBuffers[i])
                AudioQueueEnqueueBuffer(queue!, aqData.pointee.mBuffers[i]!, 0, nil)
            }
            aqData.pointee.mCurrentPacket = 0
            aqData.pointee.mIsRunning = true
            #expect(AudioQueueStart(queue!, nil) == noErr)
            usleep(2_000_000)
            // endBtn: dispose asynchronously, then close the file at once.
            #expect(AudioQueueDispose(aqData.pointee.mQueue!, false) == noErr)
            aqData.pointee.mQueue = nil
            #expect(AudioFileClose(aqData.pointee.mAudioFile!) == noErr)
            aqData.pointee.mAudioFile = nil
            usleep(300_000)   // a late callback meets a closed file: kAudioFileNotOpenError, no crash

            let file = try SoundFileContents(path: path)
            #expect(file.format & Int32(SF_FORMAT_TYPEMASK | SF_FORMAT_SUBMASK) == Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_16))
            #expect(file.sampleRate == 44100 && file.channels == 2)
            // Every packet a callback wrote, and nothing else. Whole 10000-packet buffers as a
            // rule; the partly filled one the asynchronous dispose hands back (aqjack keeps the
            // frames captured so far) reaches the file only when its callback runs before this
            // thread clears mQueue, one statement after AudioQueueDispose returns: seen once, in a
            // CI run whose server reported 1,390 xruns.
            #expect(file.frames >= 30000 && Int64(file.frames) == aqData.pointee.mCurrentPacket)
            for channel in 0 ..< 2 {
                let mono = stride(from: channel, to: file.samples.count, by: 2).map { file.samples[$0] }
                let snr = SineAnalysis.fittedSNR(mono[2048 ..< mono.count - 2048], frequency: 1000, sampleRate: 44100)
                print("seed 004 channel \(channel + 1) SNR \(snr) dB")
                #expect(snr >= 90)
            }
        }
    }
}
