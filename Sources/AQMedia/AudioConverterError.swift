import AQCore

/// An error of a converter (the converter domain: sample-rate converters, encoders and
/// decoders, ``Resampler`` here and AQCodecs' codecs): Apple's `OSStatus` code (AudioConverter.h
/// values), and a message naming what was wrong and what was expected. A format error met on the
/// way (a cookie or description that does not parse) keeps its own code: ``init(_:)``.
public struct AudioConverterError: AudioStatusCarrying, Equatable {
    public let status: Int32
    public let message: String

    public init(_ status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The same code and message as another domain's error.
    public init(_ error: some AudioStatusCarrying) {
        self.init(error.status, error.message)
    }

    public var description: String { "\(message) (OSStatus \(status))" }

    /// `kAudioConverterErr_FormatNotSupported` ('fmt?'): a format or format pair the converter
    /// cannot take (the same value as `kAudioFormatUnsupportedDataFormatError`).
    public static let unsupportedDataFormatCode: Int32 = 0x666D_743F
    /// `kAudioConverterErr_UnspecifiedError` ('what'): the codec library failed.
    public static let unspecifiedCode: Int32 = 0x7768_6174
    /// `kAudio_ParamError` (-50).
    public static let parameterCode: Int32 = -50
}

extension AudioFileError {
    /// The same code and message as another domain's error.
    public init(_ error: some AudioStatusCarrying) {
        self.init(error.status, error.message)
    }
}

/// Runs `body`, which throws a file or format error, as converter work: the error becomes an
/// ``AudioConverterError`` with the same code and message.
@inlinable
public func asConverterError<Result>(_ body: () throws(AudioFileError) -> Result) throws(AudioConverterError) -> Result {
    do {
        return try body()
    } catch {
        throw AudioConverterError(error)
    }
}

/// Runs `body`, which throws a converter error, as file work: the error becomes an
/// ``AudioFileError`` with the same code and message.
@inlinable
public func asFileError<Result>(_ body: () throws(AudioConverterError) -> Result) throws(AudioFileError) -> Result {
    do {
        return try body()
    } catch {
        throw AudioFileError(error)
    }
}
