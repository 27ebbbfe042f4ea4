import AQCodecs
import AQMedia
import CAudioTypes

/// The compressed side of a recording queue (AAC-LC or Apple Lossless): encodes the queue's
/// Float frames (already in the format's rate) and numbers the packets, so the queue can place
/// whole packets into buffers and stamp each buffer with the device time of its first packet.
/// Queue thread only (under the queue's lock).
///
/// Timeline: output frame 0 is the first frame recorded after a start, at device frame
/// ``anchorDeviceFrame``. Packet k (F frames per packet: 1024 AAC, 4096 ALAC) decodes to output
/// frames `k·F − priming ..< (k+1)·F − priming`, so its first frame is at
/// `anchor + (k·F − priming) × deviceRate / formatRate` (before the anchor for AAC's packet 0:
/// the encoder's priming; ALAC has none).
final class InputPacketStage {
    let sampleRate: Int
    let channelCount: Int
    let deviceRate: Double
    var bitRate: Int
    var quality: Int
    /// 'aac ' or 'alac'.
    let formatID: UInt32
    /// ALAC: 16 or 24.
    let bitDepth: Int
    let framesPerPacket: Int
    private(set) var encoder: any PacketEncoding
    /// Packets produced since the latest start.
    private(set) var packetIndex: Int64 = 0
    var anchorDeviceFrame: Double?

    init(format: AudioStreamBasicDescription, deviceRate: Double) throws(AudioConverterError) {
        sampleRate = Int(format.mSampleRate)
        channelCount = Int(format.mChannelsPerFrame)
        self.deviceRate = deviceRate
        bitRate = FormatConverter.defaultBitRate(channelCount: channelCount, sampleRate: format.mSampleRate)
        quality = 0x60
        formatID = format.mFormatID
        bitDepth = ALAC.bitDepth(formatFlag: format.mFormatFlags)
        framesPerPacket = formatID == AudioFormatValues.appleLossless ? ALAC.framesPerPacket : 1024
        encoder = try Self.makeEncoder(formatID: formatID, sampleRate: sampleRate, channelCount: channelCount, bitDepth: bitDepth,
                                       bitRate: bitRate, quality: quality)
    }

    private static func makeEncoder(formatID: UInt32, sampleRate: Int, channelCount: Int, bitDepth: Int, bitRate: Int,
                                    quality: Int) throws(AudioConverterError) -> any PacketEncoding {
        if formatID == AudioFormatValues.appleLossless {
            return try ALACEncoder(sampleRate: sampleRate, channelCount: channelCount, bitDepth: bitDepth)
        }
        return try AACEncoder(sampleRate: sampleRate, channelCount: channelCount, bitRate: bitRate, quality: quality)
    }

    private func makeEncoder() throws(AudioConverterError) -> any PacketEncoding {
        try Self.makeEncoder(formatID: formatID, sampleRate: sampleRate, channelCount: channelCount, bitDepth: bitDepth, bitRate: bitRate, quality: quality)
    }

    /// The magic cookie in Apple's format: AAC's ES_Descriptor, ALAC's ALACSpecificConfig.
    var magicCookie: [UInt8] {
        if let alac = encoder as? ALACEncoder { return alac.magicCookie }
        guard let aac = encoder as? AACEncoder else { return [] }
        return ElementaryStreamDescriptor(audioSpecificConfig: aac.audioSpecificConfig, averageBitRate: UInt32(bitRate),
                                          maximumBitRate: UInt32(bitRate), bufferSize: UInt32(aac.maximumPacketSize)).bytes
    }

    /// AAC: 6144 bits per channel; ALAC: the raw frames plus a header.
    var maximumPacketSize: Int {
        formatID == AudioFormatValues.appleLossless ? framesPerPacket * channelCount * bitDepth / 8 + 64 : CompressedFormatValues.aacMaximumPacketBytes(channels: Int(channelCount))
    }
    var primingFrames: Int { encoder.primingFrames }

    /// Device frame of packet `index`'s first frame.
    func deviceFrame(ofPacket index: Int64) -> Double {
        (anchorDeviceFrame ?? 0) + Double(index * Int64(framesPerPacket) - Int64(encoder.primingFrames)) * deviceRate / Double(sampleRate)
    }

    /// Encodes frames; hands each packet and its index to `place`.
    func encode(_ frames: UnsafePointer<Float>, frameCount: Int, place: (EncodedPacket, Int64) -> Void) throws(AudioConverterError) {
        try encoder.encode(frames, frameCount: frameCount) { packet in
            place(packet, packetIndex)
            packetIndex += 1
        }
    }

    /// Flushes the encoder (end of a recording) and prepares a fresh one for the next start.
    func finish(place: (EncodedPacket, Int64) -> Void) throws(AudioConverterError) {
        try encoder.finish { packet in
            place(packet, packetIndex)
            packetIndex += 1
        }
        lastRemainderFrames = Int(packetIndex) * framesPerPacket - encoder.primingFrames - Int(encoder.inputFrameCount)
        lastFrameCount = encoder.inputFrameCount
        encoder = try makeEncoder()
        packetIndex = 0
        anchorDeviceFrame = nil
    }

    /// Whether frames have gone into the current encoder.
    var hasStarted: Bool { encoder.inputFrameCount > 0 }
    /// The finished recording's remainder frames and input frames (after ``finish(place:)``).
    private(set) var lastRemainderFrames = 0
    private(set) var lastFrameCount: Int64 = 0

    /// Settings apply from the next encoder (the next start).
    func configure(bitRate: Int?, quality: Int?) throws(AudioConverterError) {
        if let bitRate { self.bitRate = bitRate }
        if let quality { self.quality = quality }
        if !hasStarted { encoder = try makeEncoder() }
    }
}
