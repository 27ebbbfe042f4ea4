import AQCodecs
import AQMedia
import CAudioTypes

// The FormatList properties of AudioFormat, AudioFile and AudioFileStream: the formats a
// stream decodes to, richest first (an explicitly signalled HE-AAC v2 stream as 'aacp', 'aach'
// and its 'aac ' core), as ``PacketDecoders/formatList(_:cookie:)`` decides them.

/// `kAudioFormatProperty_FormatList` ('flst'): specifier an `AudioFormatInfo`, value an array
/// of `AudioFormatListItem`.
public let kAudioFormatProperty_FormatList: AudioFormatPropertyID = 0x666C_7374
/// `kAudioFormatProperty_FirstPlayableFormatFromList` ('fpfl'): specifier an array of
/// `AudioFormatListItem`, value the `UInt32` index of the first one aqjack decodes.
public let kAudioFormatProperty_FirstPlayableFormatFromList: AudioFormatPropertyID = 0x6670_666C
/// `kAudioFilePropertyFormatList` ('flst').
public let kAudioFilePropertyFormatList: AudioFilePropertyID = 0x666C_7374
/// `kAudioChannelLayoutTag_Unknown`: the low 16 bits count the channels.
public let kAudioChannelLayoutTag_Unknown: UInt32 = 0xFFFF_0000

/// The `AudioFormatListItem`s of a stream of `format` with `cookie`, as bytes.
func formatListBytes(_ format: AudioStreamBasicDescription, cookie: [UInt8]) -> [UInt8] {
    let items = PacketDecoders.formatList(format, cookie: cookie).map { item in
        let channels = item.mChannelsPerFrame
        return AudioFormatListItem(mASBD: item, mChannelLayoutTag: channels == 1 ? kAudioChannelLayoutTag_Mono
                                       : channels == 2 ? kAudioChannelLayoutTag_Stereo : kAudioChannelLayoutTag_Unknown | channels)
    }
    return items.withUnsafeBytes { Array($0) }
}

/// The index of the first item in an `AudioFormatListItem` array that aqjack plays (linear PCM
/// or a format of ``PacketDecoders``), or nil.
func firstPlayableItem(_ specifier: [UInt8]) -> Int? {
    let size = MemoryLayout<AudioFormatListItem>.size
    return (0 ..< specifier.count / size).first { index in
        let id = specifier.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: index * size, as: AudioFormatListItem.self).mASBD.mFormatID }
        return id == kAudioFormatLinearPCM || PacketDecoders.decodes(id)
    }
}
