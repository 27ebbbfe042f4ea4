import AQCore
import AQServerSuite
import AQTestSupport
import AudioToolbox
import CSndFile
import Foundation
import Testing

// Listings 2-1 ... 2-15 of the Audio Queue Services Programming Guide ("Recording Audio", seed
// 000), transcribed to Swift against AudioToolbox with the listings' own structure. Two things
// are aqjack-specific and marked: the device (a JACK client) is chosen with
// kAudioQueueProperty_CurrentDevice, and the format records at the JACK server's rate.

let kNumberBuffers = 3

struct AQRecorderState {
    var mDataFormat = AudioStreamBasicDescription()
    var mQueue: AudioQueueRef?
    var mBuffers: [AudioQueueBufferRef?] = Array(repeating: nil, count: kNumberBuffers)
    var mAudioFile: AudioFileID?
    var bufferByteSize: UInt32 = 0
    var mCurrentPacket: Int64 = 0
    var mIsRunning = false
}

// Listing 2-2: the recording audio queue callback.
let HandleInputBuffer: AudioQueueInputCallback = { aqData, inAQ, inBuffer, inStartTime, inNumPackets, inPacketDesc in
    let pAqData = aqData!.assumingMemoryBound(to: AQRecorderState.self)
    var inNumPackets = inNumPackets
    if inNumPackets == 0 && pAqData.pointee.mDataFormat.mBytesPerPacket != 0 {
        inNumPackets = inBuffer.pointee.mAudioDataByteSize / pAqData.pointee.mDataFormat.mBytesPerPacket
    }
    // Swift: the C listing passes a NULL file or queue through (the call then fails); an
    // optional must be unwrapped, so a callback arriving after clean-up (seed 004) returns here.
    guard let audioFile = pAqData.pointee.mAudioFile, let queue = pAqData.pointee.mQueue else { return }
    if AudioFileWritePackets(audioFile, false, inBuffer.pointee.mAudioDataByteSize, inPacketDesc,
                             pAqData.pointee.mCurrentPacket, &inNumPackets, inBuffer.pointee.mAudioData) == noErr {
        pAqData.pointee.mCurrentPacket += Int64(inNumPackets)
    }
    if !pAqData.pointee.mIsRunning { return }
    AudioQueueEnqueueBuffer(queue, inBuffer, 0, nil)
}

// Listing 2-6: deriving a recording audio queue buffer size.
func DeriveBufferSize(_ audioQueue: AudioQueueRef, _ ASBDescription: inout AudioStreamBasicDescription,
                      _ seconds: Float64, _ outBufferSize: inout UInt32) {
    let maxBufferSize = 0x50000
    var maxPacketSize = ASBDescription.mBytesPerPacket
    if maxPacketSize == 0 {
        var maxVBRPacketSize = UInt32(MemoryLayout<UInt32>.size)
        AudioQueueGetProperty(audioQueue, kAudioQueueProperty_MaximumOutputPacketSize, &maxPacketSize, &maxVBRPacketSize)
    }
    let numBytesForTime = ASBDescription.mSampleRate * Float64(maxPacketSize) * seconds
    outBufferSize = UInt32(numBytesForTime < Float64(maxBufferSize) ? numBytesForTime : Float64(maxBufferSize))
}

// Listing 2-7: setting a magic cookie for an audio file.
@discardableResult
func SetMagicCookieForFile(_ inQueue: AudioQueueRef, _ inFile: AudioFileID) -> OSStatus {
    var result = noErr
    var cookieSize: UInt32 = 0
    if AudioQueueGetPropertySize(inQueue, kAudioQueueProperty_MagicCookie, &cookieSize) == noErr && cookieSize > 0 {
        let magicCookie = UnsafeMutableRawPointer.allocate(byteCount: Int(cookieSize), alignment: 8)
        defer { magicCookie.deallocate() }
        if AudioQueueGetProperty(inQueue, kAudioQueueProperty_MagicCookie, magicCookie, &cookieSize) == noErr {
            result = AudioFileSetProperty(inFile, kAudioFilePropertyMagicCookieData, cookieSize, magicCookie)
        }
    }
    return result
}

/// The formats the listing can record: Listing 2-8's AIFF, or AAC ("if you'll be recording in
/// a format that uses cookies") into CAF or M4A.
enum ListingFormat {
    case linearPCMAIFF
    case aac(fileType: AudioFileTypeID)
}

/// Listings 2-8 ... 2-15 as one recording session of `seconds` from the JACK client `device`.
func recordWithListing(path: String, device: String, seconds: Double, sampleRate: Float64,
                       recordingFormat: ListingFormat = .linearPCMAIFF) -> (state: AQRecorderState, statuses: [OSStatus]) {
    let aqData = UnsafeMutablePointer<AQRecorderState>.allocate(capacity: 1)
    aqData.initialize(to: AQRecorderState())
    defer { aqData.deinitialize(count: 1); aqData.deallocate() }
    var statuses: [OSStatus] = []

    // Listing 2-8: the audio format (16-bit big-endian stereo linear PCM, in AIFF).
    let fileType: AudioFileTypeID
    switch recordingFormat {
    case .linearPCMAIFF:
        aqData.pointee.mDataFormat.mFormatID = kAudioFormatLinearPCM
        aqData.pointee.mDataFormat.mSampleRate = sampleRate   // aqjack: the listing's 44100.0 only with a 44.1 kHz server
        aqData.pointee.mDataFormat.mChannelsPerFrame = 2
        aqData.pointee.mDataFormat.mBitsPerChannel = 16
        aqData.pointee.mDataFormat.mBytesPerPacket = aqData.pointee.mDataFormat.mChannelsPerFrame * UInt32(MemoryLayout<Int16>.size)
        aqData.pointee.mDataFormat.mBytesPerFrame = aqData.pointee.mDataFormat.mBytesPerPacket
        aqData.pointee.mDataFormat.mFramesPerPacket = 1
        fileType = kAudioFileAIFFType
        aqData.pointee.mDataFormat.mFormatFlags = kLinearPCMFormatFlagIsBigEndian | kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked
    case .aac(let type):
        // A compressed format: only the ID, rate and channels; the queue fills in the rest
        // (Listing 2-10 reads it back).
        aqData.pointee.mDataFormat.mFormatID = kAudioFormatMPEG4AAC
        aqData.pointee.mDataFormat.mSampleRate = sampleRate
        aqData.pointee.mDataFormat.mChannelsPerFrame = 2
        fileType = type
    }

    // Listing 2-9: creating a recording audio queue.
    var format = aqData.pointee.mDataFormat
    var queue: AudioQueueRef?
    statuses.append(AudioQueueNewInput(&format, HandleInputBuffer, aqData, nil, CFRunLoopMode.commonModes.rawValue, 0, &queue))
    guard let queue else { return (aqData.pointee, statuses) }
    aqData.pointee.mQueue = queue
    // aqjack: the device is a JACK client; channel N comes from its Nth output port.
    var deviceName = device as CFString
    statuses.append(AudioQueueSetProperty(queue, kAudioQueueProperty_CurrentDevice, &deviceName, UInt32(MemoryLayout<CFString>.size)))

    // Listing 2-10: getting the full audio format from the audio queue.
    var dataFormatSize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    statuses.append(AudioQueueGetProperty(queue, kAudioQueueProperty_StreamDescription, &format, &dataFormatSize))
    aqData.pointee.mDataFormat = format

    // Listing 2-11: creating an audio file for recording.
    let filePath = Array(path.utf8)
    let audioFileURL = CFURLCreateFromFileSystemRepresentation(nil, filePath, filePath.count, false)!
    var audioFile: AudioFileID?
    statuses.append(AudioFileCreateWithURL(audioFileURL, fileType, &format, .eraseFile, &audioFile))
    aqData.pointee.mAudioFile = audioFile
    // Listing 2-7 used before recording ("set the magic cookie ... before you record"): a
    // linear-PCM queue has none, so this does nothing for AIFF.
    statuses.append(SetMagicCookieForFile(queue, audioFile!))

    // Listing 2-12: setting an audio queue buffer size.
    var bufferByteSize: UInt32 = 0
    DeriveBufferSize(queue, &format, 0.5, &bufferByteSize)
    aqData.pointee.bufferByteSize = bufferByteSize

    // Listing 2-13: preparing a set of audio queue buffers.
    for i in 0 ..< kNumberBuffers {
        var buffer: AudioQueueBufferRef?
        statuses.append(AudioQueueAllocateBuffer(queue, aqData.pointee.bufferByteSize, &buffer))
        aqData.pointee.mBuffers[i] = buffer
        statuses.append(AudioQueueEnqueueBuffer(queue, buffer!, 0, nil))
    }

    // Listing 2-14: recording audio.
    aqData.pointee.mCurrentPacket = 0
    aqData.pointee.mIsRunning = true
    statuses.append(AudioQueueStart(queue, nil))
    usleep(UInt32(seconds * 1_000_000))   // "Wait, on user interface thread, until user stops the recording"
    statuses.append(AudioQueueStop(queue, true))
    aqData.pointee.mIsRunning = false

    // Listing 2-15: cleaning up after recording.
    SetMagicCookieForFile(queue, audioFile!)
    statuses.append(AudioQueueDispose(queue, true))
    statuses.append(AudioFileClose(audioFile!))
    return (aqData.pointee, statuses)
}


extension JackServerSuite {
    @Suite("Seed 000: the Programming Guide's recorder, transcribed")
    struct RecordingListingTests {
        @Test("listings 2-1 ... 2-15 record 16-bit big-endian stereo AIFF bit-exact from the generator")
        func listingRecordsAIFF() throws {
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("l2gen"), channelCount: 2, integerBits: 16)
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-listing2-\(getpid()).aiff").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let (state, statuses) = recordWithListing(path: path, device: generator.client.name, seconds: 2,
                                                      sampleRate: Double(generator.client.sampleRate))
            #expect(statuses.allSatisfy { $0 == noErr }, "\(statuses)")
            #expect(state.bufferByteSize == 96000)   // 0.5 s × 48000 × 4 bytes, under 0x50000
            #expect(state.mCurrentPacket > 48000 * 19 / 10)

            let file = try SoundFileContents(path: path)
            #expect(file.format & Int32(SF_FORMAT_TYPEMASK | SF_FORMAT_SUBMASK) == Int32(SF_FORMAT_AIFF | SF_FORMAT_PCM_16))
            #expect(file.channels == 2 && file.sampleRate == 48000)
            #expect(Int64(file.frames) == state.mCurrentPacket)
            #expect(integerSignalStart(file.samples, channels: 2, bits: 16) != nil, "the file is not the generator's signal, frame for frame")
        }

        @Test("the same listings record AAC into CAF and M4A: cookie copied before and after, ffprobe and ffmpeg read it, length exact to the packet table",
              arguments: [("caf", kAudioFileCAFType), ("m4a", kAudioFileM4AType)])
        func listingRecordsAAC(_ ext: String, _ fileType: AudioFileTypeID) throws {
            let period = GeneratorClient.sinePeriod(frequency: 1000, amplitude: 0.5, sampleRate: 48000)
            let generator = try GeneratorClient(name: TestServer.uniqueClientName("l2aac"), channelCount: 2, wavePeriod: period)
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("aqjack-listing2-aac-\(getpid()).\(ext)").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let (state, statuses) = recordWithListing(path: path, device: generator.client.name, seconds: 2,
                                                      sampleRate: Double(generator.client.sampleRate), recordingFormat: .aac(fileType: fileType))
            #expect(statuses.allSatisfy { $0 == noErr }, "\(statuses)")
            #expect(state.mDataFormat.mFramesPerPacket == 1024 && state.mDataFormat.mBytesPerPacket == 0)
            // DeriveBufferSize with MaximumOutputPacketSize (1536 bytes for stereo AAC) hits the cap.
            #expect(state.bufferByteSize == 0x50000)
            // About 2 s of packets (priming included), every one written.
            #expect(state.mCurrentPacket > 48000 * 19 / 10 / 1024 && state.mCurrentPacket < 48000 * 3 / 1024)

            let url = CFURLCreateFromFileSystemRepresentation(nil, Array(path.utf8), path.utf8.count, false)!
            var file: AudioFileID?
            #expect(AudioFileOpenURL(url, .readPermission, 0, &file) == noErr)
            var packets: UInt64 = 0
            var size = UInt32(8)
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyAudioDataPacketCount, &size, &packets) == noErr)
            #expect(Int64(packets) == state.mCurrentPacket)
            var cookieSize: UInt32 = 0
            #expect(AudioFileGetPropertyInfo(file!, kAudioFilePropertyMagicCookieData, &cookieSize, nil) == noErr)
            var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyMagicCookieData, &cookieSize, &cookie) == noErr)
            var fromCookie = AudioStreamBasicDescription()
            size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            #expect(AudioFormatGetProperty(kAudioFormatProperty_ASBDFromESDS, cookieSize, cookie, &size, &fromCookie) == noErr)
            #expect(fromCookie.mSampleRate == 48000 && fromCookie.mChannelsPerFrame == 2 && fromCookie.mFormatID == kAudioFormatMPEG4AAC)
            var table = AudioFilePacketTableInfo()
            size = UInt32(MemoryLayout<AudioFilePacketTableInfo>.size)
            #expect(AudioFileGetProperty(file!, kAudioFilePropertyPacketTableInfo, &size, &table) == noErr)
            // Without a PacketTableInfo from the caller, the file records aqjack's encoder priming.
            #expect(table.mPrimingFrames == 1024)
            #expect(table.mNumberValidFrames + Int64(table.mPrimingFrames) + Int64(table.mRemainderFrames) == Int64(packets) * 1024)
            _ = AudioFileClose(file!)

            let probe = try ExternalTool.probe(path)
            #expect(probe["codec_name"] == "aac" && probe["profile"] == "LC")
            #expect(probe["sample_rate"] == "48000" && probe["channels"] == "2")
            #expect(probe["nb_read_packets"] == String(packets))
            let decoded = try ExternalTool.decodeWithFFmpeg(path)
            let left = stride(from: 0, to: decoded.count, by: 2).map { decoded[$0] }
            // Skip the first and last 2048 frames (priming, encoder ramp) and fit the 1 kHz sine.
            // Per 0.25 s window (median): robust to a phase jump from an xrun's frame-time skip.
            let snr = SineAnalysis.windowedSNR(left[2048 ..< left.count - 2048], frequency: 1000, sampleRate: 48000, window: 12000).median
            print("listing AAC \(ext): \(packets) packets, ffmpeg decodes \(left.count) frames, 1 kHz sine SNR \(snr) dB (median window)")
            #expect(snr >= 30)
        }
    }
}
