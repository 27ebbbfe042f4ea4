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

        @Test("DecodeFormatIDs (lpcm, aac, aach, aacp, aacl, aace, alac, .mp1, .mp2, .mp3, flac, opus, ac-3, ec-3): a playback queue and a converter to linear PCM open for each; EncodeFormatIDs (lpcm, aac, alac): a recording queue opens for each; the decode-only formats cannot be recorded or encoded, and AMR, iLBC, IMA4, USAC and µ-law are refused with 'fmt?'")
        func listsAgree() throws {
            let decoded = Self.formatList(kAudioFormatProperty_DecodeFormatIDs)
            let encoded = Self.formatList(kAudioFormatProperty_EncodeFormatIDs)
            #expect(decoded == [kAudioFormatLinearPCM, kAudioFormatMPEG4AAC, kAudioFormatMPEG4AAC_HE, kAudioFormatMPEG4AAC_HE_V2,
                                kAudioFormatMPEG4AAC_LD, kAudioFormatMPEG4AAC_ELD, kAudioFormatAppleLossless,
                                kAudioFormatMPEGLayer1, kAudioFormatMPEGLayer2, kAudioFormatMPEGLayer3,
                                kAudioFormatFLAC, kAudioFormatOpus, kAudioFormatAC3, kAudioFormatEnhancedAC3])
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
            for id in decoded where !encoded.contains(id) {
                var format = Self.description(id)
                var queue: AudioQueueRef?
                #expect(AudioQueueNewInput(&format, { _, _, _, _, _, _ in }, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError)
                var converter: AudioConverterRef?
                #expect(AudioConverterNew(&float, &format, &converter) == kAudioFormatUnsupportedDataFormatError)
            }
            for id in [kAudioFormatAMR, kAudioFormatiLBC, kAudioFormatAppleIMA4, kAudioFormatMPEGD_USAC, kAudioFormatULaw] {
                var format = Self.description(id)
                format.mFramesPerPacket = 1024
                var queue: AudioQueueRef?
                #expect(AudioQueueNewOutput(&format, { _, _, _ in }, nil, nil, nil, 0, &queue) == kAudioFormatUnsupportedDataFormatError, "playback of \(id)")
            }
        }

        /// `kAudioFormatProperty_FormatList` of an AAC stream whose cookie is `config`.
        static func formatList(cookie config: [UInt8]) -> [AudioFormatListItem] {
            var info = AudioFormatInfo(mASBD: description(kAudioFormatMPEG4AAC), mMagicCookie: nil, mMagicCookieSize: UInt32(config.count))
            return config.withUnsafeBytes { bytes in
                info.mMagicCookie = bytes.baseAddress
                var size: UInt32 = 0
                guard AudioFormatGetPropertyInfo(kAudioFormatProperty_FormatList, UInt32(MemoryLayout<AudioFormatInfo>.size), &info, &size) == noErr else { return [] }
                var items = [AudioFormatListItem](repeating: AudioFormatListItem(), count: Int(size) / MemoryLayout<AudioFormatListItem>.size)
                guard AudioFormatGetProperty(kAudioFormatProperty_FormatList, UInt32(MemoryLayout<AudioFormatInfo>.size), &info, &size, &items) == noErr else { return [] }
                return items
            }
        }

        @Test("FormatList of explicitly signalled HE-AAC (object type 5, 24 kHz stereo core, 48 kHz out): 'aach' at 48 kHz with 2048 frames, then the 'aac ' core at 24 kHz with 1024; HE-AAC v2 (29, mono core): 'aacp' stereo, 'aach' and 'aac ' mono; AAC-LC: the description alone; FirstPlayableFormatFromList picks the first; a list of AMR alone is refused")
        func highEfficiencyLayers() throws {
            // Object type 5, core 24 kHz (index 6), stereo, SBR 48 kHz (index 3), core object type 2.
            let he = Self.formatList(cookie: [0x2B, 0x11, 0x88, 0x00])
            #expect(he.map(\.mASBD.mFormatID) == [kAudioFormatMPEG4AAC_HE, kAudioFormatMPEG4AAC])
            #expect(he.map(\.mASBD.mSampleRate) == [48000, 24000] && he.map(\.mASBD.mFramesPerPacket) == [2048, 1024])
            #expect(he.map(\.mASBD.mChannelsPerFrame) == [2, 2] && he.map(\.mChannelLayoutTag) == [kAudioChannelLayoutTag_Stereo, kAudioChannelLayoutTag_Stereo])
            // Object type 29, core 24 kHz, mono, SBR 48 kHz, core object type 2.
            let v2 = Self.formatList(cookie: [0xEB, 0x09, 0x88, 0x00])
            #expect(v2.map(\.mASBD.mFormatID) == [kAudioFormatMPEG4AAC_HE_V2, kAudioFormatMPEG4AAC_HE, kAudioFormatMPEG4AAC])
            #expect(v2.map(\.mASBD.mChannelsPerFrame) == [2, 1, 1] && v2.map(\.mASBD.mSampleRate) == [48000, 48000, 24000])
            // AAC-LC, 48 kHz stereo.
            let lc = Self.formatList(cookie: [0x11, 0x90])
            #expect(lc.map(\.mASBD.mFormatID) == [kAudioFormatMPEG4AAC] && lc.first?.mASBD.mSampleRate == 48000)

            var index: UInt32 = 99
            var size = UInt32(4)
            #expect(AudioFormatGetProperty(kAudioFormatProperty_FirstPlayableFormatFromList, UInt32(v2.count * MemoryLayout<AudioFormatListItem>.size), v2, &size, &index) == noErr && index == 0)
            var amr = AudioFormatListItem()
            amr.mASBD = Self.description(kAudioFormatAMR)
            #expect(AudioFormatGetProperty(kAudioFormatProperty_FirstPlayableFormatFromList, UInt32(MemoryLayout<AudioFormatListItem>.size), &amr, &size, &index)
                    == kAudioFormatUnsupportedDataFormatError)
        }
    }
}
