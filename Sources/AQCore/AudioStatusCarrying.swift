/// What every aqjack error carries whatever its domain (`AudioFileError` for files and formats,
/// `AudioConverterError` for converters and codecs; `AudioQueueError` for queues; `JackError` for the JACK client): Apple's
/// `OSStatus` and a message naming what was wrong and what was expected.
public protocol AudioStatusCarrying: Error, CustomStringConvertible, Sendable {
    /// The Apple `OSStatus` the error corresponds to.
    var status: Int32 { get }
    /// What was wrong and what was expected.
    var message: String { get }
}
