import AQCore

/// The converter domain: sample-rate converters, encoders and decoders (``Resampler`` here,
/// AQCodecs' codecs). Its errors (``AudioConverterError``) carry AudioConverter.h codes; a format
/// error met on the way keeps its own code (`init(_:)`, `inDomain`).
public enum ConverterErrorDomain: AudioErrorDomain {}

/// A converter's or codec's error.
public typealias AudioConverterError = AudioDomainError<ConverterErrorDomain>

extension AudioConverterError {
    /// `kAudioConverterErr_UnspecifiedError` ('what'): the codec library failed.
    public static var unspecifiedCode: Int32 { 0x7768_6174 }
}
