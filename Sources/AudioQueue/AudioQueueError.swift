import AQMedia

/// Errors of queue calls: Apple's `OSStatus` code and a message.
public typealias AudioQueueError = AudioStatusError
