import CAudioTypes

/// A validated interleaved linear-PCM layout: what an `AudioStreamBasicDescription` says about
/// each sample's bytes, checked field by field.
public struct LinearPCMLayout: Sendable, Equatable {
    public enum SampleKind: Sendable { case float, signedInteger }
    public let kind: SampleKind
    public let bitsPerChannel: Int
    public let bytesPerSample: Int
    public let isBigEndian: Bool
    public let channelCount: Int
    public var bytesPerFrame: Int { bytesPerSample * channelCount }
    /// The widest stream: JACK2's port maximum (a client gets 2045 ports beside another as wide).
    public static let maximumChannelCount: UInt32 = 4096

    /// Checks `format` as Apple's queue does for linear PCM.
    ///
    /// - Throws: ``AudioFileError`` with `kAudioFormatUnsupportedDataFormatError` and a message
    ///   naming the field (`mBitsPerChannel is 20; expected 8, 16, 24 or 32 ...`).
    public init(validating format: AudioStreamBasicDescription) throws(AudioFileError) {
        func reject(_ message: String) -> AudioFileError {
            AudioFileError(AudioFileError.unsupportedDataFormatCode, "unsupported stream description: " + message)
        }
        guard format.mFormatID == AudioFormatValues.linearPCM else {
            throw reject("mFormatID is \(fourCharacterCode(format.mFormatID)); expected 'lpcm' (kAudioFormatLinearPCM), or for queues and converters 'aac ' (kAudioFormatMPEG4AAC); ALAC and FLAC are read and written by AudioFile")
        }
        guard format.mSampleRate.isFinite, format.mSampleRate >= 0, format.mSampleRate <= 1_536_000 else {
            throw reject("mSampleRate is \(format.mSampleRate); expected 0 (the device's rate) or a rate in Hz up to 1536000")
        }
        guard format.mChannelsPerFrame >= 1, format.mChannelsPerFrame <= Self.maximumChannelCount else {
            throw reject("mChannelsPerFrame is \(format.mChannelsPerFrame); expected 1 ... \(Self.maximumChannelCount)")
        }
        let flags = format.mFormatFlags
        guard flags & AudioFormatValues.isNonInterleaved == 0 else {
            throw reject("mFormatFlags has kAudioFormatFlagIsNonInterleaved; the queue takes interleaved linear PCM (as Apple's does)")
        }
        let isFloat = flags & AudioFormatValues.isFloat != 0
        let bits = Int(format.mBitsPerChannel)
        if isFloat {
            guard bits == 32 || bits == 64 else {
                throw reject("mBitsPerChannel is \(bits) with kAudioFormatFlagIsFloat; expected 32 or 64")
            }
        } else {
            guard flags & AudioFormatValues.isSignedInteger != 0 else {
                throw reject("mFormatFlags has neither kAudioFormatFlagIsFloat nor kAudioFormatFlagIsSignedInteger; expected one of them")
            }
            guard [8, 16, 24, 32].contains(bits) else {
                throw reject("mBitsPerChannel is \(bits); expected 8, 16, 24 or 32 for signed integers")
            }
        }
        guard format.mFramesPerPacket == 1 else {
            throw reject("mFramesPerPacket is \(format.mFramesPerPacket); expected 1 for linear PCM")
        }
        let channels = Int(format.mChannelsPerFrame)
        let bytesPerSample = bits / 8
        guard Int(format.mBytesPerFrame) == channels * bytesPerSample else {
            throw reject("mBytesPerFrame is \(format.mBytesPerFrame); expected \(channels * bytesPerSample) (\(channels) channels × \(bytesPerSample) bytes, packed)")
        }
        guard format.mBytesPerPacket == format.mBytesPerFrame else {
            throw reject("mBytesPerPacket is \(format.mBytesPerPacket); expected mBytesPerFrame (\(format.mBytesPerFrame)) since one packet is one frame")
        }
        kind = isFloat ? .float : .signedInteger
        bitsPerChannel = bits
        self.bytesPerSample = bytesPerSample
        isBigEndian = flags & AudioFormatValues.isBigEndian != 0
        channelCount = channels
    }

    /// Writes `sample` (nominal range -1 ... 1) at `destination` in this layout. Integers are
    /// scaled by 2^(bits-1), rounded to nearest and clipped (Core Audio's convention).
    @inline(__always)
    public func encode(_ sample: Float, to destination: UnsafeMutableRawPointer) {
        switch kind {
        case .float:
            if bitsPerChannel == 32 {
                let bits = sample.bitPattern
                destination.storeBytes(of: isBigEndian ? bits.bigEndian : bits.littleEndian, as: UInt32.self)
            } else {
                let bits = Double(sample).bitPattern
                destination.storeBytes(of: isBigEndian ? bits.bigEndian : bits.littleEndian, as: UInt64.self)
            }
        case .signedInteger:
            let scale = Double(1 << (bitsPerChannel - 1))
            let scaled = (Double(sample) * scale).rounded()
            let value = Int32(max(-scale, min(scale - 1, scaled)))
            let bytes = UInt32(bitPattern: value)
            for index in 0 ..< bytesPerSample {
                let shift = isBigEndian ? (bytesPerSample - 1 - index) * 8 : index * 8
                destination.storeBytes(of: UInt8(truncatingIfNeeded: bytes >> UInt32(shift)), toByteOffset: index, as: UInt8.self)
            }
        }
    }

    /// Reads one sample at `source` as a Float (integers divided by 2^(bits-1)).
    @inline(__always)
    public func decode(from source: UnsafeRawPointer) -> Float {
        switch kind {
        case .float:
            if bitsPerChannel == 32 {
                let raw = source.loadUnaligned(as: UInt32.self)
                return Float(bitPattern: isBigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw))
            }
            let raw = source.loadUnaligned(as: UInt64.self)
            return Float(Double(bitPattern: isBigEndian ? UInt64(bigEndian: raw) : UInt64(littleEndian: raw)))
        case .signedInteger:
            var value: UInt32 = 0
            for index in 0 ..< bytesPerSample {
                let shift = isBigEndian ? (bytesPerSample - 1 - index) * 8 : index * 8
                value |= UInt32(source.load(fromByteOffset: index, as: UInt8.self)) << UInt32(shift)
            }
            let signed = Int32(bitPattern: value << UInt32(32 - bitsPerChannel)) >> Int32(32 - bitsPerChannel)
            return Float(Double(signed) / Double(1 << (bitsPerChannel - 1)))
        }
    }
}

extension LinearPCMLayout {
    /// Reads `count` consecutive samples at `source` into `destination`, each exactly as
    /// ``decode(from:)`` reads it; 16-bit integer and 32-bit float, the common layouts, in loops of
    /// their own (the per-sample `decode` was half the time of an offline render).
    public func decode(from source: UnsafeRawPointer, into destination: UnsafeMutablePointer<Float>, count: Int) {
        switch (kind, bitsPerChannel) {
        case (.signedInteger, 16):
            // Int16 / 2^15 is exact in Float: the same value as decode(from:)'s Double division.
            let scale: Float = 1.0 / 32768
            for index in 0 ..< count {
                let raw = source.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self)
                destination[index] = Float(Int16(bitPattern: isBigEndian ? UInt16(bigEndian: raw) : UInt16(littleEndian: raw))) * scale
            }
        case (.float, 32):
            for index in 0 ..< count {
                let raw = source.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self)
                destination[index] = Float(bitPattern: isBigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw))
            }
        default:
            for index in 0 ..< count { destination[index] = decode(from: source + index * bytesPerSample) }
        }
    }

    /// Writes `count` samples from `source` to `destination`, `byteStride` bytes apart (a frame's
    /// size when writing one channel of interleaved frames), each exactly as ``encode(_:to:)``.
    public func encode(_ source: UnsafePointer<Float>, count: Int, to destination: UnsafeMutableRawPointer, byteStride: Int) {
        switch (kind, bitsPerChannel) {
        case (.float, 32) where !isBigEndian && byteStride == 4:
            destination.copyMemory(from: source, byteCount: 4 * count)
        case (.float, 32) where !isBigEndian:
            // The byte order tested once, not per sample: with the test in the loop this store
            // was 38 % of an offline render's time (perf, 600 s of stereo, 0.8 ns a sample).
            for index in 0 ..< count {
                (destination + index * byteStride).storeBytes(of: source[index].bitPattern.littleEndian, as: UInt32.self)
            }
        case (.float, 32):
            for index in 0 ..< count {
                (destination + index * byteStride).storeBytes(of: source[index].bitPattern.bigEndian, as: UInt32.self)
            }
        case (.signedInteger, 16):
            for index in 0 ..< count {
                let scaled = (Double(source[index]) * 32768).rounded()
                let value = UInt16(bitPattern: Int16(max(-32768, min(32767, scaled))))
                (destination + index * byteStride).storeBytes(of: isBigEndian ? value.bigEndian : value.littleEndian, as: UInt16.self)
            }
        default:
            for index in 0 ..< count { encode(source[index], to: destination + index * byteStride) }
        }
    }
}

/// `'lpcm'` for 0x6C70636D; the number in hex when it is not four printable characters.
public func fourCharacterCode(_ value: UInt32) -> String {
    let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> UInt32($0)) }
    if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
        return "'" + String(decoding: bytes, as: UTF8.self) + "'"
    }
    return "0x" + String(value, radix: 16)
}
