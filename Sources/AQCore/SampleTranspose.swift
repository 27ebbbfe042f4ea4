/// Copies between interleaved frames (`[frame * channelCount + channel]`, an AudioQueue buffer's
/// layout) and planar channel runs (`[channel * channelStride + frame]`, the rings' layout), in
/// tiles of 16 channels (one 64-byte line of an interleaved frame).
///
/// The tile is the point. Walking one layout in order makes the other a stride of
/// `channelCount × 4` bytes, and at 1024 channels that stride is 4 KiB: every sample of a channel
/// falls in the same cache set, which holds 8 to 12 lines, so each line is evicted before its
/// next sample arrives. Measured (`aqbench reader 1024 2`, the capture reader's interleave, this
/// 2-core VM): 302 us a 128-frame cycle in the old order (16 frames by every channel), against
/// 17 us for a plain copy of the same bytes.
///
/// - Interleaving takes 16 channels by 8 frames, in 4-frame vectors spread over whole rows: 24-27
///   us at 1024 channels (2040: 124 → 50-63 us; 256: 17.6 → 4-5 us). Tiles of 32 frames took
///   61-72 us and scalar stores of the same tile 34 us.
/// - Deinterleaving takes 16 channels by 16 frames, each channel's 16 frames (a line of its run)
///   stored in order: `aqbench feeder 1024 1 128` 280 → 120-125 us a 128-frame chunk (a copy of
///   the bytes: 13-16 us). It is bound by the scalar gather; 4-frame vectors built from whole
///   rows compiled to element-by-element code and were slower.
///
/// Not real-time code (the queue and disk threads call it), though it allocates nothing.
public enum SampleTranspose {
    /// Channels in a tile: one cache line of an interleaved frame.
    static let tileChannels = 16
    /// Frames in an interleaving tile.
    static let tileFrames = 8
    /// Frames in a deinterleaving tile: one cache line of each channel's run.
    static let deinterleaveTileFrames = 16

    /// `interleaved[frame * channelCount + channel] = planar[channel * channelStride + frame]`
    /// for every frame below `frameCount` and channel below `channelCount`.
    public static func interleave(_ planar: UnsafePointer<Float>, channelStride: Int, frameCount: Int, channelCount: Int,
                                  into interleaved: UnsafeMutablePointer<Float>) {
        var frameStart = 0
        while frameStart < frameCount {
            let frameEnd = min(frameStart + tileFrames, frameCount)
            var group = 0
            while group < channelCount {
                let width = min(tileChannels, channelCount - group)
                let source = planar + group * channelStride
                if width == tileChannels {
                    var frame = frameStart
                    while frame + 4 <= frameEnd {
                        interleaveBlock(source, channelStride: channelStride, frame: frame,
                                        into: interleaved + frame * channelCount + group, rowStride: channelCount)
                        frame += 4
                    }
                    for frame in frame ..< frameEnd {
                        let row = interleaved + frame * channelCount + group
                        for channel in 0 ..< tileChannels { row[channel] = source[channel * channelStride + frame] }
                    }
                } else {
                    for frame in frameStart ..< frameEnd {
                        let row = interleaved + frame * channelCount + group
                        for channel in 0 ..< width { row[channel] = source[channel * channelStride + frame] }
                    }
                }
                group += width
            }
            frameStart = frameEnd
        }
    }

    /// `planar[channel * channelStride + frame] = interleaved[frame * channelCount + channel]`
    /// for every frame below `frameCount` and channel below `channelCount`.
    public static func deinterleave(_ interleaved: UnsafePointer<Float>, frameCount: Int, channelCount: Int,
                                    into planar: UnsafeMutablePointer<Float>, channelStride: Int) {
        var frameStart = 0
        while frameStart < frameCount {
            let frameEnd = min(frameStart + deinterleaveTileFrames, frameCount)
            var group = 0
            while group < channelCount {
                let width = min(tileChannels, channelCount - group)
                let destination = planar + group * channelStride
                // Channel by channel within the tile: each run's frames are stored in order,
                // from rows that stay in L1 for the tile.
                for channel in 0 ..< width {
                    let run = destination + channel * channelStride
                    let column = interleaved + group + channel
                    for frame in frameStart ..< frameEnd { run[frame] = column[frame * channelCount] }
                }
                group += width
            }
            frameStart = frameEnd
        }
    }

    /// `run[frame] = interleaved[frame * channelCount + channel]` for every frame below
    /// `frameCount`: one channel out of interleaved frames (a plugin port's buffer, a plane of
    /// their own per channel).
    public static func copyChannel(_ channel: Int, of interleaved: UnsafePointer<Float>, frameCount: Int, channelCount: Int,
                                   into run: UnsafeMutablePointer<Float>) {
        let column = interleaved + channel
        for frame in 0 ..< frameCount { run[frame] = column[frame * channelCount] }
    }

    /// `interleaved[frame * channelCount + channel] = run[frame]` for every frame below
    /// `frameCount`: one channel into interleaved frames.
    public static func setChannel(_ channel: Int, of interleaved: UnsafeMutablePointer<Float>, frameCount: Int, channelCount: Int,
                                  from run: UnsafePointer<Float>) {
        let column = interleaved + channel
        for frame in 0 ..< frameCount { column[frame * channelCount] = run[frame] }
    }

    /// Four frames of a 16-channel group, planar to interleaved: a 4-frame vector from each
    /// channel's run, spread over four 16-channel rows, each stored whole (one cache line).
    @inline(__always)
    private static func interleaveBlock(_ source: UnsafePointer<Float>, channelStride: Int, frame: Int,
                                        into row: UnsafeMutablePointer<Float>, rowStride: Int) {
        withUnsafeTemporaryAllocation(of: SIMD4<Float>.self, capacity: 16) { runs in
            for channel in 0 ..< 16 {
                runs[channel] = UnsafeRawPointer(source + channel * channelStride + frame).loadUnaligned(as: SIMD4<Float>.self)
            }
            for offset in 0 ..< 4 {
                var samples = SIMD16<Float>()
                for channel in 0 ..< 16 { samples[channel] = runs[channel][offset] }
                UnsafeMutableRawPointer(row + offset * rowStride).storeBytes(of: samples, as: SIMD16<Float>.self)
            }
        }
    }
}
