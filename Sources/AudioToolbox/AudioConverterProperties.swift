import AQCodecs
import AQCore
import AQMedia

// AudioConverterGetPropertyInfo / GetProperty / SetProperty.

/// The value of a converter property as bytes, or the error Apple answers for it.
private func converterProperty(_ box: ConverterBox, _ id: AudioConverterPropertyID) -> Result<[UInt8], AudioFileError> {
    let converter = box.converter
    func bytes<T>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
    func array<T>(_ values: [T]) -> [UInt8] { values.withUnsafeBytes { Array($0) } }
    switch id {
    case kAudioConverterCurrentInputStreamDescription: return .success(bytes(converter.source))
    case kAudioConverterCurrentOutputStreamDescription: return .success(bytes(converter.destination))
    case kAudioConverterEncodeBitRate: return .success(bytes(UInt32(converter.bitRate)))
    case kAudioConverterCodecQuality: return .success(bytes(UInt32(converter.codecQuality)))
    case kAudioConverterSampleRateConverterQuality: return .success(bytes(converter.sampleRateConverterQuality))
    case kAudioConverterSampleRateConverterComplexity: return .success(bytes(box.sampleRateConverterComplexity))
    case kAudioConverterPrimeMethod: return .success(bytes(box.primeMethod))
    case kAudioConverterPrimeInfo:
        let prime = converter.primeInfo
        return .success(bytes(AudioConverterPrimeInfo(leadingFrames: UInt32(prime.leading), trailingFrames: UInt32(prime.trailing))))
    case kAudioConverterPropertyMaximumOutputPacketSize: return .success(bytes(UInt32(converter.maximumOutputPacketSize)))
    case kAudioConverterChannelMap:
        let inputs = Int(converter.source.mChannelsPerFrame)
        let map: [Int] = converter.channelMap ?? (0 ..< Int(converter.destination.mChannelsPerFrame)).map { channel -> Int in
            inputs == 1 ? 0 : channel < inputs ? channel : -1
        }
        return .success(array(map.map { Int32(truncatingIfNeeded: $0) }))
    case kAudioConverterPropertyMaximumInputPacketSize:
        return .success(bytes(UInt32(converter.isDecoding ? CompressedFormatValues.aacMaximumPacketBytes(channels: Int(converter.source.mChannelsPerFrame)) : Int(converter.source.mBytesPerFrame))))
    case kAudioConverterPropertyMinimumInputBufferSize:
        return .success(bytes(UInt32(converter.isDecoding ? CompressedFormatValues.aacMaximumPacketBytes(channels: Int(converter.source.mChannelsPerFrame)) : Int(converter.source.mBytesPerFrame))))
    case kAudioConverterPropertyMinimumOutputBufferSize:
        return .success(bytes(UInt32(converter.isEncoding ? converter.maximumOutputPacketSize : Int(converter.destination.mBytesPerFrame))))
    case kAudioConverterCompressionMagicCookie:
        guard let cookie = box.compressionCookie else { return .failure(AudioFileError(kAudioConverterErr_PropertyNotSupported, "only an encoding converter has a compression cookie")) }
        return .success(cookie)
    case kAudioConverterDecompressionMagicCookie:
        guard converter.isDecoding else { return .failure(AudioFileError(kAudioConverterErr_PropertyNotSupported, "only a decoding converter has a decompression cookie")) }
        return .success(box.decompressionCookie)
    case kAudioConverterApplicableEncodeBitRates:
        guard converter.isEncoding, converter.destination.mFormatID == kAudioFormatMPEG4AAC else { return .failure(AudioFileError(kAudioConverterErr_PropertyNotSupported, "not an encoder")) }
        return .success(array(aacBitRates(channelCount: Int(converter.destination.mChannelsPerFrame))
                .map { AudioValueRange(mMinimum: Double($0), mMaximum: Double($0)) }))
    case kAudioConverterApplicableEncodeSampleRates:
        guard converter.isEncoding else { return .failure(AudioFileError(kAudioConverterErr_PropertyNotSupported, "not an encoder")) }
        return .success(array(AudioSpecificConfig.sampleRates.filter { $0 >= 8000 }.reversed()
                .map { AudioValueRange(mMinimum: Double($0), mMaximum: Double($0)) }))
    default:
        return .failure(AudioFileError(kAudioConverterErr_PropertyNotSupported, "property \(fourCharacterCode(id)) is not supported"))
    }
}

/// The bit rates offered for AAC-LC: 32 ... 512 kbit/s total (the encoder's limit, so 64 kbit/s
/// per channel up to 8 channels), at least 16 kbit/s per channel.
func aacBitRates(channelCount: Int) -> [Int] {
    [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512].map { $0 * 1000 }.filter { $0 >= 16000 * channelCount }
}

@discardableResult
public func AudioConverterGetPropertyInfo(_ inAudioConverter: AudioConverterRef, _ inPropertyID: AudioConverterPropertyID,
                                          _ outSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    guard let box = ConverterBox.table.find(inAudioConverter) else { return kAudio_ParamError }
    switch converterProperty(box, inPropertyID) {
    case .success(let value):
        outSize?.pointee = UInt32(value.count)
        let writable: Set<AudioConverterPropertyID> = [kAudioConverterEncodeBitRate, kAudioConverterChannelMap, kAudioConverterCodecQuality, kAudioConverterSampleRateConverterQuality,
                                                       kAudioConverterSampleRateConverterComplexity, kAudioConverterPrimeMethod,
                                                       kAudioConverterDecompressionMagicCookie]
        outWritable?.pointee = DarwinBoolean(writable.contains(inPropertyID))
        return noErr
    case .failure(let error): return error.status
    }
}

/// Copies the property's value; `ioPropertyDataSize` in: the room, out: the bytes written.
/// Variable-size values (cookie, bit-rate lists) are cut to the room given.
@discardableResult
public func AudioConverterGetProperty(_ inAudioConverter: AudioConverterRef, _ inPropertyID: AudioConverterPropertyID,
                                      _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    guard let box = ConverterBox.table.find(inAudioConverter) else { return kAudio_ParamError }
    switch converterProperty(box, inPropertyID) {
    case .success(let value):
        let fixedSize = ![kAudioConverterCompressionMagicCookie, kAudioConverterDecompressionMagicCookie, kAudioConverterApplicableEncodeBitRates,
                          kAudioConverterApplicableEncodeSampleRates, kAudioConverterChannelMap].contains(inPropertyID)
        return storePropertyBytes(value, into: outPropertyData, size: ioPropertyDataSize, mustFit: fixedSize,
                                  tooSmall: kAudioConverterErr_BadPropertySizeError)
    case .failure(let error): return error.status
    }
}

/// Sets bit rate, codec quality, sample-rate converter quality/complexity, prime method, the
/// channel map (one SInt32 per output channel: the input channel, or -1 for silence), or the
/// decoder's magic cookie (an ES_Descriptor, an `esds` payload or a bare AudioSpecificConfig).
/// Bit rate and quality apply until the first conversion (as Apple's do); a bit rate AAC-LC
/// cannot use answers `kAudio_ParamError`.
@discardableResult
public func AudioConverterSetProperty(_ inAudioConverter: AudioConverterRef, _ inPropertyID: AudioConverterPropertyID,
                                      _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    guard let box = ConverterBox.table.find(inAudioConverter) else { return kAudio_ParamError }
    let converter = box.converter
    if inPropertyID == kAudioConverterDecompressionMagicCookie {
        guard converter.isDecoding else { return kAudioConverterErr_PropertyNotSupported }
        let cookie = Array(UnsafeRawBufferPointer(start: inPropertyData, count: Int(inPropertyDataSize)))
        return status { () throws(AudioConverterError) in
            try converter.setDecoderCookie(cookie)
            box.decompressionCookie = cookie
        }
    }
    if inPropertyID == kAudioConverterChannelMap {
        let count = Int(inPropertyDataSize) / 4
        let map = (0 ..< count).map { Int(inPropertyData.loadUnaligned(fromByteOffset: 4 * $0, as: Int32.self)) }
        return status { () throws(AudioConverterError) in try converter.setChannelMap(map) }
    }
    guard inPropertyDataSize >= 4 else { return kAudioConverterErr_BadPropertySizeError }
    let value = inPropertyData.loadUnaligned(as: UInt32.self)
    switch inPropertyID {
    case kAudioConverterEncodeBitRate:
        guard converter.isEncoding, converter.destination.mFormatID == kAudioFormatMPEG4AAC else { return kAudioConverterErr_PropertyNotSupported }
        guard (8000 ... 512_000).contains(Int(value)) else { return kAudio_ParamError }
        converter.bitRate = Int(value)
    case kAudioConverterCodecQuality: converter.codecQuality = Int(min(value, 0x7F))
    case kAudioConverterSampleRateConverterQuality:
        converter.sampleRateConverterQuality = box.sampleRateConverterComplexity == kAudioConverterSampleRateConverterComplexity_Linear ? 0 : min(value, 0x7F)
    case kAudioConverterSampleRateConverterComplexity:
        box.sampleRateConverterComplexity = value
        if value == kAudioConverterSampleRateConverterComplexity_Linear { converter.sampleRateConverterQuality = 0 }
    case kAudioConverterPrimeMethod: box.primeMethod = value
    default: return kAudioConverterErr_PropertyNotSupported
    }
    return noErr
}
