import AQTestSupport
import AudioToolbox
import Foundation
import Testing

// Seed 002 (../shared/seeds/002_a45ddd87a5687d7b.txt) transcribed to Swift against AudioToolbox:
// SQAudioConfig, SQAudioEncoder (AudioConverterNewSpecific from an output ASBD completed by
// kAudioFormatProperty_FormatInfo, quality High, bit rate, FillComplexBuffer with an input proc
// that gives its buffer once and then answers -1 with 0 packets), the ADTS header for raw AAC
// written to a file, and SQAudioDecode (AAC packets back to 16-bit interleaved PCM).

struct SQAudioConfig {
    var bitrate = 96000
    var channelCount = 1
    var sampleRate = 44100
    var sampleSize = 16
}

final class SQAudioEncoder {
    let config: SQAudioConfig
    var audioConverter: AudioConverterRef?
    var pcmBuffer: UnsafeMutableRawPointer?
    var pcmBufferSize = 0
    /// The delegate's audioEncodeCallBack.
    var audioEncodeCallBack: ([UInt8]) -> Void = { _ in }
    var failures = 0

    init(config: SQAudioConfig) { self.config = config }

    deinit { if let audioConverter { _ = AudioConverterDispose(audioConverter) } }

    func setupEncoder(inputAudioDes: AudioStreamBasicDescription) {
        var inputAudioDes = inputAudioDes
        var outputAudioDes = AudioStreamBasicDescription()
        outputAudioDes.mSampleRate = Float64(config.sampleRate)
        outputAudioDes.mFormatID = kAudioFormatMPEG4AAC
        outputAudioDes.mFormatFlags = UInt32(MPEG4ObjectID.AAC_LC.rawValue)
        outputAudioDes.mBytesPerPacket = 0
        outputAudioDes.mFramesPerPacket = 1024
        outputAudioDes.mBytesPerFrame = 0
        outputAudioDes.mChannelsPerFrame = UInt32(config.channelCount)
        outputAudioDes.mBitsPerChannel = 0
        outputAudioDes.mReserved = 0
        var outDesSize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        _ = AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &outDesSize, &outputAudioDes)
        var audioClassDesc = getAudioClassDescription(type: outputAudioDes.mFormatID, manufacturer: kAppleSoftwareAudioCodecManufacturer)
        let status = AudioConverterNewSpecific(&inputAudioDes, &outputAudioDes, 1, &audioClassDesc, &audioConverter)
        guard status == noErr, let audioConverter else {
            print("Error: AAC encoder creation failed, status= \(status)")
            return
        }
        var temp = kAudioConverterQuality_High
        _ = AudioConverterSetProperty(audioConverter, kAudioConverterCodecQuality, UInt32(MemoryLayout<UInt32>.size), &temp)
        var audioBitrate = UInt32(config.bitrate)
        if AudioConverterSetProperty(audioConverter, kAudioConverterEncodeBitRate, UInt32(MemoryLayout<UInt32>.size), &audioBitrate) != noErr {
            print("Error: setting the AAC bit rate failed")
        }
    }

    func getAudioClassDescription(type: AudioFormatID, manufacturer: UInt32) -> AudioClassDescription {
        var encoderSpecific = type
        var size: UInt32 = 0
        guard AudioFormatGetPropertyInfo(kAudioFormatProperty_Encoders, UInt32(MemoryLayout<UInt32>.size), &encoderSpecific, &size) == noErr else {
            return AudioClassDescription()
        }
        let count = Int(size) / MemoryLayout<AudioClassDescription>.size
        var descriptions = [AudioClassDescription](repeating: AudioClassDescription(), count: count)
        _ = AudioFormatGetProperty(kAudioFormatProperty_Encoders, UInt32(MemoryLayout<UInt32>.size), &encoderSpecific, &size, &descriptions)
        return descriptions.first { $0.mSubType == type && $0.mManufacturer == manufacturer } ?? AudioClassDescription()
    }

    /// encodeAudioSamepleBuffer: one CMSampleBuffer's worth of interleaved 16-bit PCM.
    func encode(_ samples: [Int16], inputAudioDes: AudioStreamBasicDescription) {
        if audioConverter == nil { setupEncoder(inputAudioDes: inputAudioDes) }
        guard let audioConverter else { return }
        var samples = samples
        samples.withUnsafeMutableBytes { bytes in
            pcmBuffer = bytes.baseAddress
            pcmBufferSize = bytes.count
            let outputBuffer = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 16)
            defer { outputBuffer.deallocate() }
            var outAudioBufferList = AudioBufferList(mNumberBuffers: 1,
                                                     mBuffers: AudioBuffer(mNumberChannels: UInt32(config.channelCount),
                                                                           mDataByteSize: UInt32(bytes.count), mData: outputBuffer))
            var outputDataPacketSize: UInt32 = 1
            let status = AudioConverterFillComplexBuffer(audioConverter, aacEncodeInputDataProc, Unmanaged.passUnretained(self).toOpaque(),
                                                         &outputDataPacketSize, &outAudioBufferList, nil)
            if status == noErr {
                let rawAAC = Array(UnsafeRawBufferPointer(start: outAudioBufferList.mBuffers.mData, count: Int(outAudioBufferList.mBuffers.mDataByteSize)))
                audioEncodeCallBack(rawAAC)
            } else {
                failures += 1
            }
        }
    }
}

extension SQAudioEncoder {
    /// Not in the seed, which never ends its stream: the frames still inside the encoder come
    /// out when the input proc reports the end (0 packets with noErr), per Apple's contract.
    func finish() {
        guard let audioConverter else { return }
        let endOfStream: AudioConverterComplexInputDataProc = { _, ioNumberDataPackets, _, _, _ in
            ioNumberDataPackets.pointee = 0
            return noErr
        }
        let capacity = 768 * config.channelCount * 4
        let outputBuffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { outputBuffer.deallocate() }
        var descriptions = [AudioStreamPacketDescription](repeating: AudioStreamPacketDescription(), count: 4)
        while true {
            var outAudioBufferList = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: UInt32(config.channelCount),
                                                                                           mDataByteSize: UInt32(capacity), mData: outputBuffer))
            var packets: UInt32 = 4
            guard AudioConverterFillComplexBuffer(audioConverter, endOfStream, nil, &packets, &outAudioBufferList, &descriptions) == noErr,
                  packets > 0 else { return }
            for description in descriptions.prefix(Int(packets)) {
                audioEncodeCallBack(Array(UnsafeRawBufferPointer(start: outputBuffer + Int(description.mStartOffset), count: Int(description.mDataByteSize))))
            }
        }
    }
}

let aacEncodeInputDataProc: AudioConverterComplexInputDataProc = { _, ioNumberDataPackets, ioData, _, inUserData in
    let aacEncoder = Unmanaged<SQAudioEncoder>.fromOpaque(inUserData!).takeUnretainedValue()
    if aacEncoder.pcmBufferSize == 0 {
        ioNumberDataPackets.pointee = 0
        return -1
    }
    ioData.pointee.mBuffers.mData = aacEncoder.pcmBuffer
    ioData.pointee.mBuffers.mDataByteSize = UInt32(aacEncoder.pcmBufferSize)
    ioData.pointee.mBuffers.mNumberChannels = UInt32(aacEncoder.config.channelCount)
    aacEncoder.pcmBufferSize = 0
    ioNumberDataPackets.pointee = 1
    return noErr
}

/// The ADTS header the seed says a raw AAC file needs (profile LC, MPEG-2 ID as the common
/// iOS listing writes it, no CRC).
func adtsDataForPacketLength(_ packetLength: Int, config: SQAudioConfig) -> [UInt8] {
    let adtsLength = 7
    let profile = 2   // AAC LC
    let freqIdx = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350].firstIndex(of: config.sampleRate)!
    let chanCfg = config.channelCount
    let fullLength = adtsLength + packetLength
    return [0xFF, 0xF9, UInt8(((profile - 1) << 6) + (freqIdx << 2) + (chanCfg >> 2)), UInt8(((chanCfg & 3) << 6) + (fullLength >> 11)),
            UInt8((fullLength & 0x7FF) >> 3), UInt8(((fullLength & 7) << 5) + 0x1F), 0xFC]
}

struct SQAudioUserData {
    var data: UnsafeMutableRawPointer?
    var size: UInt32 = 0
    var channelCount: UInt32 = 0
    var packetDesc = AudioStreamPacketDescription()
}

final class SQAudioDecode {
    let config: SQAudioConfig
    var audioConverter: AudioConverterRef?
    var audioDecodeCallback: ([Int16]) -> Void = { _ in }
    var failures = 0

    init(config: SQAudioConfig) {
        self.config = config
        setupEncoder()
    }

    deinit { if let audioConverter { _ = AudioConverterDispose(audioConverter) } }

    func setupEncoder() {
        var outputAudioDes = AudioStreamBasicDescription()
        outputAudioDes.mSampleRate = Float64(config.sampleRate)
        outputAudioDes.mChannelsPerFrame = UInt32(config.channelCount)
        outputAudioDes.mFormatID = kAudioFormatLinearPCM
        outputAudioDes.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked
        outputAudioDes.mFramesPerPacket = 1
        outputAudioDes.mBitsPerChannel = 16
        outputAudioDes.mBytesPerFrame = outputAudioDes.mBitsPerChannel / 8 * outputAudioDes.mChannelsPerFrame
        outputAudioDes.mBytesPerPacket = outputAudioDes.mBytesPerFrame * outputAudioDes.mFramesPerPacket
        outputAudioDes.mReserved = 0
        var inputAudioDes = AudioStreamBasicDescription()
        inputAudioDes.mSampleRate = Float64(config.sampleRate)
        inputAudioDes.mFormatID = kAudioFormatMPEG4AAC
        inputAudioDes.mFormatFlags = UInt32(MPEG4ObjectID.AAC_LC.rawValue)
        inputAudioDes.mFramesPerPacket = 1024
        inputAudioDes.mChannelsPerFrame = UInt32(config.channelCount)
        var inDesSize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        _ = AudioFormatGetProperty(kAudioFormatProperty_FormatInfo, 0, nil, &inDesSize, &inputAudioDes)
        // The seed looks the decoder up by the *output* format ID (linear PCM) and finds none.
        let status = AudioConverterNewSpecific(&inputAudioDes, &outputAudioDes, 1, nil, &audioConverter)
        if status != noErr { print("Error: AAC decoder creation failed, status= \(status)") }
    }

    /// decodeAudioAACData: one raw AAC packet.
    func decodeAudioAACData(_ aacData: [UInt8]) {
        guard let audioConverter else { return }
        var aacData = aacData
        aacData.withUnsafeMutableBytes { bytes in
            var userData = SQAudioUserData()
            userData.channelCount = UInt32(config.channelCount)
            userData.data = bytes.baseAddress
            userData.size = UInt32(bytes.count)
            userData.packetDesc.mDataByteSize = UInt32(bytes.count)
            userData.packetDesc.mStartOffset = 0
            userData.packetDesc.mVariableFramesInPacket = 0
            let pcmBufferSize = UInt32(2048 * config.channelCount)
            var pcmDataPacketSize: UInt32 = 1024
            let pcmBuffer = UnsafeMutableRawPointer.allocate(byteCount: Int(pcmBufferSize), alignment: 16)
            defer { pcmBuffer.deallocate() }
            memset(pcmBuffer, 0, Int(pcmBufferSize))
            var outAudioBufferList = AudioBufferList(mNumberBuffers: 1,
                                                     mBuffers: AudioBuffer(mNumberChannels: UInt32(config.channelCount),
                                                                           mDataByteSize: pcmBufferSize, mData: pcmBuffer))
            var outputPacketDesc = AudioStreamPacketDescription()
            let status = withUnsafeMutablePointer(to: &userData) { user in
                AudioConverterFillComplexBuffer(audioConverter, audioDecoderConverterComplexInputDataProc, user, &pcmDataPacketSize,
                                                &outAudioBufferList, &outputPacketDesc)
            }
            guard status == noErr else {
                failures += 1
                return
            }
            if outAudioBufferList.mBuffers.mDataByteSize > 0 {
                let samples = Int(outAudioBufferList.mBuffers.mDataByteSize) / 2
                audioDecodeCallback(Array(UnsafeBufferPointer(start: pcmBuffer.assumingMemoryBound(to: Int16.self), count: samples)))
            }
        }
    }
}

let audioDecoderConverterComplexInputDataProc: AudioConverterComplexInputDataProc = { _, ioNumberDataPackets, ioData, outDataPacketDescription, inUserData in
    let audioDecoder = inUserData!.assumingMemoryBound(to: SQAudioUserData.self)
    if audioDecoder.pointee.size <= 0 {
        ioNumberDataPackets.pointee = 0
        return -1
    }
    withUnsafeMutablePointer(to: &audioDecoder.pointee.packetDesc) { outDataPacketDescription!.pointee = $0 }
    outDataPacketDescription!.pointee![0].mStartOffset = 0
    outDataPacketDescription!.pointee![0].mDataByteSize = audioDecoder.pointee.size
    outDataPacketDescription!.pointee![0].mVariableFramesInPacket = 0
    ioData.pointee.mBuffers.mData = audioDecoder.pointee.data
    ioData.pointee.mBuffers.mDataByteSize = audioDecoder.pointee.size
    ioData.pointee.mBuffers.mNumberChannels = audioDecoder.pointee.channelCount
    return noErr
}

@Suite("Seed 002: AAC encoder and decoder through AudioConverter")
struct Seed002AACTests {
    struct RoundTrip {
        var input: [Int16]
        var decoded: [Int16]
        var adtsPath: String
        var priming: Int
        var packets: Int
        var encodeFailures: Int
    }

    /// Encodes `seconds` of the multi-sine with the seed's encoder in 1024-frame sample buffers,
    /// writes ADTS, reads the packets back with AudioFileReadPacketData and decodes them with
    /// the seed's decoder.
    static func roundTrip(config: SQAudioConfig, seconds: Double, name: String) throws -> RoundTrip {
        let frames = Int(Double(config.sampleRate) * seconds)
        let floats = MultiSine.interleaved(frameCount: frames, channelCount: config.channelCount, sampleRate: Double(config.sampleRate))
        let input = floats.map { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
        var inputFormat = AudioStreamBasicDescription()
        inputFormat.mSampleRate = Float64(config.sampleRate)
        inputFormat.mFormatID = kAudioFormatLinearPCM
        inputFormat.mFormatFlags = kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked
        inputFormat.mChannelsPerFrame = UInt32(config.channelCount)
        inputFormat.mBitsPerChannel = 16
        inputFormat.mFramesPerPacket = 1
        inputFormat.mBytesPerFrame = UInt32(2 * config.channelCount)
        inputFormat.mBytesPerPacket = inputFormat.mBytesPerFrame

        let encoder = SQAudioEncoder(config: config)
        var adts: [UInt8] = []
        encoder.audioEncodeCallBack = { rawAAC in adts += adtsDataForPacketLength(rawAAC.count, config: config) + rawAAC }
        var start = 0
        while start < frames {
            let count = min(1024, frames - start)
            encoder.encode(Array(input[start * config.channelCount ..< (start + count) * config.channelCount]), inputAudioDes: inputFormat)
            start += count
        }
        encoder.finish()
        var prime = AudioConverterPrimeInfo()
        var size = UInt32(MemoryLayout<AudioConverterPrimeInfo>.size)
        #expect(AudioConverterGetProperty(encoder.audioConverter!, kAudioConverterPrimeInfo, &size, &prime) == noErr)
        let path = ExternalTool.temporaryPath(name, extension: "aac")
        _ = FileManager.default.createFile(atPath: path, contents: Data(adts))

        let decoder = SQAudioDecode(config: config)
        var decoded: [Int16] = []
        decoder.audioDecodeCallback = { decoded += $0 }
        let url = CFURLCreateFromFileSystemRepresentation(nil, Array(path.utf8), path.utf8.count, false)!
        var file: AudioFileID?
        #expect(AudioFileOpenURL(url, .readPermission, kAudioFileAAC_ADTSType, &file) == noErr)
        var upperBound: UInt32 = 0
        size = 4
        #expect(AudioFileGetProperty(file!, kAudioFilePropertyPacketSizeUpperBound, &size, &upperBound) == noErr)
        var packetCount: UInt64 = 0
        size = 8
        #expect(AudioFileGetProperty(file!, kAudioFilePropertyAudioDataPacketCount, &size, &packetCount) == noErr)
        var buffer = [UInt8](repeating: 0, count: Int(upperBound))
        var description = AudioStreamPacketDescription()
        for packet in 0 ..< Int64(packetCount) {
            var bytes = upperBound
            var packets: UInt32 = 1
            #expect(AudioFileReadPacketData(file!, false, &bytes, &description, packet, &packets, &buffer) == noErr)
            decoder.decodeAudioAACData(Array(buffer[0 ..< Int(bytes)]))
        }
        _ = AudioFileClose(file!)
        #expect(decoder.failures == 0)
        return RoundTrip(input: input, decoded: decoded, adtsPath: path, priming: Int(prime.leadingFrames), packets: Int(packetCount),
                         encodeFailures: encoder.failures)
    }

    @Test("Seed defaults (44.1 kHz mono 16-bit, 96 kbit/s, quality High): ADTS file ffprobe reads as AAC LC, duration within one packet")
    func seedDefaults() throws {
        let config = SQAudioConfig()
        let result = try Self.roundTrip(config: config, seconds: 2, name: "seed002-mono")
        defer { try? FileManager.default.removeItem(atPath: result.adtsPath) }
        // Two sample buffers yield no packet and return the input proc's -1 ("no data for now"):
        // the first (encoder delay) and the last, partial one (136 frames wait for more input).
        #expect(result.encodeFailures == 2)
        #expect(result.priming == 1024)
        let probe = try ExternalTool.probe(result.adtsPath)
        #expect(probe["codec_name"] == "aac")
        #expect(probe["profile"] == "LC")
        #expect(probe["sample_rate"] == "44100")
        #expect(probe["channels"] == "1")
        let ffprobePackets = Int(probe["nb_read_packets"] ?? "") ?? -1
        #expect(ffprobePackets == result.packets)
        // Packets hold priming + input + remainder frames: less the priming, within one packet of the input.
        let seconds = Double(ffprobePackets * 1024 - result.priming) / 44100
        print("seed 002 defaults: \(ffprobePackets) packets, \(seconds) s after priming, for 2 s of input")
        #expect(seconds >= 2 && seconds - 2 < 1024.0 / 44100)
        let reference = result.input.map { Float($0) / 32768 }
        let decoded = result.decoded.map { Float($0) / 32768 }
        #expect(decoded.count == ffprobePackets * 1024)
        let snr = MultiSine.snr(decoded, reference: reference, channelCount: 1, lag: result.priming)
        print("seed 002 defaults: mono 96 kbit/s SNR \(snr) dB at lag \(result.priming)")
        #expect(snr >= 15)
    }

    @Test("128 kbit/s stereo: decoded signal aligned by the encoder's PrimeInfo has SNR ≥ 20 dB; ffmpeg -c:a aac measured alike")
    func stereo128() throws {
        var config = SQAudioConfig()
        config.bitrate = 128_000
        config.channelCount = 2
        let result = try Self.roundTrip(config: config, seconds: 3, name: "seed002-stereo")
        defer { try? FileManager.default.removeItem(atPath: result.adtsPath) }
        let reference = result.input.map { Float($0) / 32768 }
        let decoded = result.decoded.map { Float($0) / 32768 }
        let snr = MultiSine.snr(decoded, reference: reference, channelCount: 2, lag: result.priming)
        // The same input through the ffmpeg command line at the same bit rate, decoded by ffmpeg.
        let wav = ExternalTool.temporaryPath("seed002-input", extension: "raw")
        let ffmpegAAC = ExternalTool.temporaryPath("seed002-ffmpeg", extension: "aac")
        defer {
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: ffmpegAAC)
        }
        _ = FileManager.default.createFile(atPath: wav, contents: result.input.withUnsafeBytes { Data($0) })
        let encoded = try ExternalTool.run("ffmpeg", ["-v", "error", "-y", "-f", "s16le", "-ar", "44100", "-ac", "2", "-i", wav,
                                                      "-c:a", "aac", "-b:a", "128k", ffmpegAAC])
        #expect(encoded.status == 0)
        let ffmpegDecoded = try ExternalTool.decodeWithFFmpeg(ffmpegAAC)
        let ffmpegSNR = MultiSine.snr(ffmpegDecoded, reference: reference, channelCount: 2, lag: 1024)
        print("seed 002 at 128 kbit/s stereo: aqjack SNR \(snr) dB, ffmpeg -c:a aac SNR \(ffmpegSNR) dB")
        #expect(snr >= 20)
        #expect(abs(snr - ffmpegSNR) < 1)
    }
}
