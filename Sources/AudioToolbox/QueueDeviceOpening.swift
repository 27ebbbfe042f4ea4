import AQCodecs
import AQCore
import AQJack
import AQMedia
import AudioQueue
import CAudioTypes

/// How Apple's queue constructors find their device: a JACK client on the environment's server
/// (``DeviceEnvironment``), opened only after the format passed its checks, so a bad format
/// opens no client. The Swift-native queues take a driver instead.
extension DeviceEnvironment {
    /// A JACK driver for a queue of `format`.
    /// - Throws: the format's error (`kAudioFormatUnsupportedDataFormatError`, naming the field),
    ///   else `kAudioQueueErr_InvalidDevice` when no JACK server runs.
    func openDriver(format: AudioStreamBasicDescription, purpose: StreamFormat.Purpose) throws(AudioQueueError) -> JackDriver {
        // The server's rate may still be 0 here; Apple Lossless is checked once the device's rate is known.
        if format.mFormatID != AudioFormatValues.appleLossless {
            _ = try inDomain(AudioQueueError.self) { () throws(AudioFileError) in try StreamFormat(format, deviceRate: nil, purpose: purpose) }
        }
        do {
            return try JackDriver(name: clientName, server: server)
        } catch {
            throw AudioQueueError(AudioQueueError.invalidDeviceCode, "cannot open the \(purpose.rawValue) device: \(error)")
        }
    }

    /// A driver for an output queue of `format`: JACK, or, when no JACK server runs, a driver
    /// nobody clocks, for offline rendering only (Apple's queue renders offline with no device;
    /// the returned reason is what a device start then answers). A rate of 0 then means 48000 Hz.
    func openPlaybackDriver(format: AudioStreamBasicDescription) throws(AudioQueueError) -> (driver: any AudioDriver, unavailableReason: String?) {
        do throws(AudioQueueError) {
            return (try openDriver(format: format, purpose: .playback), nil)
        } catch where error.status == AudioQueueError.invalidDeviceCode {
            let rate = format.mSampleRate.isFinite && format.mSampleRate >= 1 && format.mSampleRate <= 1_536_000 ? Int(format.mSampleRate) : 48000
            return (OfflineDriver(name: clientName, sampleRate: rate), error.message)
        }
    }
}
