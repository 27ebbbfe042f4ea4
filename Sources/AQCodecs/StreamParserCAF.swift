import AQMedia
import CAudioTypes

/// CAF streams: 'desc', 'kuki', 'pakt' (before 'data' for variable-size packets, as afconvert
/// and aqjack write them), then 'data'; other chunks are skipped. Linear PCM comes out in whole
/// frames, AAC and ALAC packet by packet with descriptions from the packet table.
final class CAFStreamParser: StreamContainerParser {
    private var state = ChunkedState.header
    private var haveFormat = false
    private var dataLeft: Int64?
    /// Packet sizes from 'pakt' (variable-size formats), and the next packet to hand out.
    private var sizes: [Int] = []
    private var nextPacket = 0

    private var isVariable = false

    func step(_ input: UnsafeRawBufferPointer, at offset: Int64, info: AudioStreamInfo,
              events: (AudioStreamEvent) -> Void, packets: AudioStreamPacketHandler) throws(AudioFileError) -> Int {
        if let passed = state.pass(input) { return passed }
        switch state {
        case .header:
            guard input.count >= 8 else { return 0 }
            guard input.be16(4) == 1 else { throw malformedStream("CAF version \(input.be16(4)): expected 1") }
            state = .chunks
            return 8
        case .skipping, .trailer:
            return 0   // passed over above
        case .chunks:
            guard input.count >= 12 else { return 0 }
            let type = input.fourCC(0)
            let size = Int64(bitPattern: input.be64(4))
            if type == "data" {
                guard input.count >= 16 else { return 0 }
                guard haveFormat else { throw malformedStream("CAF 'data' before 'desc'") }
                // -1: a file still being written, its data running to the end; else the 4-byte
                // edit count and the audio.
                guard size == -1 || size >= 4 else { throw malformedStream("CAF 'data' chunk of \(size) bytes: expected -1 or at least 4") }
                guard !isVariable || !sizes.isEmpty || size == 4 else {
                    throw malformedStream("CAF of variable-size packets with 'pakt' after 'data': a stream needs the packet table first")
                }
                dataLeft = size < 0 ? nil : size - 4
                info.dataOffset = offset + 16
                if let dataLeft {
                    info.audioDataByteCount = dataLeft
                    if !isVariable { info.audioDataPacketCount = dataLeft / Int64(max(1, info.dataFormat.mBytesPerPacket)) }
                }
                events(.property(AudioFileStreamProperties.dataOffset))
                if dataLeft != nil { events(.property(AudioFileStreamProperties.audioDataByteCount)) }
                if info.audioDataPacketCount != nil { events(.property(AudioFileStreamProperties.audioDataPacketCount)) }
                info.isReadyToProducePackets = true
                events(.property(AudioFileStreamProperties.readyToProducePackets))
                state = .data
                return 16
            }
            guard size >= 0 else { throw malformedStream("CAF '\(type)' chunk of unknown size before 'data'") }
            guard ["desc", "kuki", "pakt"].contains(type) else {
                state = .skip(size)
                return 12
            }
            try checkHeaderSize(size, of: "CAF '\(type)' chunk")
            guard input.count - 12 >= Int(size) else { return 0 }
            let body = UnsafeRawBufferPointer(rebasing: input[12 ..< 12 + Int(size)])
            switch type {
            case "desc":
                info.dataFormat = try Self.format(body)
                isVariable = info.dataFormat.mBytesPerPacket == 0
                info.maximumPacketSize = Int(info.dataFormat.mBytesPerPacket)
                haveFormat = true
                events(.property(AudioFileStreamProperties.dataFormat))
            case "kuki":
                info.magicCookie = Array(body)
                events(.property(AudioFileStreamProperties.magicCookieData))
            default:
                try readPacketTable(body, info: info)
                events(.property(AudioFileStreamProperties.packetTableInfo))
                events(.property(AudioFileStreamProperties.audioDataPacketCount))
            }
            return 12 + Int(size)
        case .data:
            let consumed: Int
            if isVariable {
                consumed = emitPackets(input, info: info, packets: packets)
            } else {
                consumed = emitFrames(input, frameBytes: Int(info.dataFormat.mBytesPerPacket), left: dataLeft, packets: packets)
            }
            if let left = dataLeft {
                dataLeft = left - Int64(consumed)
                if dataLeft == 0 { state = .trailer }
            }
            return consumed
        }
    }

    /// Hands out every packet that has fully arrived, with descriptions.
    private func emitPackets(_ input: UnsafeRawBufferPointer, info: AudioStreamInfo, packets: AudioStreamPacketHandler) -> Int {
        var descriptions: [AudioStreamPacketDescription] = []
        var used = 0
        while nextPacket < sizes.count, used + sizes[nextPacket] <= input.count {
            descriptions.append(AudioStreamPacketDescription(mStartOffset: Int64(used), mVariableFramesInPacket: 0, mDataByteSize: UInt32(sizes[nextPacket])))
            used += sizes[nextPacket]
            nextPacket += 1
        }
        if !descriptions.isEmpty {
            descriptions.withUnsafeBufferPointer { packets(UnsafeRawBufferPointer(rebasing: input[0 ..< used]), $0.count, $0) }
        }
        // Past the table: nothing more is audio.
        if nextPacket == sizes.count, used == 0 { return input.count }
        return used
    }

    private func readPacketTable(_ body: UnsafeRawBufferPointer, info: AudioStreamInfo) throws(AudioFileError) {
        guard body.count >= 24 else { throw malformedStream("CAF 'pakt' of \(body.count) bytes") }
        let count = Int64(bitPattern: body.be64(0))
        let valid = Int64(bitPattern: body.be64(8))
        let priming = Int32(bitPattern: body.be32(16))
        let remainder = Int32(bitPattern: body.be32(20))
        guard count >= 0, count <= Int64(body.count), count <= StreamLimits.packets else {
            throw malformedStream("CAF 'pakt' lists \(count) packets in \(body.count) bytes")
        }
        guard valid >= 0, priming >= 0, remainder >= 0 else {
            throw malformedStream("CAF 'pakt' with \(valid) valid, \(priming) priming and \(remainder) remainder frames: expected 0 or more of each")
        }
        sizes.removeAll()
        info.packetOffsets.removeAll()
        info.packetTable = PacketTable(validFrameCount: valid, primingFrames: priming, remainderFrames: remainder)
        info.audioDataPacketCount = count
        guard isVariable else { return }
        var cursor = 24
        // Each entry a variable-length integer (7 bits a byte), refused past a packet's limit.
        func varint() throws(AudioFileError) -> Int {
            var value = 0
            while true {
                guard cursor < body.count else { throw malformedStream("CAF 'pakt' ends inside its table") }
                let byte = body[cursor]
                cursor += 1
                value = value << 7 | Int(byte & 0x7F)
                guard value <= StreamLimits.packetBytes else {
                    throw malformedStream("CAF 'pakt' entry at byte \(cursor) is over \(StreamLimits.packetBytes): not a packet size")
                }
                if byte & 0x80 == 0 { return value }
            }
        }
        sizes.reserveCapacity(Int(count))
        var start: Int64 = 0
        for _ in 0 ..< count {
            let size = try varint()
            if info.dataFormat.mFramesPerPacket == 0 { _ = try varint() }
            sizes.append(size)
            info.packetOffsets.append(start)
            start += Int64(size)
            info.maximumPacketSize = max(info.maximumPacketSize, size)
        }
    }

    /// Core Audio's description from a 'desc' chunk (CAF's linear-PCM flags: float = 1,
    /// little-endian = 2).
    static func format(_ body: UnsafeRawBufferPointer) throws(AudioFileError) -> AudioStreamBasicDescription {
        guard body.count >= 32 else { throw malformedStream("CAF 'desc' of \(body.count) bytes") }
        var format = AudioStreamBasicDescription(
            mSampleRate: Double(bitPattern: body.be64(0)), mFormatID: body.be32(8), mFormatFlags: body.be32(12),
            mBytesPerPacket: body.be32(16), mFramesPerPacket: body.be32(20), mBytesPerFrame: 0,
            mChannelsPerFrame: body.be32(24), mBitsPerChannel: body.be32(28), mReserved: 0)
        guard format.mSampleRate.isFinite, format.mSampleRate >= 1, format.mChannelsPerFrame >= 1 else {
            throw malformedStream("CAF 'desc' with \(format.mSampleRate) Hz and \(format.mChannelsPerFrame) channels")
        }
        guard format.mBytesPerPacket <= StreamLimits.packetBytes else {
            throw malformedStream("CAF 'desc' with \(format.mBytesPerPacket) bytes per packet: expected at most \(StreamLimits.packetBytes)")
        }
        if format.mFormatID == AudioFormatValues.linearPCM {
            let isFloat = format.mFormatFlags & 1 != 0
            let little = format.mFormatFlags & 2 != 0
            format.mFormatFlags = (isFloat ? AudioFormatValues.isFloat : AudioFormatValues.isSignedInteger) | AudioFormatValues.isPacked
                | (little ? 0 : AudioFormatValues.isBigEndian)
            format.mBytesPerFrame = format.mBytesPerPacket
            guard format.mBytesPerPacket > 0 else { throw malformedStream("CAF linear PCM with 0 bytes per packet") }
        }
        return format
    }

    func seek(toPacket packet: Int64, info: AudioStreamInfo) throws(AudioFileError) -> (offset: Int64, estimated: Bool)? {
        if isVariable {
            guard !sizes.isEmpty else { return nil }
            nextPacket = Int(min(packet, Int64(sizes.count)))
            let start = nextPacket < sizes.count ? info.packetOffsets[nextPacket] : (info.packetOffsets.last ?? 0) + Int64(sizes.last ?? 0)
            if let total = info.audioDataByteCount { dataLeft = total - start }
            state = nextPacket < sizes.count ? .data : .trailer
            return (info.dataOffset + start, false)
        }
        let target = try packetOffset(packet, bytesPerPacket: Int64(info.dataFormat.mBytesPerPacket), from: info.dataOffset)
        if let total = info.audioDataByteCount { dataLeft = max(0, total - (target - info.dataOffset)) }
        state = dataLeft == 0 ? .trailer : .data
        return (target, false)
    }
}
