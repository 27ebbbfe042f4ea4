import AQServerSuite
import AudioToolbox
import Foundation
import Testing

/// Issue 36: what `kAudioFormatProperty_DecodeFormatIDs` and `EncodeFormatIDs` answer is what
/// playback queues and converters decode, and recording queues encode; every other format of
/// Apple's answers 'fmt?'.
extension JackServerSuite {
    @Suite("The format lists agree with the queues and converters")
    struct FormatListTests {
        static func formatList(_ property: AudioFormatPropertyID) -> [AudioFormatID] {
            var size: UInt32 = 0
            guard AudioFormatGetPropertyInfo(property, 0, nil, &size) == noErr else { return [] }
            var ids = [AudioFormatID](repeating: 0, count: Int(size) / MemoryLayout<AudioFormatID>.size)
            guard AudioFormatGetProperty(property, 0, nil, &size, &ids) == noErr else { return [] }
            return ids
        }

        /// A 48 kHz stereo description of `id`, completed by FormatInfo (16-bit for linear PCM).
        static func description(_ id: AudioFormatID) -> AudioStreamBasicDescription {
            var format = AudioStreamBasicDescription()
            format.mSampleRate = 48000
            format.mFormatID = id
            format.mChannelsPerFrame = 2
            if id == kAudioFormatLinearPCM {
                format.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked
                format.mBitsPerChannel = 16
            }
            var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
            _ = AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &format)
            return format
        }

        @Test("DecodeFormatIDs (lpcm, aac, alac, .mp1, .mp2, .mp3): a playback queue and a converter to linear PCM open for each; EncodeFormatIDs (lpcm, aac, alac): a recording queue opens for each; MPEG audio cannot be recorded or encoded, and Opus, AC-3, E-AC-3, HE-AAC, FLAC and AMR are refused with 'fmt?'")
        func listsAgree() throws {
            let decoded = Self.formatList(kAudioFormatProperty_DecodeFormatIDs)
            let encoded = Self.formatList(kAudioFormatProperty_EncodeFormatIDs)
            #expect(decoded == [kAudioFormatLinearPCM, kAudioFormatMPEG4AAC, kAudioFormatAppleLossless,
                                kAudioFormatMPEGLayer1, kAudioFormatMPEGLayer2, kAudioFormatMPEGLayer3])
            #expect(encoded == [kAudioFormatLinearPCM, kAudioFormatMPEG4AAC, kAudioFormatAppleLossless])
            var float = Self.description(kAudioFormatLinearPCM)
            float.mFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked
            float.mBitsPerChannel = 32
            float.mBytesPerFrame = 8
            float.mBytesPerPacket = 8
            for id in decoded {
                var format = Self.description(id)
                var queue: AudioQueueRef?
                #expect(AudioQueueNewOutput(&format, { _, _, _ in }, nil, nil, nil, 0, &queue) == noErr, "playback of \(id)")
                if let queue { AudioQueueDispose(queue, true) }
                var converter: AudioConverterRef?
                #expect(AudioConverterNew(&format, &float, &converter) == noErr, "a converter from \(id)")
                if let converter { AudioConverterDispose(converter) }
            }
            for id in encoded {
                var format = Self.description(id)
                var queue: AudioQueueRef?
                #expect(AudioQueueNewInput(&format, { _, _, _, _, _, _ in }, nil, nil, nil, 0, &queue) == noErr, "recording of \(id)")
                if let queue { AudioQueueDispose(queue, true) }
            }
            for id in [kAudioFormatMPEGLayer1, kAudioFormatMPEGLayer2, kAudioFormatMPEGLayer3] {
                var format = Self.description(id)
                var queue: AudioQueueRef?
                #expect(AudioQueueNewInput(&format, { _, _, _, _, _, _ in }, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
                var converter: AudioConverterRef?
                #expect(AudioConverterNew(&float, &format, &converter) == kAudioFormatUnsupportedDataFormatError)
            }
            for id in [kAudioFormatOpus, kAudioFormatAC3, kAudioFormatEnhancedAC3, kAudioFormatMPEG4AAC_HE, kAudioFormatFLAC, kAudioFormatAMR] {
                var format = Self.description(id)
                format.mFramesPerPacket = 1024
                var queue: AudioQueueRef?
                #expect(AudioQueueNewOutput(&format, { _, _, _ in }, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError, "playback of \(id)")
            }
        }
    }
}
