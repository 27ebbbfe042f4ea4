import AQMedia
import CAudioTypes

// The WAVE/RF64 stream parser (CAF's is in StreamParserCAF.swift). Frames are handed out
// whole, as many as have arrived.

/// WAVE and RF64: 'fmt ' (PCM, float, or WAVE_FORMAT_EXTENSIBLE with either subformat), then
/// 'data'; other chunks are skipped, and whatever follows the data.
final class WAVEStreamParser: StreamContainerParser {
    private var state = ChunkedState.header
    private let rf64: Bool
    private var ds64DataSize: Int64?
    private var haveFormat = false
    /// Data bytes still to come (nil: to the end of the stream).
    private var dataLeft: Int64?

    init(rf64: Bool) { self.rf64 = rf64 }

    func step(_ input: UnsafeRawBufferPointer, at offset: Int64, info: AudioStreamInfo,
              events: (AudioStreamEvent) -> Void, packets: AudioStreamPacketHandler) throws(AudioFileError) -> Int {
        if let passed = state.pass(input) { return passed }
        switch state {
        case .header:
            guard input.count >= 12 else { return 0 }
            guard input.fourCC(8) == "WAVE" else { throw malformedStream("a RIFF stream that is not WAVE ('\(input.fourCC(8))')") }
            state = .chunks
            return 12
        case .skipping, .trailer:
            return 0   // passed over above
        case .chunks:
            guard input.count >= 8 else { return 0 }
            let id = input.fourCC(0)
            var size = Int64(input.le32(4))
            if id == "data" {
                guard haveFormat else { throw malformedStream("WAVE 'data' before 'fmt '") }
                if rf64, size == 0xFFFF_FFFF, let ds64DataSize { size = ds64DataSize }
                // 0 or 0xFFFFFFFF: a stream still being written; data runs to the end.
                dataLeft = size == 0 || size == 0xFFFF_FFFF ? nil : size
                info.dataOffset = offset + 8
                info.audioDataByteCount = dataLeft
                if let dataLeft { info.audioDataPacketCount = dataLeft / Int64(info.dataFormat.mBytesPerPacket) }
                events(.property(AudioFileStreamProperties.dataOffset))
                if dataLeft != nil {
                    events(.property(AudioFileStreamProperties.audioDataByteCount))
                    events(.property(AudioFileStreamProperties.audioDataPacketCount))
                }
                info.isReadyToProducePackets = true
                events(.property(AudioFileStreamProperties.readyToProducePackets))
                state = .data
                return 8
            }
            let padded = size + (size & 1)
            guard id == "fmt " || id == "ds64" else {
                state = .skip(padded)
                return 8
            }
            try checkHeaderSize(padded, of: "WAVE '\(id)' chunk")
            guard input.count - 8 >= Int(padded) else { return 0 }
            let body = UnsafeRawBufferPointer(rebasing: input[8 ..< 8 + Int(size)])
            if id == "ds64" {
                guard body.count >= 16 else { throw malformedStream("RF64 'ds64' of \(body.count) bytes") }
                ds64DataSize = Int64(bitPattern: body.le64(8))
                guard ds64DataSize! >= 0 else { throw malformedStream("RF64 'ds64' data size \(ds64DataSize!): expected 0 or more") }
            } else {
                info.dataFormat = try Self.format(body)
                info.maximumPacketSize = Int(info.dataFormat.mBytesPerPacket)
                haveFormat = true
                events(.property(AudioFileStreamProperties.dataFormat))
            }
            return 8 + Int(padded)
        case .data:
            let consumed = emitFrames(input, frameBytes: Int(info.dataFormat.mBytesPerFrame), left: dataLeft, packets: packets)
            if let left = dataLeft {
                dataLeft = left - Int64(consumed)
                if dataLeft == 0 { state = .trailer }
            }
            return consumed
        }
    }

    static func format(_ body: UnsafeRawBufferPointer) throws(AudioFileError) -> AudioStreamBasicDescription {
        guard body.count >= 16 else { throw malformedStream("WAVE 'fmt ' of \(body.count) bytes") }
        var tag = body.le16(0)
        let channels = body.le16(2)
        let rate = Double(body.le32(4))
        let bits = body.le16(14)
        if tag == 0xFFFE, body.count >= 26 { tag = body.le16(24) }   // the subformat GUID's first two bytes
        guard tag == 1 || tag == 3, channels >= 1, rate >= 1, [8, 16, 24, 32, 64].contains(bits), tag == 1 || bits >= 32 else {
            throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode,
                                 "WAVE format tag \(tag), \(bits) bits: expected integer PCM (8 ... 32 bits) or float (32, 64)")
        }
        let frameBytes = channels * bits / 8
        let flags: UInt32 = tag == 3 ? AudioFormatValues.isFloat | AudioFormatValues.isPacked
            : bits == 8 ? AudioFormatValues.isPacked : AudioFormatValues.isSignedInteger | AudioFormatValues.isPacked
        return AudioStreamBasicDescription(mSampleRate: rate, mFormatID: AudioFormatValues.linearPCM, mFormatFlags: flags,
                                           mBytesPerPacket: frameBytes, mFramesPerPacket: 1, mBytesPerFrame: frameBytes,
                                           mChannelsPerFrame: channels, mBitsPerChannel: bits, mReserved: 0)
    }

    func seek(toPacket packet: Int64, info: AudioStreamInfo) throws(AudioFileError) -> (offset: Int64, estimated: Bool)? {
        let target = try packetOffset(packet, bytesPerPacket: Int64(info.dataFormat.mBytesPerPacket), from: info.dataOffset)
        if let total = info.audioDataByteCount { dataLeft = max(0, total - (target - info.dataOffset)) }
        state = dataLeft == 0 ? .trailer : .data
        return (target, false)
    }
}
