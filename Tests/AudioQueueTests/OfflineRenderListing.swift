import AudioToolbox
import Foundation

// Apple's AQOfflineRenderTest (aqofflinerender.cpp, referenced by QA1562), transcribed to Swift
// against AudioToolbox with its structure: one input buffer refilled by the callback, a capture
// buffer half its size, AudioQueueSetOfflineRenderFormat before the start, a first render of 0
// frames, then renders until the callback has flushed at the end of the file. The capture format
// here is 32-bit float interleaved (the sample's "AU canonical" is 8.24 fixed point on iOS).

struct AQTestInfo {
    var mAudioFile: AudioFileID?
    var mDataFormat = AudioStreamBasicDescription()
    var mQueue: AudioQueueRef?
    var mBuffer: AudioQueueBufferRef?
    var mCurrentPacket: Int64 = 0
    var mNumPacketsToRead: UInt32 = 0
    var mPacketDescs: UnsafeMutablePointer<AudioStreamPacketDescription>?
    var mFlushed = false
    var mDone = false
}

let AQTestBufferCallback: AudioQueueOutputCallback = { inUserData, inAQ, inCompleteAQBuffer in
    let myInfo = inUserData!.assumingMemoryBound(to: AQTestInfo.self)
    if myInfo.pointee.mDone { return }
    var numBytes: UInt32 = 0
    var nPackets = myInfo.pointee.mNumPacketsToRead
    let result = AudioFileReadPackets(myInfo.pointee.mAudioFile!, false, &numBytes, myInfo.pointee.mPacketDescs,
                                      myInfo.pointee.mCurrentPacket, &nPackets, inCompleteAQBuffer.pointee.mAudioData)
    if result != noErr { myInfo.pointee.mDone = true; return }
    if nPackets > 0 {
        inCompleteAQBuffer.pointee.mAudioDataByteSize = numBytes
        AudioQueueEnqueueBuffer(inAQ, inCompleteAQBuffer, myInfo.pointee.mPacketDescs != nil ? nPackets : 0, myInfo.pointee.mPacketDescs)
        myInfo.pointee.mCurrentPacket += Int64(nPackets)
    } else {
        // "This ensures that we flush the queue when done -- ensures you get all the data out"
        if !myInfo.pointee.mFlushed {
            AudioQueueFlush(myInfo.pointee.mQueue!)
            myInfo.pointee.mFlushed = true
        }
        AudioQueueStop(myInfo.pointee.mQueue!, false)
        myInfo.pointee.mDone = true
    }
}

/// Renders the file at `path` offline through a playback queue, as the sample does, into
/// interleaved float at `captureRate` (0: the file's rate). Returns every call's status, the
/// rendered samples and the frames each render call returned. The sample stops at the render
/// after the flush; `drainAfterFlush` (not the sample's) renders on until a render returns no
/// frames, for a queue whose processing holds more than one render's worth (time-pitch).
func offlineRenderWithListing(path: String, captureRate: Double = 0, drainAfterFlush: Bool = false,
                              configure: (AudioQueueRef) -> Void = { _ in }) -> (statuses: [OSStatus], samples: [Float], renders: [Int]) {
    let myInfo = UnsafeMutablePointer<AQTestInfo>.allocate(capacity: 1)
    myInfo.initialize(to: AQTestInfo())
    defer { myInfo.pointee.mPacketDescs?.deallocate(); myInfo.deinitialize(count: 1); myInfo.deallocate() }
    var statuses: [OSStatus] = []
    var samples: [Float] = []
    var renders: [Int] = []

    let bytes = Array(path.utf8)
    let sourceURL = CFURLCreateFromFileSystemRepresentation(nil, bytes, bytes.count, false)!
    statuses.append(AudioFileOpenURL(sourceURL, kAudioFileReadPermission, 0, &myInfo.pointee.mAudioFile))
    guard let audioFile = myInfo.pointee.mAudioFile else { return (statuses, samples, renders) }
    var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
    statuses.append(AudioFileGetProperty(audioFile, kAudioFilePropertyDataFormat, &size, &myInfo.pointee.mDataFormat))

    var queue: AudioQueueRef?
    statuses.append(AudioQueueNewOutput(&myInfo.pointee.mDataFormat, AQTestBufferCallback, myInfo, CFRunLoopGetCurrent(),
                                        CFRunLoopMode.commonModes.rawValue, 0, &queue))
    guard let queue else { return (statuses, samples, renders) }
    myInfo.pointee.mQueue = queue
    configure(queue)   // not the listing's: a test's tap goes on here, on the stopped queue

    // About a second of packets per buffer, 16 ... 64 KiB (the sample's CalculateBytesForTime).
    var maxPacketSize: UInt32 = 0
    size = UInt32(MemoryLayout<UInt32>.size)
    statuses.append(AudioFileGetProperty(audioFile, kAudioFilePropertyPacketSizeUpperBound, &size, &maxPacketSize))
    let format = myInfo.pointee.mDataFormat
    var bufferByteSize = format.mFramesPerPacket != 0
        ? UInt32(format.mSampleRate / Double(format.mFramesPerPacket) * Double(maxPacketSize)) : max(0x10000, maxPacketSize)
    if bufferByteSize > 0x10000 && bufferByteSize > maxPacketSize { bufferByteSize = 0x10000 } else if bufferByteSize < 0x4000 { bufferByteSize = 0x4000 }
    myInfo.pointee.mNumPacketsToRead = bufferByteSize / maxPacketSize
    if format.mBytesPerPacket == 0 || format.mFramesPerPacket == 0 {
        myInfo.pointee.mPacketDescs = .allocate(capacity: Int(myInfo.pointee.mNumPacketsToRead))
    }

    size = UInt32(MemoryLayout<UInt32>.size)
    if AudioFileGetPropertyInfo(audioFile, kAudioFilePropertyMagicCookieData, &size, nil) == noErr && size > 0 {
        let cookie = UnsafeMutableRawPointer.allocate(byteCount: Int(size), alignment: 8)
        statuses.append(AudioFileGetProperty(audioFile, kAudioFilePropertyMagicCookieData, &size, cookie))
        statuses.append(AudioQueueSetProperty(queue, kAudioQueueProperty_MagicCookie, cookie, size))
        cookie.deallocate()
    }

    statuses.append(AudioQueueAllocateBuffer(queue, bufferByteSize, &myInfo.pointee.mBuffer))

    let channels = format.mChannelsPerFrame
    var captureFormat = AudioStreamBasicDescription(
        mSampleRate: captureRate == 0 ? format.mSampleRate : captureRate, mFormatID: kAudioFormatLinearPCM,
        mFormatFlags: kLinearPCMFormatFlagIsFloat | kLinearPCMFormatFlagIsPacked, mBytesPerPacket: 4 * channels,
        mFramesPerPacket: 1, mBytesPerFrame: 4 * channels, mChannelsPerFrame: channels, mBitsPerChannel: 32, mReserved: 0)
    statuses.append(AudioQueueSetOfflineRenderFormat(queue, &captureFormat, nil))

    // "just keep it at half the size of the enqueue buffer"
    let captureBufferByteSize = bufferByteSize / 2
    var captureBuffer: AudioQueueBufferRef?
    statuses.append(AudioQueueAllocateBuffer(queue, captureBufferByteSize, &captureBuffer))
    guard let captureBuffer else { return (statuses, samples, renders) }

    statuses.append(AudioQueueStart(queue, nil))
    var ts = AudioTimeStamp()
    ts.mFlags = .sampleTimeValid
    ts.mSampleTime = 0
    // "we need to call this once asking for 0 frames"
    statuses.append(AudioQueueOfflineRender(queue, &ts, captureBuffer, 0))
    // "we need to enqueue a buffer after the queue has started"
    AQTestBufferCallback(myInfo, queue, myInfo.pointee.mBuffer!)

    while renders.count < 100_000 {   // a test must end
        let reqFrames = captureBufferByteSize / captureFormat.mBytesPerFrame
        statuses.append(AudioQueueOfflineRender(queue, &ts, captureBuffer, reqFrames))
        let writeFrames = Int(captureBuffer.pointee.mAudioDataByteSize / captureFormat.mBytesPerFrame)
        let floats = captureBuffer.pointee.mAudioData.assumingMemoryBound(to: Float.self)
        samples += UnsafeBufferPointer(start: floats, count: writeFrames * Int(channels))
        renders.append(writeFrames)
        if myInfo.pointee.mFlushed && (!drainAfterFlush || writeFrames == 0) { break }
        ts.mSampleTime += Double(writeFrames)
    }
    statuses.append(AudioQueueDispose(queue, true))
    statuses.append(AudioFileClose(audioFile))
    return (statuses, samples, renders)
}
