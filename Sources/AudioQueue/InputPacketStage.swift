import AQCodecs
import AQMedia
import CAudioTypes

/// The AAC side of a recording queue: encodes the queue's Float frames (already in the format's
/// rate) and numbers the packets, so the queue can place whole packets into buffers and stamp
/// each buffer with the device time of its first packet. Queue thread only (under the queue's lock).
///
/// Timeline: output frame 0 is the first frame recorded after a start, at device frame
/// ``anchorDeviceFrame``. Packet k decodes to output frames `k·1024 − priming ..< (k+1)·1024 −
/// priming`, so its first frame is at `anchor + (k·1024 − priming) × deviceRate / formatRate`
/// (before the anchor for packet 0: the encoder's priming).
final class InputPacketStage {
    let sampleRate: Int
    let channelCount: Int
    let deviceRate: Double
    var bitRate: Int
    var quality: Int
    private(set) var encoder: AACEncoder
    /// Packets produced since the latest start.
    private(set) var packetIndex: Int64 = 0
    var anchorDeviceFrame: Double?

    init(format: AudioStreamBasicDescription, deviceRate: Double) throws(AudioStatusError) {
        sampleRate = Int(format.mSampleRate)
        channelCount = Int(format.mChannelsPerFrame)
        self.deviceRate = deviceRate
        bitRate = FormatConverter.defaultBitRate(channelCount: channelCount, sampleRate: format.mSampleRate)
        quality = 0x60
        encoder = try AACEncoder(sampleRate: sampleRate, channelCount: channelCount, bitRate: bitRate, quality: quality)
    }

    /// The magic cookie (an ES_Descriptor, Apple's format for AAC).
    var magicCookie: [UInt8] {
        ElementaryStreamDescriptor(audioSpecificConfig: encoder.audioSpecificConfig, averageBitRate: UInt32(bitRate),
                                   maximumBitRate: UInt32(bitRate), bufferSize: UInt32(encoder.maximumPacketSize)).bytes
    }

    var maximumPacketSize: Int { encoder.maximumPacketSize }
    var primingFrames: Int { encoder.primingFrames }

    /// Device frame of packet `index`'s first frame.
    func deviceFrame(ofPacket index: Int64) -> Double {
        (anchorDeviceFrame ?? 0) + Double(index * 1024 - Int64(encoder.primingFrames)) * deviceRate / Double(sampleRate)
    }

    /// Encodes frames; hands each packet and its index to `place`.
    func encode(_ frames: UnsafePointer<Float>, frameCount: Int, place: (EncodedPacket, Int64) -> Void) throws(AudioStatusError) {
        try encoder.encode(frames, frameCount: frameCount) { packet in
            place(packet, packetIndex)
            packetIndex += 1
        }
    }

    /// Flushes the encoder (end of a recording) and prepares a fresh one for the next start.
    func finish(place: (EncodedPacket, Int64) -> Void) throws(AudioStatusError) {
        try encoder.finish { packet in
            place(packet, packetIndex)
            packetIndex += 1
        }
        lastRemainderFrames = encoder.remainderFrames
        lastFrameCount = encoder.inputFrameCount
        encoder = try AACEncoder(sampleRate: sampleRate, channelCount: channelCount, bitRate: bitRate, quality: quality)
        packetIndex = 0
        anchorDeviceFrame = nil
    }

    /// Whether frames have gone into the current encoder.
    var hasStarted: Bool { encoder.inputFrameCount > 0 }
    /// The finished recording's remainder frames and input frames (after ``finish(place:)``).
    private(set) var lastRemainderFrames = 0
    private(set) var lastFrameCount: Int64 = 0

    /// Settings apply from the next encoder (the next start).
    func configure(bitRate: Int?, quality: Int?) throws(AudioStatusError) {
        if let bitRate { self.bitRate = bitRate }
        if let quality { self.quality = quality }
        if !hasStarted {
            encoder = try AACEncoder(sampleRate: sampleRate, channelCount: channelCount, bitRate: self.bitRate, quality: self.quality)
        }
    }
}
