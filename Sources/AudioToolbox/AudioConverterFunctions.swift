import AQCodecs
import AQMedia

// Audio Converter Services, Apple spelling, over ``FormatConverter``.

/// What an `AudioConverterRef` stands for.
final class ConverterBox {
    let converter: FormatConverter
    /// Set with kAudioConverterSampleRateConverterComplexity; 'line' forces linear interpolation.
    var sampleRateConverterComplexity = kAudioConverterSampleRateConverterComplexity_Normal
    var primeMethod = kConverterPrimeMethod_Normal
    var decompressionCookie: [UInt8] = []
    init(_ converter: FormatConverter) { self.converter = converter }

    static let table = HandleTable<ConverterBox>(.converters)

    /// The magic cookie of the encoder's output: the ES_Descriptor Core Audio uses for AAC, the
    /// ALACSpecificConfig for Apple Lossless.
    var compressionCookie: [UInt8]? { converter.compressionCookie }
}

/// Creates a converter between linear-PCM formats (any depth, endianness, int/float; rate and
/// channel conversion), from linear PCM to AAC-LC or Apple Lossless, or back.
///
/// - Returns: `kAudioConverterErr_FormatNotSupported` ('fmt?') for other pairs; -50 for NULL arguments.
@discardableResult
public func AudioConverterNew(_ inSourceFormat: UnsafePointer<AudioStreamBasicDescription>,
                              _ inDestinationFormat: UnsafePointer<AudioStreamBasicDescription>,
                              _ outAudioConverter: UnsafeMutablePointer<AudioConverterRef?>) -> OSStatus {
    status { () throws(AudioConverterError) in
        let converter = try FormatConverter(from: inSourceFormat.pointee, to: inDestinationFormat.pointee)
        outAudioConverter.pointee = ConverterBox.table.register(ConverterBox(converter))
    }
}

/// As ``AudioConverterNew``, choosing among the codecs `kAudioFormatProperty_Encoders/Decoders`
/// list. aqjack has one codec per format, so the descriptions are checked (at least one must
/// name the compressed side's format, or linear PCM) and then that codec is used. A NULL list is
/// taken as "no preference": seed 002's decoder passes the result of a lookup that finds nothing.
@discardableResult
public func AudioConverterNewSpecific(_ inSourceFormat: UnsafePointer<AudioStreamBasicDescription>,
                                      _ inDestinationFormat: UnsafePointer<AudioStreamBasicDescription>,
                                      _ inNumberClassDescriptions: UInt32,
                                      _ inClassDescriptions: UnsafePointer<AudioClassDescription>?,
                                      _ outAudioConverter: UnsafeMutablePointer<AudioConverterRef?>) -> OSStatus {
    if let inClassDescriptions, inNumberClassDescriptions > 0 {
        let formats = [inSourceFormat.pointee.mFormatID, inDestinationFormat.pointee.mFormatID]
        let descriptions = UnsafeBufferPointer(start: inClassDescriptions, count: Int(inNumberClassDescriptions))
        guard descriptions.contains(where: { formats.contains($0.mSubType) }) else { return kAudioConverterErr_FormatNotSupported }
    }
    return AudioConverterNew(inSourceFormat, inDestinationFormat, outAudioConverter)
}

@discardableResult
public func AudioConverterDispose(_ inAudioConverter: AudioConverterRef) -> OSStatus {
    ConverterBox.table.remove(inAudioConverter) == nil ? kAudio_ParamError : noErr
}

/// Forgets buffered data and codec history; call it after a discontinuity in the input.
@discardableResult
public func AudioConverterReset(_ inAudioConverter: AudioConverterRef) -> OSStatus {
    guard let box = ConverterBox.table.find(inAudioConverter) else { return kAudio_ParamError }
    box.converter.reset()
    return noErr
}

/// Converts one buffer of linear PCM to another at the same sample rate (Apple: "cannot be used
/// for sample rate conversion or codecs": answers `kAudioConverterErr_OperationNotSupported`).
///
/// - Returns: `kAudioConverterErr_InvalidInputSize` when `inInputDataSize` is not whole frames,
///   `kAudioConverterErr_InvalidOutputSize` when the output cannot hold every frame.
@discardableResult
public func AudioConverterConvertBuffer(_ inAudioConverter: AudioConverterRef, _ inInputDataSize: UInt32, _ inInputData: UnsafeRawPointer,
                                        _ ioOutputDataSize: UnsafeMutablePointer<UInt32>, _ outOutputData: UnsafeMutableRawPointer) -> OSStatus {
    guard let box = ConverterBox.table.find(inAudioConverter) else { return kAudio_ParamError }
    let converter = box.converter
    guard !converter.isEncoding, !converter.isDecoding, converter.source.mSampleRate == converter.destination.mSampleRate else {
        return kAudioConverterErr_OperationNotSupported
    }
    let inputFrameSize = Int(converter.source.mBytesPerFrame)
    guard Int(inInputDataSize) % inputFrameSize == 0 else { return kAudioConverterErr_InvalidInputSize }
    let frames = Int(inInputDataSize) / inputFrameSize
    guard Int(ioOutputDataSize.pointee) >= frames * Int(converter.destination.mBytesPerFrame) else { return kAudioConverterErr_InvalidOutputSize }
    return status { () throws(AudioConverterError) in
        try converter.push(frames: inInputData, frameCount: frames)
        let written = converter.pullFrames(into: outOutputData, maximumFrames: frames)
        ioOutputDataSize.pointee = UInt32(written * Int(converter.destination.mBytesPerFrame))
    }
}

/// Converts `inNumberPCMFrames` frames of linear PCM from `inInputData` (one interleaved buffer)
/// into `outOutputData`; rate conversion is allowed and the output holds what is ready.
@discardableResult
public func AudioConverterConvertComplexBuffer(_ inAudioConverter: AudioConverterRef, _ inNumberPCMFrames: UInt32,
                                               _ inInputData: UnsafePointer<AudioBufferList>,
                                               _ outOutputData: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
    guard let box = ConverterBox.table.find(inAudioConverter) else { return kAudio_ParamError }
    let converter = box.converter
    guard !converter.isEncoding, !converter.isDecoding else { return kAudioConverterErr_OperationNotSupported }
    guard let input = inInputData.pointee.mBuffers.mData, let output = outOutputData.pointee.mBuffers.mData else { return kAudio_ParamError }
    let capacity = Int(outOutputData.pointee.mBuffers.mDataByteSize) / Int(converter.destination.mBytesPerFrame)
    return status { () throws(AudioConverterError) in
        try converter.push(frames: input, frameCount: Int(inNumberPCMFrames))
        let written = converter.pullFrames(into: output, maximumFrames: capacity)
        outOutputData.pointee.mBuffers.mDataByteSize = UInt32(written * Int(converter.destination.mBytesPerFrame))
    }
}

/// Fills `outOutputData` with up to `ioOutputDataPacketSize` packets (frames for linear PCM),
/// pulling input from `inInputDataProc` as needed, with Apple's contract:
/// - the input proc sets `ioNumberDataPackets` and points `ioData`'s buffer at its data, which
///   must stay valid until the proc is called again (aqjack converts it at once);
/// - for linear-PCM input the buffer's `mDataByteSize` says how many frames were given (seed
///   002's encoder reports 1 packet for a whole buffer of frames);
/// - for AAC input the proc also sets `*outDataPacketDescription` (one packet may go without);
/// - returning 0 packets with `noErr` ends the stream: the encoder is flushed (the last packets
///   and the final PrimeInfo trailing frames come out);
/// - returning an error with 0 packets means "no data for now": conversion stops, the packets
///   produced so far are returned with that error, and the converter keeps its state, so the
///   next call resumes exactly where this one stopped (seed 002 relies on this).
///
/// Output packet descriptions are required for AAC output of more than one packet
/// (`kAudioConverterErr_RequiresPacketDescriptionsError`); seed 002 asks for one packet without.
@discardableResult
public func AudioConverterFillComplexBuffer(_ inAudioConverter: AudioConverterRef,
                                            _ inInputDataProc: AudioConverterComplexInputDataProc,
                                            _ inInputDataProcUserData: UnsafeMutableRawPointer?,
                                            _ ioOutputDataPacketSize: UnsafeMutablePointer<UInt32>,
                                            _ outOutputData: UnsafeMutablePointer<AudioBufferList>,
                                            _ outPacketDescription: UnsafeMutablePointer<AudioStreamPacketDescription>?) -> OSStatus {
    guard let box = ConverterBox.table.find(inAudioConverter) else { return kAudio_ParamError }
    let converter = box.converter
    let requested = Int(ioOutputDataPacketSize.pointee)
    if converter.isEncoding && outPacketDescription == nil && requested > 1 { return kAudioConverterErr_RequiresPacketDescriptionsError }
    guard let output = outOutputData.pointee.mBuffers.mData else { return kAudio_ParamError }
    let capacity = Int(outOutputData.pointee.mBuffers.mDataByteSize)
    let frameSize = Int(converter.destination.mBytesPerFrame)
    var produced = 0
    var bytes = 0
    var result = noErr

    while true {
        // Hand out what is ready.
        if converter.isEncoding {
            while produced < requested, let size = converter.nextPacketSize, bytes + size <= capacity, let packet = converter.pullPacket() {
                packet.bytes.withUnsafeBytes { (output + bytes).copyMemory(from: $0.baseAddress!, byteCount: size) }
                outPacketDescription?[produced] = AudioStreamPacketDescription(mStartOffset: Int64(bytes), mVariableFramesInPacket: 0,
                                                                               mDataByteSize: UInt32(size))
                produced += 1
                bytes += size
            }
            if produced == requested || converter.nextPacketSize != nil { break }   // done, or the next packet does not fit
        } else {
            let frames = converter.pullFrames(into: output + bytes, maximumFrames: min(requested - produced, (capacity - bytes) / frameSize))
            produced += frames
            bytes += frames * frameSize
            if produced == requested || capacity - bytes < frameSize { break }
        }
        if converter.isFinished { break }
        // Need input.
        result = pullInput(box, handle: inAudioConverter, proc: inInputDataProc, userData: inInputDataProcUserData,
                           outputPacketsWanted: requested - produced)
        if result != noErr { break }
    }
    outOutputData.pointee.mBuffers.mDataByteSize = UInt32(bytes)
    ioOutputDataPacketSize.pointee = UInt32(produced)
    return result
}

/// Calls the input proc once and converts what it gives.
private func pullInput(_ box: ConverterBox, handle: AudioConverterRef, proc: AudioConverterComplexInputDataProc,
                       userData: UnsafeMutableRawPointer?, outputPacketsWanted: Int) -> OSStatus {
    let converter = box.converter
    let ratio = converter.source.mSampleRate / converter.destination.mSampleRate
    var packets: UInt32
    if converter.isDecoding {
        packets = 1   // one AAC packet yields 1024 frames; seed 002's decoder never sets the count
    } else {
        let framesWanted = converter.isEncoding ? outputPacketsWanted * Int(converter.destination.mFramesPerPacket) : outputPacketsWanted
        packets = UInt32(max(1, min(1 << 20, Int((Double(framesWanted) * ratio).rounded(.up)))))
    }
    var buffers = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: converter.source.mChannelsPerFrame,
                                                                          mDataByteSize: 0, mData: nil))
    var descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?
    // Apple passes a description pointer only when the input format needs descriptions.
    let procStatus = converter.isDecoding ? proc(handle, &packets, &buffers, &descriptions, userData)
                                          : proc(handle, &packets, &buffers, nil, userData)
    guard procStatus == noErr else { return procStatus }
    let data = buffers.mBuffers.mData
    let byteCount = Int(buffers.mBuffers.mDataByteSize)
    return status { () throws(AudioConverterError) in
        if converter.isDecoding {
            guard packets > 0, let data else {
                try converter.finish()
                return
            }
            if let descriptions {
                for index in 0 ..< Int(packets) {
                    let description = descriptions[index]
                    guard description.mStartOffset >= 0, Int(description.mStartOffset) + Int(description.mDataByteSize) <= byteCount else {
                        throw AudioConverterError(kAudio_ParamError, "packet description \(index) (offset \(description.mStartOffset), \(description.mDataByteSize) bytes) lies outside the \(byteCount)-byte input buffer")
                    }
                    try converter.push(packet: UnsafeRawBufferPointer(start: data + Int(description.mStartOffset), count: Int(description.mDataByteSize)))
                }
            } else if packets == 1 {
                try converter.push(packet: UnsafeRawBufferPointer(start: data, count: byteCount))
            } else {
                throw AudioConverterError(kAudioConverterErr_RequiresPacketDescriptionsError, "\(packets) packets given without packet descriptions")
            }
        } else {
            let frameSize = Int(converter.source.mBytesPerFrame)
            guard byteCount >= frameSize, let data else {
                try converter.finish()
                return
            }
            try converter.push(frames: data, frameCount: byteCount / frameSize)
        }
    }
}
