import AQServerSuite
import AQTestSupport
import AudioToolbox
import Foundation
import Testing

/// Apple's queue forwards its converter's properties: code such as the Learning Core Audio
/// recorder asks the queue for `kAudioConverterCurrentOutputStreamDescription` and
/// `kAudioConverterCompressionMagicCookie`.
@Suite("Converter properties asked of a queue (no server needed)")
struct QueueConverterPropertyTests {
    @Test("a playback queue: AAC in, float PCM out, the cookie set on the queue as DecompressionMagicCookie; linear PCM on both sides of a PCM queue")
    func playbackQueue() throws {
        let callback: AudioQueueOutputCallback = { _, _, _ in }
        var aac = AudioStreamBasicDescription(mSampleRate: 44100, mFormatID: kAudioFormatMPEG4AAC, mFormatFlags: 2, mBytesPerPacket: 0,
                                              mFramesPerPacket: 1024, mBytesPerFrame: 0, mChannelsPerFrame: 2, mBitsPerChannel: 0, mReserved: 0)
        var queue: AudioQueueRef?
        #expect(AudioQueueNewOutput(&aac, callback, nil, nil, nil, 0, &queue) == noErr)
        let aq = try #require(queue)
        defer { AudioQueueDispose(aq, true) }
        var input = AudioStreamBasicDescription(), output = AudioStreamBasicDescription()
        var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        #expect(AudioQueueGetProperty(aq, kAudioConverterCurrentInputStreamDescription, &input, &size) == noErr)
        #expect(AudioQueueGetProperty(aq, kAudioConverterCurrentOutputStreamDescription, &output, &size) == noErr)
        #expect(input.mFormatID == kAudioFormatMPEG4AAC && input.mFramesPerPacket == 1024 && input.mSampleRate == 44100)
        #expect(output.mFormatID == kAudioFormatLinearPCM && output.mFormatFlags & kAudioFormatFlagIsFloat != 0
                && output.mChannelsPerFrame == 2 && output.mSampleRate == 44100)
        // A real cookie: an AAC encoder's, for this format.
        var source = pcmFormat(rate: 44100, channels: 2, bits: 32, float: true)
        var converter: AudioConverterRef?
        #expect(AudioConverterNew(&source, &aac, &converter) == noErr)
        var made: UInt32 = 0
        #expect(AudioConverterGetPropertyInfo(try #require(converter), kAudioConverterCompressionMagicCookie, &made, nil) == noErr && made > 0)
        var cookie = [UInt8](repeating: 0, count: Int(made))
        #expect(AudioConverterGetProperty(converter!, kAudioConverterCompressionMagicCookie, &made, &cookie) == noErr)
        AudioConverterDispose(converter!)
        #expect(AudioQueueSetProperty(aq, kAudioQueueProperty_MagicCookie, &cookie, UInt32(cookie.count)) == noErr)
        var cookieSize: UInt32 = 0
        #expect(AudioQueueGetPropertySize(aq, kAudioConverterDecompressionMagicCookie, &cookieSize) == noErr && Int(cookieSize) == cookie.count)
        var back = [UInt8](repeating: 0, count: cookie.count)
        #expect(AudioQueueGetProperty(aq, kAudioConverterDecompressionMagicCookie, &back, &cookieSize) == noErr && back == cookie)

        var pcm = pcmFormat(rate: 48000, channels: 2, bits: 16)
        var pcmQueue: AudioQueueRef?
        #expect(AudioQueueNewOutput(&pcm, callback, nil, nil, nil, 0, &pcmQueue) == noErr)
        let plain = try #require(pcmQueue)
        defer { AudioQueueDispose(plain, true) }
        #expect(AudioQueueGetProperty(plain, kAudioConverterCurrentOutputStreamDescription, &output, &size) == noErr)
        #expect(output.mFormatID == kAudioFormatLinearPCM && output.mBitsPerChannel == 16 && output.mBytesPerFrame == 4)
    }
}

extension JackServerSuite {
    @Suite("Converter properties asked of a recording queue")
    struct RecordingQueueConverterPropertyTests {
        @Test("an AAC recording queue answers kAudioConverterCurrentOutputStreamDescription with its complete format and kAudioConverterCompressionMagicCookie with its cookie, as the Learning Core Audio recorder reads them")
        func aacRecordingQueue() throws {
            let callback: AudioQueueInputCallback = { _, _, _, _, _, _ in }
            var format = AudioStreamBasicDescription()
            format.mFormatID = kAudioFormatMPEG4AAC
            format.mChannelsPerFrame = 2
            format.mSampleRate = 48000
            var queue: AudioQueueRef?
            #expect(AudioQueueNewInput(&format, callback, nil, nil, nil, 0, &queue) == noErr)
            let aq = try #require(queue)
            defer { AudioQueueDispose(aq, true) }
            var described = AudioStreamBasicDescription(), converted = AudioStreamBasicDescription()
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            #expect(AudioQueueGetProperty(aq, kAudioQueueProperty_StreamDescription, &described, &size) == noErr)
            #expect(AudioQueueGetProperty(aq, kAudioConverterCurrentOutputStreamDescription, &converted, &size) == noErr)
            #expect(converted.mFormatID == kAudioFormatMPEG4AAC && converted.mFramesPerPacket == 1024)
            #expect(converted.mSampleRate == described.mSampleRate && converted.mChannelsPerFrame == described.mChannelsPerFrame
                    && converted.mFormatFlags == described.mFormatFlags)
            var cookieSize: UInt32 = 0
            #expect(AudioQueueGetPropertySize(aq, kAudioConverterCompressionMagicCookie, &cookieSize) == noErr && cookieSize > 0)
            var viaConverter = [UInt8](repeating: 0, count: Int(cookieSize)), viaQueue = [UInt8](repeating: 0, count: Int(cookieSize))
            #expect(AudioQueueGetProperty(aq, kAudioConverterCompressionMagicCookie, &viaConverter, &cookieSize) == noErr)
            #expect(AudioQueueGetProperty(aq, kAudioQueueProperty_MagicCookie, &viaQueue, &cookieSize) == noErr)
            #expect(viaConverter == viaQueue)
        }
    }
}
