import AQCodecs
import AQCore
import AQMedia
import CAudioTypes
import Foundation
import Synchronization

/// Offline rendering (`AudioQueueOfflineRender`): the playback queue rendered on the caller's thread.
extension AudioOutputQueue {
    // MARK: Offline rendering

    /// The format ``renderOffline(frameCount:into:)`` writes (`AudioQueueSetOfflineRenderFormat`);
    /// nil while the queue plays to its device.
    public var offlineRenderFormat: AudioStreamBasicDescription? { lock.withLock { offlineFormat?.format } }

    /// Switches the queue to offline rendering into `format`, or back to its device with nil.
    ///
    /// `format` is interleaved linear PCM with the queue's channel count (Apple: "must be linear
    /// PCM and (if not mono) interleaved"); a rate of 0 means the buffers' rate. Offline, the queue
    /// connects to nothing: its processor runs on an ``OfflineDriver`` at the format's rate, one
    /// cycle per ``renderOffline(frameCount:into:)``, and the buffers' frames are resampled to
    /// that rate as they would be to a device's.
    ///
    /// - Throws: `kAudioQueueErr_InvalidOfflineMode` while the queue runs, or when the rate
    ///   changes while converted frames wait (set the format before enqueuing, as Apple's sample
    ///   does); `kAudioFormatUnsupportedDataFormatError` for a format it cannot render, naming
    ///   the field.
    /// The corresponding Apple function is `AudioQueueSetOfflineRenderFormat`.
    public func setOfflineRenderFormat(_ format: AudioStreamBasicDescription?) throws(AudioQueueError) {
        var target: (format: AudioStreamBasicDescription, layout: LinearPCMLayout)?
        if var format {
            let layout = try inDomain(AudioQueueError.self) { () throws(AudioFileError) in try LinearPCMLayout(validating: format) }
            guard layout.channelCount == self.layout.channelCount else {
                throw AudioQueueError(AudioQueueError.unsupportedDataFormatCode,
                                      "the offline render format has \(layout.channelCount) channels; the queue plays \(self.layout.channelCount)")
            }
            if format.mSampleRate == 0 { format.mSampleRate = self.format.mSampleRate }
            guard format.mSampleRate >= 1, format.mSampleRate == format.mSampleRate.rounded() else {
                throw AudioQueueError(AudioQueueError.unsupportedDataFormatCode,
                                      "the offline render format's mSampleRate is \(format.mSampleRate); expected a whole number of Hz")
            }
            target = (format, layout)
        }
        lock.lock()
        defer { lock.unlock() }
        do {
            guard runState == .stopped else {
                throw AudioQueueError(AudioQueueError.invalidOfflineModeCode, "the queue is running; stop it before changing its offline render format")
            }
            // Back to the device when already on it: nothing to move.
            guard target != nil || offlineFormat != nil else { return }
            let newRate = target.map { Int($0.format.mSampleRate) } ?? driver.sampleRate
            guard newRate == deviceRate || !pipeline.holdsFrames else {
                throw AudioQueueError(AudioQueueError.invalidOfflineModeCode,
                                      "buffers converted for \(deviceRate) Hz are waiting; set an offline render format of another rate (\(newRate) Hz) before enqueuing")
            }
            let old = offlineFormat?.driver
            let renderer = target.map { _ in
                OfflineDriver(name: driver.name, sampleRate: newRate, bufferSize: 4096,
                              startFrame: processor.nextCycleFrame.load(ordering: .acquiring))
            }
            if let renderer {
                // The same channels as the device's, so the processor's outputs line up.
                _ = try? renderer.makeChannels(prefix: "out_", count: layout.channelCount, direction: .output)
            }
            // Move the processor: off the device (or the previous renderer), onto the new one.
            if let old { old.close() } else { driver.stop() }
            do throws(AudioDriverError) {
                if let renderer { try renderer.start(processor: processor) } else { try driver.start(processor: processor) }
            } catch {
                throw AudioQueueError(AudioQueueError.invalidDeviceCode, "\(error)")
            }
            offlineFormat = target.flatMap { target in renderer.map { (target.format, target.layout, $0) } }
            pipeline.changeDeviceRate(newRate)
        }
    }

    /// Renders up to `frameCount` frames of the queue's output into `buffer` in the offline
    /// render format, on the caller's thread holding the queue thread's turn, and sets the buffer's
    /// `mAudioDataByteSize` to what was rendered.
    ///
    /// Frames come from the enqueued buffers in order; a buffer whose last frame is rendered
    /// goes back through the callback at once, so a callback that enqueues the next one feeds
    /// the same call. Fewer frames than asked come back when nothing more is enqueued (Apple:
    /// "fewer frames than requested may be returned ... if insufficient data was enqueued"); a
    /// queue stopped with `immediate: false` finishes (stops, `onRunningChange(false)`) in the
    /// call that renders its last frame.
    ///
    /// - Returns: the frames rendered.
    /// - Throws: `kAudioQueueErr_InvalidOfflineMode` when no offline render format is set;
    ///   `kAudio_ParamError` when `frameCount` frames do not fit the buffer.
    /// The corresponding Apple function is `AudioQueueOfflineRender`.
    @discardableResult
    public func renderOffline(frameCount: Int, into buffer: AudioQueueBufferRef) throws(AudioQueueError) -> Int {
        guard let (_, renderLayout, renderer) = lock.withLock({ offlineFormat }) else {
            throw AudioQueueError(AudioQueueError.invalidOfflineModeCode, "the queue is not in offline mode; set an offline render format first (AudioQueueSetOfflineRenderFormat)")
        }
        let capacity = Int(buffer.pointee.mAudioDataBytesCapacity)
        guard frameCount >= 0, frameCount <= capacity / renderLayout.bytesPerFrame else {
            throw AudioQueueError(AudioQueueError.parameterCode,
                                  "\(frameCount) frames of \(renderLayout.bytesPerFrame) bytes do not fit the buffer's \(capacity) bytes (mAudioDataBytesCapacity)")
        }
        let destination = buffer.pointee.mAudioData
        var done = 0
        worker.exclusively {
            while done < frameCount {
                pipeline.fill()
                var ready = feeder.queuedFrameCount
                if ready == 0, lock.withLock({ runState == .draining && pipeline.enqueued.isEmpty }) {
                    pipeline.flushResampler()
                    ready = feeder.queuedFrameCount
                }
                guard ready > 0, isRunning else { break }
                let count = min(ready, frameCount - done)
                let runStart = renderer.currentFrame
                let base = destination + done * renderLayout.bytesPerFrame
                renderer.run(frames: count, output: { channel, firstFrame, samples in
                    // A run of more than the renderer's buffer size comes in several cycles.
                    renderLayout.encode(samples.baseAddress!, count: samples.count,
                                        to: base + Int(firstFrame - runStart) * renderLayout.bytesPerFrame + channel * renderLayout.bytesPerSample,
                                        byteStride: renderLayout.bytesPerFrame)
                })
                done += count
                pipeline.returnPlayedBuffers()
            }
            finishOfflineDrain()
            if isRunning && playbackStartFrame != nil { reportRunning(true) }
        }
        buffer.pointee.mAudioDataByteSize = UInt32(done * renderLayout.bytesPerFrame)
        return done
    }

}
