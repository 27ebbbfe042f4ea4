/// What every aqjack error carries whatever its domain (`AudioFileError` for files and formats,
/// `AudioConverterError` for converters and codecs, `AudioQueueError` for queues, `JackError`
/// for the JACK client): Apple's `OSStatus` and a message naming what was wrong and what was
/// expected.
public protocol AudioStatusCarrying: Error, CustomStringConvertible, Sendable {
    /// The Apple `OSStatus` the error corresponds to.
    var status: Int32 { get }
    /// What was wrong and what was expected.
    var message: String { get }
}

/// A domain's error made from a code and a message (every domain but JACK's, whose errors are
/// cases): it can take over another domain's error with the same code and message.
public protocol AudioCodedError: AudioStatusCarrying {
    init(_ status: Int32, _ message: String)
}

extension AudioCodedError {
    /// The same code and message as another domain's error.
    public init(_ error: some AudioStatusCarrying) {
        self.init(error.status, error.message)
    }

    public var description: String { "\(message) (OSStatus \(status))" }
}

/// A domain of errors (files and formats, converters, queues): a type that only names it.
public protocol AudioErrorDomain: Sendable {}

/// An error of one domain: Apple's `OSStatus` and a message. Each domain's error is its own type
/// (`AudioFileError` is `AudioDomainError<FileErrorDomain>`, ...), with its domain's codes in a
/// constrained extension; a typed `throws` says which domain a call belongs to.
public struct AudioDomainError<Domain: AudioErrorDomain>: AudioCodedError, Equatable {
    public let status: Int32
    public let message: String

    public init(_ status: Int32, _ message: String) {
        self.status = status
        self.message = message
    }

    /// `kAudioFormatUnsupportedDataFormatError` / `kAudioConverterErr_FormatNotSupported`
    /// ('fmt?', one value): a stream description that is inconsistent or not supported. Apple's
    /// queue answers invalid formats with this code too.
    public static var unsupportedDataFormatCode: Int32 { 0x666D_743F }
    /// `kAudio_ParamError` (-50).
    public static var parameterCode: Int32 { -50 }
    /// `kAudio_MemFullError` (-108): the memory asked for could not be had.
    public static var memoryFullCode: Int32 { -108 }
}

/// Runs `body`, which throws one domain's error, as work of another (`domain`): the error keeps
/// its code and message, e.g. `try inDomain(AudioQueueError.self) { () throws(AudioFileError) in ... }`.
@inlinable
public func inDomain<Result, Thrown: AudioStatusCarrying, Failure: AudioCodedError>(
    _ domain: Failure.Type, _ body: () throws(Thrown) -> Result) throws(Failure) -> Result {
    do {
        return try body()
    } catch {
        throw Failure(error)
    }
}
