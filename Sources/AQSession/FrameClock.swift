import Foundation

/// The wall clock of a device frame: one frame time and the wall-clock time it was current,
/// and the rate between. What a recorded file's OriginationDate/-Time (bext) and the summary's
/// first-frame time come from. Exact to the anchor's reading (JACK's frame-time estimate is
/// interpolated within the period) and to the device clock's drift against the system's over
/// the distance from the anchor (parts per million). A value: any thread.
public struct FrameClock: Sendable {
    /// A device frame (JACK frame time, the queue's 64-bit timeline) and when it was current.
    public let frame: Double
    public let date: Date
    /// The device's rate, Hz.
    public let sampleRate: Double

    public init(frame: Double, date: Date, sampleRate: Double) {
        self.frame = frame
        self.date = date
        self.sampleRate = sampleRate
    }

    /// The wall-clock time of device frame `deviceFrame`.
    public func date(ofFrame deviceFrame: Double) -> Date {
        date.addingTimeInterval((deviceFrame - frame) / sampleRate)
    }
}
