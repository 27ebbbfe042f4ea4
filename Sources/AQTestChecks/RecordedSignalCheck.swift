import AQTestSupport

/// A recording of ``TestSignal`` read back, checked sample for sample. This module is compiled
/// optimized even in debug builds (Package.swift): a 1024-channel, 10 s recording is 491 million
/// samples, which an unoptimized loop took most of a minute to check.
extension SoundFileContents {
    /// Checks every frame against ``TestSignal`` at the JACK frame the file's TimeReference
    /// gives it (frame `i` is JACK frame `timeReference + i`, 32 bits wide): a frame silent on
    /// every channel counts as silent, any other sample that differs in any bit as wrong. With no
    /// TimeReference, `wrong` is -1.
    public func testSignalCheck(channels: Int) -> (frames: Int, wrong: Int, silent: Int) {
        guard let reference = timeReference else { return (0, -1, 0) }
        var wrong = 0, silent = 0
        samples.withUnsafeBufferPointer { all in
            for frame in 0 ..< frames {
                let base = frame * channels
                var anySound = false
                for channel in 0 ..< channels where all[base + channel] != 0 { anySound = true; break }
                guard anySound else {
                    silent += 1
                    continue
                }
                let jackFrame = UInt32(truncatingIfNeeded: reference + Int64(frame))
                for channel in 0 ..< channels
                where all[base + channel].bitPattern != TestSignal.sample(channel: channel, frame: jackFrame).bitPattern {
                    wrong += 1
                }
            }
        }
        return (frames, wrong, silent)
    }
}
