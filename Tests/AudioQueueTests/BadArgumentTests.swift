import AQServerSuite
import AQTestSupport
import AudioToolbox
import Foundation
import Testing

/// A playback callback that does nothing: these tests never start the queue playing data.
let idleOutputCallback: AudioQueueOutputCallback = { _, _, _ in }

/// The `AudioToolbox` functions with bad arguments (issue 9, items 8 and 9): each answers
/// Apple's error code and changes nothing, never traps or touches freed memory.
extension JackServerSuite {
    @Suite("AudioToolbox bad arguments")
    struct BadArgumentTests {
        static func makeOutputQueue() throws -> AudioQueueRef {
            var format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                                     mFormatFlags: kLinearPCMFormatFlagIsFloat | kLinearPCMFormatFlagIsPacked,
                                                     mBytesPerPacket: 8, mFramesPerPacket: 1, mBytesPerFrame: 8, mChannelsPerFrame: 2,
                                                     mBitsPerChannel: 32, mReserved: 0)
            var queue: AudioQueueRef?
            let status = AudioQueueNewOutput(&format, idleOutputCallback, nil, nil, nil, 0, &queue)
            #expect(status == noErr)
            return try #require(queue)
        }

        @Test("item08BufferLargerThanCapacity: an output buffer whose mAudioDataByteSize exceeds its capacity is refused with kAudio_ParamError")
        func item08BufferLargerThanCapacity() throws {
            let queue = try Self.makeOutputQueue()
            defer { _ = AudioQueueDispose(queue, true) }
            var buffer: AudioQueueBufferRef?
            #expect(AudioQueueAllocateBuffer(queue, 4096, &buffer) == noErr)
            let allocated = try #require(buffer)
            allocated.pointee.mAudioDataByteSize = 8192
            #expect(AudioQueueEnqueueBuffer(queue, allocated, 0, nil) == kAudio_ParamError)
            allocated.pointee.mAudioDataByteSize = 0
            #expect(AudioQueueEnqueueBuffer(queue, allocated, 0, nil) == kAudioQueueErr_BufferEmpty)
            allocated.pointee.mAudioDataByteSize = 4096
            #expect(AudioQueueEnqueueBuffer(queue, allocated, 0, nil) == noErr)
        }

        @Test("item08StartTimeOutOfRange: AudioQueueStart with mSampleTime 1e30, infinity or NaN answers kAudio_ParamError and does not start")
        func item08StartTimeOutOfRange() throws {
            let queue = try Self.makeOutputQueue()
            defer { _ = AudioQueueDispose(queue, true) }
            for sampleTime in [1e30, .infinity, -.infinity, .nan, 9_007_199_254_740_994] {
                var time = AudioTimeStamp()
                time.mSampleTime = sampleTime
                time.mFlags = .sampleTimeValid
                #expect(AudioQueueStart(queue, &time) == kAudio_ParamError, "mSampleTime \(sampleTime)")
            }
            var running: UInt32 = 1
            var size = UInt32(4)
            #expect(AudioQueueGetProperty(queue, kAudioQueueProperty_IsRunning, &running, &size) == noErr)
            #expect(running == 0)
        }

        @Test("item08ParameterValues: Volume NaN/-1/1e9, Pan 7, VolumeRampTime +inf are refused with kAudio_ParamError and leave the value; a Volume set after a refused ramp time works")
        func item08ParameterValues() throws {
            let queue = try Self.makeOutputQueue()
            defer { _ = AudioQueueDispose(queue, true) }
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, 0.25) == noErr)
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pan, 0.5) == noErr)
            for bad: Float in [.nan, -1, 1e9, .infinity] {
                #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, bad) == kAudio_ParamError, "Volume \(bad)")
            }
            for bad: Float in [7, -1.5, .nan] {
                #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Pan, bad) == kAudio_ParamError, "Pan \(bad)")
            }
            for bad: Float in [.infinity, -1, .nan, 1e9] {
                #expect(AudioQueueSetParameter(queue, kAudioQueueParam_VolumeRampTime, bad) == kAudio_ParamError, "VolumeRampTime \(bad)")
            }
            var value: Float = 0
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_Volume, &value) == noErr && value == 0.25)
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_Pan, &value) == noErr && value == 0.5)
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_VolumeRampTime, &value) == noErr && value == 0)
            // The sequence that trapped: ramp time +inf, then a volume.
            #expect(AudioQueueSetParameter(queue, kAudioQueueParam_Volume, 0.75) == noErr)
            #expect(AudioQueueGetParameter(queue, kAudioQueueParam_Volume, &value) == noErr && value == 0.75)
            #expect(AudioQueueSetParameter(queue, 0x7777, 0.5) == kAudioQueueErr_InvalidParameter)
        }

        @Test("item08ReadPacketsHugeCount: AudioFileReadPackets with 0x7fffffff packets reads the file's packets, no trap")
        func item08ReadPacketsHugeCount() throws {
            let path = ExternalTool.temporaryPath("hugecount", extension: "wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", "0.1", "sine", "440"])
            let url = CFURLCreateFromFileSystemRepresentation(nil, Array(path.utf8), path.utf8.count, false)!
            var file: AudioFileID?
            #expect(AudioFileOpenURL(url, .readPermission, 0, &file) == noErr)
            let opened = try #require(file)
            defer { _ = AudioFileClose(opened) }
            // Apple's deprecated call trusts the buffer; this one holds the whole file.
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4800 * 4 + 64, alignment: 16)
            defer { buffer.deallocate() }
            var bytes: UInt32 = 0
            var packets: UInt32 = 0x7FFF_FFFF
            #expect(AudioFileReadPackets(opened, false, &bytes, nil, 0, &packets, buffer) == noErr)
            #expect(packets == 4800 && bytes == 4800 * 4)
        }

        @Test("item16CreateInMissingFolder: AudioFileCreateWithURL in a folder that does not exist answers kAudioFileFileNotFoundError (-43), a directory kAudioFilePermissionsError")
        func item16CreateInMissingFolder() throws {
            var format = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM,
                                                     mFormatFlags: kLinearPCMFormatFlagIsSignedInteger | kLinearPCMFormatFlagIsPacked,
                                                     mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 2,
                                                     mBitsPerChannel: 16, mReserved: 0)
            var file: AudioFileID?
            let missing = "/nonexistent-\(getpid())/take.wav"
            let url = CFURLCreateFromFileSystemRepresentation(nil, Array(missing.utf8), missing.utf8.count, false)!
            #expect(AudioFileCreateWithURL(url, kAudioFileWAVEType, &format, .eraseFile, &file) == kAudioFileFileNotFoundError)
            #expect(kAudioFileFileNotFoundError == -43)
            let folder = NSTemporaryDirectory()
            let directory = CFURLCreateFromFileSystemRepresentation(nil, Array(folder.utf8), folder.utf8.count, true)!
            #expect(AudioFileCreateWithURL(directory, kAudioFileWAVEType, &format, .eraseFile, &file) == kAudioFilePermissionsError)
            #expect(file == nil)
        }

        @Test("handles of one kind are never found as another: a queue passed as a file or converter, a file passed as a queue")
        func handleKindsAreDisjoint() throws {
            let queue = try Self.makeOutputQueue()
            defer { _ = AudioQueueDispose(queue, true) }
            let path = ExternalTool.temporaryPath("handles", extension: "wav")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try ExternalTool.run("sox", ["-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", "0.01", "sine", "440"])
            let url = CFURLCreateFromFileSystemRepresentation(nil, Array(path.utf8), path.utf8.count, false)!
            var file: AudioFileID?
            #expect(AudioFileOpenURL(url, .readPermission, 0, &file) == noErr)
            let opened = try #require(file)
            #expect(AudioFileClose(queue) == kAudioFileNotOpenError)
            #expect(AudioConverterDispose(queue) == kAudio_ParamError)
            #expect(AudioQueueDispose(opened, true) != noErr)
            #expect(AudioFileClose(opened) == noErr)
        }

        @Test("item09TimelineHandles: a timeline disposed twice, another queue's, or made up answers kAudio_ParamError from Dispose and GetCurrentTime")
        func item09TimelineHandles() throws {
            let queue = try Self.makeOutputQueue()
            let other = try Self.makeOutputQueue()
            defer {
                _ = AudioQueueDispose(queue, true)
                _ = AudioQueueDispose(other, true)
            }
            var timeline: AudioQueueTimelineRef?
            #expect(AudioQueueCreateTimeline(queue, &timeline) == noErr)
            let created = try #require(timeline)
            var time = AudioTimeStamp()
            var discontinuity = DarwinBoolean(false)
            #expect(AudioQueueGetCurrentTime(queue, created, &time, &discontinuity) == noErr)
            #expect(AudioQueueGetCurrentTime(other, created, &time, &discontinuity) == kAudio_ParamError)
            #expect(AudioQueueDisposeTimeline(other, created) == kAudio_ParamError)
            #expect(AudioQueueDisposeTimeline(queue, created) == noErr)
            #expect(AudioQueueDisposeTimeline(queue, created) == kAudio_ParamError)
            #expect(AudioQueueGetCurrentTime(queue, created, &time, &discontinuity) == kAudio_ParamError)
            let bogus = OpaquePointer(bitPattern: 0xDEAD_BEE0)!
            #expect(AudioQueueDisposeTimeline(queue, bogus) == kAudio_ParamError)
            #expect(AudioQueueGetCurrentTime(queue, bogus, &time, &discontinuity) == kAudio_ParamError)
            // A timeline still works after all that.
            #expect(AudioQueueCreateTimeline(queue, &timeline) == noErr)
            #expect(AudioQueueGetCurrentTime(queue, timeline, &time, &discontinuity) == noErr)
            #expect(AudioQueueDisposeTimeline(queue, timeline!) == noErr)
        }
    }
}
