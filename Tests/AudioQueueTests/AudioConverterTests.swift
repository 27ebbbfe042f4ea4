import AQTestSupport
import AudioToolbox
import Foundation
import Testing

private func pcm(_ rate: Double, _ channels: UInt32, _ bits: UInt32, float: Bool = false, bigEndian: Bool = false) -> AudioStreamBasicDescription {
    var format = AudioStreamBasicDescription()
    format.mSampleRate = rate
    format.mFormatID = kAudioFormatLinearPCM
    format.mFormatFlags = (float ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger) | kAudioFormatFlagIsPacked
        | (bigEndian ? kAudioFormatFlagIsBigEndian : 0)
    format.mChannelsPerFrame = channels
    format.mBitsPerChannel = bits
    format.mFramesPerPacket = 1
    format.mBytesPerFrame = channels * bits / 8
    format.mBytesPerPacket = format.mBytesPerFrame
    return format
}

/// Input for FillComplexBuffer tests: hands out its bytes in pieces of `piece` frames, then
/// either ends the stream (0 packets, noErr) or says "no data for now" (-1, 0 packets).
final class PieceFeeder {
    let bytes: [UInt8]
    let frameSize: Int
    let piece: Int
    var offset = 0
    var endsStream = true
    var calls = 0
    init(bytes: [UInt8], frameSize: Int, piece: Int) {
        self.bytes = bytes
        self.frameSize = frameSize
        self.piece = piece
    }
}

let pieceFeederProc: AudioConverterComplexInputDataProc = { _, ioNumberDataPackets, ioData, _, userData in
    let feeder = Unmanaged<PieceFeeder>.fromOpaque(userData!).takeUnretainedValue()
    feeder.calls += 1
    let frames = min(feeder.piece, Int(ioNumberDataPackets.pointee), (feeder.bytes.count - feeder.offset) / feeder.frameSize)
    guard frames > 0 else {
        ioNumberDataPackets.pointee = 0
        return feeder.endsStream ? noErr : -1
    }
    feeder.bytes.withUnsafeBytes { ioData.pointee.mBuffers.mData = UnsafeMutableRawPointer(mutating: $0.baseAddress! + feeder.offset) }
    ioData.pointee.mBuffers.mDataByteSize = UInt32(frames * feeder.frameSize)
    ioNumberDataPackets.pointee = UInt32(frames)
    feeder.offset += frames * feeder.frameSize
    return noErr
}

@Suite("AudioConverter: linear PCM, rates, properties, errors")
struct AudioConverterTests {
    @Test("ConvertBuffer: 16-bit little-endian → 24-bit big-endian → 16-bit little-endian is bit-exact; float in between too")
    func depthsAndEndianness() throws {
        let frames = 4800
        var samples = [Int16](repeating: 0, count: frames * 2)
        for index in samples.indices { samples[index] = Int16(truncatingIfNeeded: index &* 7919 &- 20000) }
        let chain: [AudioStreamBasicDescription] = [pcm(48000, 2, 16), pcm(48000, 2, 24, bigEndian: true), pcm(48000, 2, 32, float: true),
                                                    pcm(48000, 2, 32, float: true, bigEndian: true), pcm(48000, 2, 16)]
        var data = samples.withUnsafeBytes { Array($0) }
        for (from, to) in zip(chain, chain.dropFirst()) {
            var source = from, destination = to
            var converter: AudioConverterRef?
            #expect(AudioConverterNew(&source, &destination, &converter) == noErr)
            var output = [UInt8](repeating: 0, count: frames * Int(to.mBytesPerFrame))
            var size = UInt32(output.count)
            #expect(AudioConverterConvertBuffer(converter!, UInt32(data.count), data, &size, &output) == noErr)
            #expect(Int(size) == output.count)
            #expect(AudioConverterDispose(converter!) == noErr)
            data = output
        }
        #expect(data == samples.withUnsafeBytes { Array($0) })
        // 24-bit big-endian really is big-endian: the first sample's top byte comes first.
        var source = pcm(48000, 2, 16), destination = pcm(48000, 2, 24, bigEndian: true)
        var converter: AudioConverterRef?
        #expect(AudioConverterNew(&source, &destination, &converter) == noErr)
        let one: [Int16] = [0x1234, -2]
        var out = [UInt8](repeating: 0, count: 6)
        var size = UInt32(6)
        #expect(AudioConverterConvertBuffer(converter!, 4, one, &size, &out) == noErr)
        #expect(out == [0x12, 0x34, 0x00, 0xFF, 0xFE, 0x00])
    }

    @Test("ConvertBuffer refuses rate conversion, partial frames and short output with Apple's codes")
    func convertBufferErrors() throws {
        var source = pcm(48000, 2, 16), other = pcm(44100, 2, 16)
        var converter: AudioConverterRef?
        #expect(AudioConverterNew(&source, &other, &converter) == noErr)
        var out = [UInt8](repeating: 0, count: 64)
        var size = UInt32(64)
        #expect(AudioConverterConvertBuffer(converter!, 8, [UInt8](repeating: 0, count: 8), &size, &out) == kAudioConverterErr_OperationNotSupported)
        var same = pcm(48000, 2, 16)
        #expect(AudioConverterNew(&source, &same, &converter) == noErr)
        #expect(AudioConverterConvertBuffer(converter!, 6, [UInt8](repeating: 0, count: 6), &size, &out) == kAudioConverterErr_InvalidInputSize)
        size = 4
        #expect(AudioConverterConvertBuffer(converter!, 8, [UInt8](repeating: 0, count: 8), &size, &out) == kAudioConverterErr_InvalidOutputSize)
        #expect(AudioConverterDispose(converter!) == noErr)
        #expect(AudioConverterDispose(converter!) == kAudio_ParamError)   // a disposed converter is not found, not freed twice
        var bad = pcm(48000, 2, 16)
        bad.mFormatID = 0x6D70_3320   // 'mp3 '
        #expect(AudioConverterNew(&source, &bad, &converter) == kAudioConverterErr_FormatNotSupported)
    }

    @Test("FillComplexBuffer 48 → 44.1 kHz: exact output length after the end of stream, sine SNR ≥ 120 dB, resumes after 'no data for now'")
    func sampleRateConversion() throws {
        let frames = 48000
        let sine = (0 ..< frames * 2).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0 / 2) / 48000)) }
        var source = pcm(48000, 2, 32, float: true), destination = pcm(44100, 2, 32, float: true)
        var converter: AudioConverterRef?
        #expect(AudioConverterNew(&source, &destination, &converter) == noErr)
        var quality = kAudioConverterQuality_Max
        #expect(AudioConverterSetProperty(converter!, kAudioConverterSampleRateConverterQuality, 4, &quality) == noErr)
        let feeder = PieceFeeder(bytes: sine.withUnsafeBytes { Array($0) }, frameSize: 8, piece: 1000)
        feeder.endsStream = false
        var collected: [Float] = []
        var output = [Float](repeating: 0, count: 4096 * 2)
        var sawNoData = false
        while true {
            var packets: UInt32 = 4096
            let status = output.withUnsafeMutableBytes { raw -> OSStatus in
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(raw.count), mData: raw.baseAddress))
                return AudioConverterFillComplexBuffer(converter!, pieceFeederProc, Unmanaged.passUnretained(feeder).toOpaque(), &packets, &list, nil)
            }
            collected += output.prefix(Int(packets) * 2)
            if status == -1 {
                // Out of input for now: the converter kept its state; the stream ends next time.
                sawNoData = true
                feeder.endsStream = true
                continue
            }
            #expect(status == noErr)
            if packets == 0 { break }
        }
        #expect(sawNoData)
        #expect(collected.count / 2 == 44100)   // libsamplerate is delay-compensated and flushed at the end
        let left = stride(from: 0, to: collected.count, by: 2).map { collected[$0] }
        let ideal = (0 ..< 44100).map { 0.5 * sin(2 * Double.pi * 1000 * Double($0) / 44100) }
        let snr = SineAnalysis.snr(left[1000 ..< 43100], ideal: ideal[1000 ..< 43100])
        print("AudioConverter 48 → 44.1 kHz, quality Max: SNR \(snr) dB")
        #expect(snr >= 120)
    }

    @Test("Mono to stereo copies the channel, a channel map routes it; properties report the formats; unknown properties answer 'prop'")
    func channelsAndProperties() throws {
        var source = pcm(44100, 1, 16), destination = pcm(44100, 2, 16)
        var converter: AudioConverterRef?
        #expect(AudioConverterNew(&source, &destination, &converter) == noErr)
        let mono: [Int16] = [1, -2, 300, -32768]
        var out = [Int16](repeating: 0, count: 8)
        var size = UInt32(16)
        #expect(AudioConverterConvertBuffer(converter!, 8, mono, &size, &out) == noErr)
        #expect(out == [1, 1, -2, -2, 300, 300, -32768, -32768])
        // kAudioConverterChannelMap: output 0 from input 0, output 1 silent.
        var map: [Int32] = [0, -1]
        #expect(AudioConverterSetProperty(converter!, kAudioConverterChannelMap, 8, &map) == noErr)
        size = 16
        #expect(AudioConverterConvertBuffer(converter!, 8, mono, &size, &out) == noErr)
        #expect(out == [1, 0, -2, 0, 300, 0, -32768, 0])
        var badMap: [Int32] = [0, 1]   // the input has one channel
        #expect(AudioConverterSetProperty(converter!, kAudioConverterChannelMap, 8, &badMap) == kAudio_ParamError)
        var current = AudioStreamBasicDescription()
        var propertySize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        #expect(AudioConverterGetProperty(converter!, kAudioConverterCurrentOutputStreamDescription, &propertySize, &current) == noErr)
        #expect(current.mChannelsPerFrame == 2 && current.mBitsPerChannel == 16)
        var value: UInt32 = 0
        propertySize = 4
        #expect(AudioConverterGetProperty(converter!, kAudioConverterCompressionMagicCookie, &propertySize, &value) == kAudioConverterErr_PropertyNotSupported)
        #expect(AudioConverterGetProperty(converter!, 0x7A7A_7A7A, &propertySize, &value) == kAudioConverterErr_PropertyNotSupported)
        propertySize = 2
        #expect(AudioConverterGetProperty(converter!, kAudioConverterPropertyMaximumOutputPacketSize, &propertySize, &value) == kAudioConverterErr_BadPropertySizeError)
    }

    @Test("An AAC encoder reports its cookie, priming, packet size and bit rates; FormatInfo and ASBDFromESDS agree")
    func aacProperties() throws {
        var source = pcm(48000, 2, 16)
        var destination = AudioStreamBasicDescription()
        destination.mFormatID = kAudioFormatMPEG4AAC
        destination.mChannelsPerFrame = 2
        destination.mSampleRate = 48000
        var size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        #expect(AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &size, &destination) == noErr)
        #expect(destination.mFramesPerPacket == 1024 && destination.mBytesPerPacket == 0 && destination.mFormatFlags == UInt32(MPEG4ObjectID.AAC_LC.rawValue))
        var isVBR: UInt32 = 0
        var vbrSize = UInt32(4)
        #expect(AudioFormatGetProperty(kAudioFormatProperty_FormatIsVBR, UInt32(MemoryLayout<AudioStreamBasicDescription>.size), &destination, &vbrSize, &isVBR) == noErr)
        #expect(isVBR == 1)
        var converter: AudioConverterRef?
        #expect(AudioConverterNew(&source, &destination, &converter) == noErr)
        var bitRate: UInt32 = 160_000
        #expect(AudioConverterSetProperty(converter!, kAudioConverterEncodeBitRate, 4, &bitRate) == noErr)
        var maximum: UInt32 = 0
        var four = UInt32(4)
        #expect(AudioConverterGetProperty(converter!, kAudioConverterPropertyMaximumOutputPacketSize, &four, &maximum) == noErr)
        #expect(maximum == 1536)
        var prime = AudioConverterPrimeInfo()
        var primeSize = UInt32(8)
        #expect(AudioConverterGetProperty(converter!, kAudioConverterPrimeInfo, &primeSize, &prime) == noErr)
        #expect(prime.leadingFrames == 1024)
        var cookieSize: UInt32 = 0
        #expect(AudioConverterGetPropertyInfo(converter!, kAudioConverterCompressionMagicCookie, &cookieSize, nil) == noErr)
        var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
        #expect(AudioConverterGetProperty(converter!, kAudioConverterCompressionMagicCookie, &cookieSize, &cookie) == noErr)
        #expect(cookie.first == 0x03)   // an ES_Descriptor, as Core Audio's AAC cookies are
        var fromCookie = AudioStreamBasicDescription()
        size = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        #expect(AudioFormatGetProperty(kAudioFormatProperty_ASBDFromESDS, cookieSize, cookie, &size, &fromCookie) == noErr)
        #expect(fromCookie.mSampleRate == 48000 && fromCookie.mChannelsPerFrame == 2 && fromCookie.mFramesPerPacket == 1024)
        var ratesSize: UInt32 = 0
        #expect(AudioConverterGetPropertyInfo(converter!, kAudioConverterApplicableEncodeBitRates, &ratesSize, nil) == noErr)
        var rates = [AudioValueRange](repeating: AudioValueRange(), count: Int(ratesSize) / MemoryLayout<AudioValueRange>.size)
        #expect(AudioConverterGetProperty(converter!, kAudioConverterApplicableEncodeBitRates, &ratesSize, &rates) == noErr)
        #expect(rates.contains { $0.mMinimum == 128_000 } && rates.allSatisfy { $0.mMinimum >= 32000 })
        var tooLow: UInt32 = 10
        #expect(AudioConverterSetProperty(converter!, kAudioConverterEncodeBitRate, 4, &tooLow) == kAudio_ParamError)
        // More than one output packet needs descriptions.
        let feeder = PieceFeeder(bytes: [UInt8](repeating: 0, count: 48000 * 4), frameSize: 4, piece: 4800)
        var packets: UInt32 = 4
        var buffer = [UInt8](repeating: 0, count: 8192)
        let status = buffer.withUnsafeMutableBytes { raw -> OSStatus in
            var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(raw.count), mData: raw.baseAddress))
            return AudioConverterFillComplexBuffer(converter!, pieceFeederProc, Unmanaged.passUnretained(feeder).toOpaque(), &packets, &list, nil)
        }
        #expect(status == kAudioConverterErr_RequiresPacketDescriptionsError)
        var encoders: UInt32 = 0
        var id = kAudioFormatMPEG4AAC
        #expect(AudioFormatGetPropertyInfo(kAudioFormatProperty_Encoders, 4, &id, &encoders) == noErr)
        #expect(Int(encoders) == MemoryLayout<AudioClassDescription>.size)
        var name = "" as CFString
        var nameSize = UInt32(MemoryLayout<CFString>.size)
        #expect(AudioFormatGetProperty(kAudioFormatProperty_FormatName, UInt32(MemoryLayout<AudioStreamBasicDescription>.size), &destination, &nameSize, &name) == noErr)
        #expect(name as String == "AAC, 2 channels, 48000 Hz")
    }
}

/// Hands out Apple Lossless (or AAC) packets one by one with their description.
final class PacketFeeder {
    let packets: [[UInt8]]
    var next = 0
    var description = AudioStreamPacketDescription()
    var current: [UInt8] = []
    init(packets: [[UInt8]]) { self.packets = packets }
}

let packetFeederProc: AudioConverterComplexInputDataProc = { _, ioNumberDataPackets, ioData, outDescriptions, userData in
    let feeder = Unmanaged<PacketFeeder>.fromOpaque(userData!).takeUnretainedValue()
    guard feeder.next < feeder.packets.count else {
        ioNumberDataPackets.pointee = 0
        return noErr
    }
    feeder.current = feeder.packets[feeder.next]
    feeder.next += 1
    feeder.description = AudioStreamPacketDescription(mStartOffset: 0, mVariableFramesInPacket: 0, mDataByteSize: UInt32(feeder.current.count))
    feeder.current.withUnsafeMutableBytes { ioData.pointee.mBuffers.mData = $0.baseAddress }
    ioData.pointee.mBuffers.mDataByteSize = UInt32(feeder.current.count)
    withUnsafeMutablePointer(to: &feeder.description) { outDescriptions?.pointee = $0 }
    ioNumberDataPackets.pointee = 1
    return noErr
}

extension AudioConverterTests {
    @Test("Apple Lossless through AudioConverter: 24-bit PCM → ALAC packets (cookie, descriptions) → 24-bit PCM, bit-exact")
    func appleLosslessRoundTrip() throws {
        let frames = 10000   // two full packets and a short one
        var samples = [UInt8]()
        for index in 0 ..< frames * 2 {
            let value = Int32(truncatingIfNeeded: (index &* 2_654_435_761) >> 8) >> 8   // 24-bit pseudo-random
            samples += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16)]
        }
        var source = pcm(44100, 2, 24)
        var alac = AudioStreamBasicDescription()
        alac.mFormatID = kAudioFormatAppleLossless
        alac.mSampleRate = 44100
        alac.mChannelsPerFrame = 2
        alac.mFormatFlags = 3   // kAppleLosslessFormatFlag_24BitSourceData
        var encoder: AudioConverterRef?
        #expect(AudioConverterNew(&source, &alac, &encoder) == noErr)
        var cookieSize: UInt32 = 0
        #expect(AudioConverterGetPropertyInfo(encoder!, kAudioConverterCompressionMagicCookie, &cookieSize, nil) == noErr)
        var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
        #expect(AudioConverterGetProperty(encoder!, kAudioConverterCompressionMagicCookie, &cookieSize, &cookie) == noErr)
        #expect(cookie.count == 24 && cookie[5] == 24)   // ALACSpecificConfig: bit depth 24
        let feeder = PieceFeeder(bytes: samples, frameSize: 6, piece: 3000)
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var descriptions = [AudioStreamPacketDescription](repeating: AudioStreamPacketDescription(), count: 4)
        while true {
            var count: UInt32 = 4
            let status = buffer.withUnsafeMutableBytes { raw -> OSStatus in
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(raw.count), mData: raw.baseAddress))
                return AudioConverterFillComplexBuffer(encoder!, pieceFeederProc, Unmanaged.passUnretained(feeder).toOpaque(), &count, &list, &descriptions)
            }
            #expect(status == noErr)
            for description in descriptions.prefix(Int(count)) {
                packets.append(Array(buffer[Int(description.mStartOffset) ..< Int(description.mStartOffset) + Int(description.mDataByteSize)]))
            }
            if count == 0 { break }
        }
        #expect(packets.count == 3)
        var decoderConverter: AudioConverterRef?
        var output = pcm(44100, 2, 24)
        #expect(AudioConverterNew(&alac, &output, &decoderConverter) == noErr)
        #expect(AudioConverterSetProperty(decoderConverter!, kAudioConverterDecompressionMagicCookie, cookieSize, cookie) == noErr)
        let packetFeeder = PacketFeeder(packets: packets)
        var decoded: [UInt8] = []
        var pcmOut = [UInt8](repeating: 0, count: 4096 * 6)
        while true {
            var count: UInt32 = 4096
            let status = pcmOut.withUnsafeMutableBytes { raw -> OSStatus in
                var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: UInt32(raw.count), mData: raw.baseAddress))
                return AudioConverterFillComplexBuffer(decoderConverter!, packetFeederProc, Unmanaged.passUnretained(packetFeeder).toOpaque(), &count, &list, nil)
            }
            #expect(status == noErr)
            decoded += pcmOut.prefix(Int(count) * 6)
            if count == 0 { break }
        }
        #expect(decoded.count == samples.count)
        #expect(decoded == samples)
        var id = kAudioFormatAppleLossless
        var size: UInt32 = 0
        #expect(AudioFormatGetPropertyInfo(kAudioFormatProperty_Decoders, 4, &id, &size) == noErr)
        #expect(Int(size) == MemoryLayout<AudioClassDescription>.size)
    }
}
