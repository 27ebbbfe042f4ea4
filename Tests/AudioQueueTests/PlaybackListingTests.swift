import AQCodecs
import AQCore
import AQJack
import AQMedia
import AQServerSuite
import AQTestSupport
import AudioQueue
import AudioToolbox
import Foundation
import Synchronization
import Testing

// Listings 3-1 ... 3-18 of the Audio Queue Services Programming Guide ("Playing Audio", seed
// 001), transcribed to Swift against AudioToolbox with the listings' own structure. aqjack-
// specific lines are marked: the device (the JACK client the queue feeds) is chosen with
// kAudioQueueProperty_CurrentDevice, here a recording queue that checks what was played.

struct AQPlayerState {
    var mDataFormat = AudioStreamBasicDescription()
    var mQueue: AudioQueueRef?
    var mBuffers: [AudioQueueBufferRef?] = Array(repeating: nil, count: kNumberBuffers)
    var mAudioFile: AudioFileID?
    var bufferByteSize: UInt32 = 0
    var mCurrentPacket: Int64 = 0
    var mNumPacketsToRead: UInt32 = 0
    var mPacketDescs: UnsafeMutablePointer<AudioStreamPacketDescription>?
    var mIsRunning = false
}

// Listings 3-2 ... 3-6: the playback audio queue callback.
let HandleOutputBuffer: AudioQueueOutputCallback = { aqData, inAQ, inBuffer in
    let pAqData = aqData!.assumingMemoryBound(to: AQPlayerState.self)
    if !pAqData.pointee.mIsRunning { return }
    var numBytesReadFromFile: UInt32 = 0
    var numPackets = pAqData.pointee.mNumPacketsToRead
    AudioFileReadPackets(pAqData.pointee.mAudioFile!, false, &numBytesReadFromFile, pAqData.pointee.mPacketDescs,
                         pAqData.pointee.mCurrentPacket, &numPackets, inBuffer.pointee.mAudioData)
    if numPackets > 0 {
        inBuffer.pointee.mAudioDataByteSize = numBytesReadFromFile
        AudioQueueEnqueueBuffer(pAqData.pointee.mQueue!, inBuffer, pAqData.pointee.mPacketDescs != nil ? numPackets : 0,
                                pAqData.pointee.mPacketDescs)
        pAqData.pointee.mCurrentPacket += Int64(numPackets)
    } else {
        AudioQueueStop(pAqData.pointee.mQueue!, false)
        pAqData.pointee.mIsRunning = false
    }
}

// Listing 3-7: deriving a playback audio queue buffer size.
func DeriveBufferSize(_ ASBDesc: inout AudioStreamBasicDescription, _ maxPacketSize: UInt32, _ seconds: Float64,
                      _ outBufferSize: inout UInt32, _ outNumPacketsToRead: inout UInt32) {
    let maxBufferSize: UInt32 = 0x50000
    let minBufferSize: UInt32 = 0x4000
    if ASBDesc.mFramesPerPacket != 0 {
        let numPacketsForTime = ASBDesc.mSampleRate / Float64(ASBDesc.mFramesPerPacket) * seconds
        outBufferSize = UInt32(numPacketsForTime * Float64(maxPacketSize))
    } else {
        outBufferSize = maxBufferSize > maxPacketSize ? maxBufferSize : maxPacketSize
    }
    if outBufferSize > maxBufferSize && outBufferSize > maxPacketSize {
        outBufferSize = maxBufferSize
    } else if outBufferSize < minBufferSize {
        outBufferSize = minBufferSize
    }
    outNumPacketsToRead = outBufferSize / maxPacketSize
}

/// The moment IsRunning went false: the device frame then.
final class StopWatch: @unchecked Sendable {
    let lock = NSLock()
    var stoppedAtFrame: Double?
}

let stopWatchListener: AudioQueuePropertyListenerProc = { userData, queue, propertyID in
    let watch = Unmanaged<StopWatch>.fromOpaque(userData!).takeUnretainedValue()
    var running: UInt32 = 1
    var size = UInt32(4)
    AudioQueueGetProperty(queue, propertyID, &running, &size)
    guard running == 0 else { return }
    var now = AudioTimeStamp()
    AudioQueueDeviceGetCurrentTime(queue, &now)
    watch.lock.withLock { watch.stoppedAtFrame = now.mSampleTime }
}

/// Listings 3-9 ... 3-18 as one playback of `path` into the JACK client `device`.
func playWithListing(path: String, device: String, gain: Float32 = 1.0, watch: StopWatch,
                     configure: (AudioQueueRef) -> Void = { _ in }) -> [OSStatus] {
    let aqData = UnsafeMutablePointer<AQPlayerState>.allocate(capacity: 1)
    aqData.initialize(to: AQPlayerState())
    defer { aqData.deinitialize(count: 1); aqData.deallocate() }
    var statuses: [OSStatus] = []

    // Listing 3-9: opening an audio file for playback.
    let filePath = Array(path.utf8)
    let audioFileURL = CFURLCreateFromFileSystemRepresentation(nil, filePath, filePath.count, false)!
    statuses.append(AudioFileOpenURL(audioFileURL, kAudioFileReadPermission, 0, &aqData.pointee.mAudioFile))
    guard let audioFile = aqData.pointee.mAudioFile else { return statuses }

    // Listing 3-10: obtaining a file's audio data format.
    var dataFormat = AudioStreamBasicDescription()
    var dataFormatSize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    statuses.append(AudioFileGetProperty(audioFile, kAudioFilePropertyDataFormat, &dataFormatSize, &dataFormat))
    aqData.pointee.mDataFormat = dataFormat

    // Listing 3-11: creating a playback audio queue.
    var queue: AudioQueueRef?
    statuses.append(AudioQueueNewOutput(&dataFormat, HandleOutputBuffer, aqData, CFRunLoopGetCurrent(),
                                        CFRunLoopMode.commonModes.rawValue, 0, &queue))
    guard let queue else { return statuses }
    aqData.pointee.mQueue = queue
    configure(queue)   // not the listing's: a test's tap goes on here, on the stopped queue
    var deviceName = device as CFString   // aqjack: the JACK client whose input ports this queue feeds
    statuses.append(AudioQueueSetProperty(queue, kAudioQueueProperty_CurrentDevice, &deviceName, UInt32(MemoryLayout<CFString>.size)))
    AudioQueueAddPropertyListener(queue, kAudioQueueProperty_IsRunning, stopWatchListener, Unmanaged.passUnretained(watch).toOpaque())

    // Listing 3-12: setting playback audio queue buffer size and number of packets to read.
    var maxPacketSize: UInt32 = 0
    var propertySize = UInt32(MemoryLayout<UInt32>.size)
    statuses.append(AudioFileGetProperty(audioFile, kAudioFilePropertyPacketSizeUpperBound, &propertySize, &maxPacketSize))
    var bufferByteSize: UInt32 = 0
    var numPacketsToRead: UInt32 = 0
    DeriveBufferSize(&dataFormat, maxPacketSize, 0.5, &bufferByteSize, &numPacketsToRead)
    aqData.pointee.bufferByteSize = bufferByteSize
    aqData.pointee.mNumPacketsToRead = numPacketsToRead

    // Listing 3-13: allocating memory for a packet descriptions array.
    let isFormatVBR = aqData.pointee.mDataFormat.mBytesPerPacket == 0 || aqData.pointee.mDataFormat.mFramesPerPacket == 0
    if isFormatVBR {
        aqData.pointee.mPacketDescs = .allocate(capacity: Int(aqData.pointee.mNumPacketsToRead))
    } else {
        aqData.pointee.mPacketDescs = nil
    }

    // Listing 3-14: setting a magic cookie for a playback audio queue.
    var cookieSize = UInt32(MemoryLayout<UInt32>.size)
    let couldNotGetProperty = AudioFileGetPropertyInfo(audioFile, kAudioFilePropertyMagicCookieData, &cookieSize, nil) != noErr
    if !couldNotGetProperty && cookieSize > 0 {
        let magicCookie = UnsafeMutableRawPointer.allocate(byteCount: Int(cookieSize), alignment: 8)
        AudioFileGetProperty(audioFile, kAudioFilePropertyMagicCookieData, &cookieSize, magicCookie)
        AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, magicCookie, cookieSize)
        magicCookie.deallocate()
    }

    // Listing 3-15: allocating and priming playback audio queue buffers.
    aqData.pointee.mCurrentPacket = 0
    aqData.pointee.mIsRunning = true   // the callback returns at once otherwise
    for i in 0 ..< kNumberBuffers {
        statuses.append(AudioQueueAllocateBuffer(queue, aqData.pointee.bufferByteSize, &aqData.pointee.mBuffers[i]))
        HandleOutputBuffer(aqData, queue, aqData.pointee.mBuffers[i]!)
    }

    // Listing 3-16: setting an audio queue's playback gain.
    statuses.append(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, gain))

    // Listing 3-17: starting and running a playback audio queue.
    aqData.pointee.mIsRunning = true
    statuses.append(AudioQueueStart(queue, nil))
    let deadline = Date().addingTimeInterval(30)   // a test must end
    repeat {
        CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0.25, false)
    } while aqData.pointee.mIsRunning && Date() < deadline
    CFRunLoopRunInMode(kCFRunLoopDefaultMode, 1, false)

    // Listing 3-18: cleaning up after playing.
    statuses.append(AudioQueueDispose(queue, true))
    statuses.append(AudioFileClose(audioFile))
    aqData.pointee.mPacketDescs?.deallocate()
    return statuses
}

/// Writes `frames` frames of the 16-bit integer test signal (numbered from 0) in `format`.
func writeSignalFile(path: String, fileType: UInt32, format: AudioStreamBasicDescription, frames: Int) throws {
    let writer = try AudioFileWriter(path: path, fileType: fileType, format: format, eraseExisting: true)
    let layout = writer.layout
    let bytes = UnsafeMutableRawPointer.allocate(byteCount: frames * layout.bytesPerFrame, alignment: 16)
    defer { bytes.deallocate() }
    for frame in 0 ..< frames {
        for channel in 0 ..< layout.channelCount {
            layout.encode(TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16),
                          to: bytes + frame * layout.bytesPerFrame + channel * layout.bytesPerSample)
        }
    }
    try writer.writePackets(bytes, byteCount: frames * layout.bytesPerFrame, startPacket: 0, packetCount: frames)
    try writer.close()
}

/// Writes 1.5 s of the stereo multi-sine as AAC (128 kbit/s) in `fileType`; returns what
/// libavcodec decodes the packets to (priming included), the reference for playback.
func writeAACFile(path: String, fileType: UInt32) throws -> [Float] {
    let input = MultiSine.interleaved(frameCount: 72000, channelCount: 2, sampleRate: 48000)
    let encoder = try AACEncoder(sampleRate: 48000, channelCount: 2, bitRate: 128_000)
    var packets: [EncodedPacket] = []
    try input.withUnsafeBufferPointer { try encoder.encode($0.baseAddress!, frameCount: 72000) { packets.append($0) } }
    try encoder.finish { packets.append($0) }
    let writer = try #require(try AudioFile.create(path: path, fileType: fileType, format: CompressedFormatValues.aacDescription(encoder.audioSpecificConfig),
                                                   eraseExisting: true).packetWriter)
    try writer.setMagicCookie(ElementaryStreamDescriptor(audioSpecificConfig: encoder.audioSpecificConfig).bytes)
    writer.packetTable = PacketTable(validFrameCount: 72000, primingFrames: Int32(encoder.primingFrames), remainderFrames: Int32(encoder.remainderFrames))
    var bytes: [UInt8] = []
    var descriptions: [AudioStreamPacketDescription] = []
    for packet in packets {
        descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(bytes.count), mVariableFramesInPacket: 0, mDataByteSize: UInt32(packet.bytes.count)))
        bytes += packet.bytes
    }
    try bytes.withUnsafeBytes { raw in
        try descriptions.withUnsafeBufferPointer { try writer.writePackets(raw.baseAddress!, byteCount: raw.count, descriptions: $0, startPacket: 0) }
    }
    try writer.close()
    let decoder = try AACDecoder(config: encoder.audioSpecificConfig)
    var decoded: [Float] = []
    for packet in packets {
        try packet.bytes.withUnsafeBytes { try decoder.decode($0) { pointer, frames in decoded += UnsafeBufferPointer(start: pointer, count: frames * 2) } }
    }
    return decoded
}

/// A started float recording queue at 48 kHz whose ports the player under test connects to
/// itself (no connections of its own), logging every buffer.
func startListingRecorder(role: String) throws -> (AudioInputQueue, DeliveryLog) {
    let log = DeliveryLog()
    let recorder = try AudioInputQueue(format: pcmFormat(rate: 48000, channels: 2, bits: 32, float: true),
                                       driver: JackDriver(name: TestServer.uniqueClientName(role))) { queue, buffer, startTime in
        let count = Int(buffer.pointee.mAudioDataByteSize) / 4
        log.append(.init(startTime: startTime, samples: (0 ..< count).map { buffer.pointee.mAudioData.load(fromByteOffset: $0 * 4, as: Float.self) }))
        try? queue.enqueue(buffer)
    }
    recorder.channelSources = []   // the player connects itself to the recorder
    for _ in 0 ..< 4 { try recorder.enqueue(recorder.allocateBuffer(byteCapacity: 4800 * 8)) }
    try recorder.start()
    return (recorder, log)
}

/// Plays `path` with the listings into a started listing recorder; expects every call to
/// succeed. Returns what the recorder received and when IsRunning went false.
func playListingIntoRecorder(path: String, role: String, configure: (AudioQueueRef) -> Void = { _ in }) throws -> (DeliveryLog, StopWatch) {
    let (recorder, log) = try startListingRecorder(role: role)
    let watch = StopWatch()
    let statuses = playWithListing(path: path, device: recorder.driver.name, watch: watch, configure: configure)
    recorder.stop()
    recorder.dispose()
    #expect(statuses.allSatisfy { $0 == noErr }, "\(statuses)")
    return (log, watch)
}

/// Checks what a recorder received from a player of the 16-bit test signal: every frame of the
/// file, in order, once, after leading silence; then silence; IsRunning false after the last frame.
func verifyPlayedSignal(_ deliveries: [DeliveryLog.Delivery], frames: Int, watch: StopWatch) throws {
    // Every frame of the file, in order, once, after leading silence.
    var samples: [Float] = []
    var times: [Double] = []
    for delivery in deliveries {
        for frame in 0 ..< delivery.samples.count / 2 { times.append(delivery.startTime.mSampleTime + Double(frame)) }
        samples += delivery.samples
    }
    let firstSound = try #require((0 ..< samples.count / 2).first { samples[2 * $0] != 0 || samples[2 * $0 + 1] != 0 })
    #expect(samples.count / 2 >= firstSound + frames)
    var wrong = 0
    for frame in 0 ..< min(frames, samples.count / 2 - firstSound) {
        for channel in 0 ..< 2 where samples[2 * (firstSound + frame) + channel] != TestSignal.integerSample(channel: channel, frame: UInt32(frame), bits: 16) {
            wrong += 1
        }
    }
    #expect(wrong == 0)
    let after = samples[(2 * (firstSound + frames))...]
    #expect(after.allSatisfy { $0 == 0 })   // nothing played twice, nothing stale
    // IsRunning went false after the device had played the last frame.
    let lastFrameTime = times[firstSound + frames - 1]
    let stoppedAt = try #require(watch.lock.withLock { watch.stoppedAtFrame })
    #expect(stoppedAt > lastFrameTime)
}

extension JackServerSuite {
    @Suite("Seed 001: the Programming Guide's player, transcribed")
    struct PlaybackListingTests {
        @Test("listings 3-1 ... 3-18 play AAC from M4A, CAF and ADTS (cookie file → queue, packet descriptions on enqueue): exactly libavcodec's decode",
              arguments: [("m4a", kAudioFileM4AType), ("caf", kAudioFileCAFType), ("aac", kAudioFileAAC_ADTSType)])
        func listingPlaysAAC(fileExtension: String, fileType: UInt32) throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-listing3-aac-\(getpid()).\(fileExtension)").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let reference = try writeAACFile(path: path, fileType: fileType)
            let (log, _) = try playListingIntoRecorder(path: path, role: "l3aac")
            let samples = log.deliveries.flatMap(\.samples)
            // The listing plays every packet, priming included (it sets no trims): the recording
            // holds libavcodec's decode of the file, sample for sample, after leading silence.
            let firstReference = try #require(reference.firstIndex { $0 != 0 })
            let firstRecorded = try #require(samples.firstIndex { $0 != 0 })
            let start = firstRecorded - (firstReference - firstReference % 2)
            let expected = reference[(firstReference - firstReference % 2)...]
            #expect(samples.count - start >= expected.count)
            let played = samples[(firstRecorded - firstReference % 2)...].prefix(expected.count)
            let mismatches = zip(played, expected).filter { $0 != $1 }.count
            print("AAC \(fileExtension) through the listing: \(expected.count / 2) frames compared, \(mismatches) samples differ")
            #expect(mismatches == 0)
        }

        @Test("listings 3-1 ... 3-18 play a 16-bit AIFF and a float WAV into a recording queue: every frame, bit-exact; IsRunning false only after the last frame",
              arguments: [("aiff", kAudioFileAIFFType, pcmFormat(rate: 48000, channels: 2, bits: 16, bigEndian: true)),
                          ("wav", kAudioFileWAVEType, pcmFormat(rate: 48000, channels: 2, bits: 32, float: true))])
        func listingPlaysFile(fileExtension: String, fileType: UInt32, fileFormat: AudioStreamBasicDescription) throws {
            let frames = 72000   // 1.5 s
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-listing3-\(getpid()).\(fileExtension)").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            try writeSignalFile(path: path, fileType: fileType, format: fileFormat, frames: frames)

            // The recording side: float, at the server rate, fed by the player's ports.
            let (log, watch) = try playListingIntoRecorder(path: path, role: "l3rec")

            try verifyPlayedSignal(log.deliveries, frames: frames, watch: watch)
        }

        @Test("AudioQueueOfflineRender delivers the frames the real-time path delivers: a 16-bit AIFF and an AAC M4A, played through JACK into a recording queue and rendered offline, compared sample for sample; also through a ×0.5 processing tap",
              arguments: [("aiff", kAudioFileAIFFType, false), ("m4a", kAudioFileM4AType, false), ("aiff", kAudioFileAIFFType, true), ("m4a", kAudioFileM4AType, true)])
        func offlineRenderMatchesRealTime(fileExtension: String, fileType: UInt32, tapped: Bool) throws {
            // The same tap on both paths (a fresh script each: its state is the callbacks it saw).
            func addTap(_ script: TapScript) -> (AudioQueueRef) -> Void {
                { queue in
                    guard tapped else { return }
                    var maxFrames: UInt32 = 0
                    var format = AudioStreamBasicDescription()
                    var tap: AudioQueueProcessingTapRef?
                    #expect(AudioQueueProcessingTapNew(queue, TapScript.callback, Unmanaged.passUnretained(script).toOpaque(),
                                                       .postEffects, &maxFrames, &format, &tap) == noErr)
                }
            }
            let realTimeTap = TapScript(.gain(0.5)), offlineTap = TapScript(.gain(0.5))
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-offline-vs-rt-\(getpid()).\(fileExtension)").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            if fileType == kAudioFileAIFFType {
                try writeSignalFile(path: path, fileType: fileType, format: pcmFormat(rate: 48000, channels: 2, bits: 16, bigEndian: true), frames: 72000)
            } else {
                _ = try writeAACFile(path: path, fileType: fileType)
            }
            // Real time: the listing plays the file to a recording queue through the server.
            let (log, _) = try playListingIntoRecorder(path: path, role: "ofrt", configure: addTap(realTimeTap))
            let recorded = log.deliveries.flatMap(\.samples)
            // Offline: the same file rendered by AQOfflineRenderTest's loop, no device involved.
            let (renderStatuses, rendered, _) = offlineRenderWithListing(path: path, configure: addTap(offlineTap))
            if tapped { #expect(!realTimeTap.calls.isEmpty && !offlineTap.calls.isEmpty) }
            #expect(renderStatuses.allSatisfy { $0 == noErr }, "\(renderStatuses)")
            // The recording holds leading silence (the graph before the start), the played
            // frames, then silence: align on the first frame that is not silent in both.
            let firstRendered = try #require((0 ..< rendered.count / 2).first { rendered[2 * $0] != 0 || rendered[2 * $0 + 1] != 0 })
            let firstRecorded = try #require((0 ..< recorded.count / 2).first { recorded[2 * $0] != 0 || recorded[2 * $0 + 1] != 0 })
            let offset = 2 * (firstRecorded - firstRendered)
            #expect(offset >= 0 && recorded.count - offset >= rendered.count)
            let played = recorded[max(0, offset)...].prefix(rendered.count)
            let mismatches = zip(played, rendered).filter { $0 != $1 }.count
            print("offline vs real time, \(fileExtension)\(tapped ? " through a tap" : ""): \(rendered.count / 2) frames compared, \(mismatches) samples differ")
            #expect(played.count == rendered.count && mismatches == 0)
        }

        @Test("listings 3-1 ... 3-18 play Apple Lossless from an M4A (cookie file → queue, packet descriptions): every frame, bit-exact")
        func listingPlaysALAC() throws {
            let frames = 72000
            let wav = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-listing3-alac-\(getpid()).wav").path
            let m4a = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-listing3-alac-\(getpid()).m4a").path
            defer { for path in [wav, m4a] { try? FileManager.default.removeItem(atPath: path) } }
            try writeSignalFile(path: wav, fileType: kAudioFileWAVEType, format: pcmFormat(rate: 48000, channels: 2, bits: 16), frames: frames)
            var request = FileConversion.Request(inputPath: wav, outputPath: m4a)
            request.codec = kAudioFormatAppleLossless
            request.eraseExisting = true
            _ = try FileConversion(request).run()
            let (log, watch) = try playListingIntoRecorder(path: m4a, role: "l3alac")
            try verifyPlayedSignal(log.deliveries, frames: frames, watch: watch)
        }
    }
}
