import AQMedia

/// Reads `path` through libsndfile as interleaved floats of `channels` channels, `chunk` frames at
/// a time, handing each chunk to `body` with the file frame it starts at; returns the frames
/// read. For checks of recordings too large to hold in memory (1024 channels: 196 MB a second).
@discardableResult
public func streamFloatFrames(path: String, channels: Int, chunk: Int = 4800,
                              _ body: (_ samples: UnsafeBufferPointer<Float>, _ firstFrame: Int, _ frameCount: Int) -> Void) throws -> Int {
    let reader = try AudioFileReader(path: path)
    var buffer = [Float](repeating: 0, count: chunk * channels)
    var frames = 0
    while true {
        let read = try buffer.withUnsafeMutableBufferPointer {
            try reader.readFloatFrames(startFrame: Int64(frames), into: $0.baseAddress!, maximumFrames: chunk)
        }
        guard read > 0 else { return frames }
        buffer.withUnsafeBufferPointer { body($0, frames, read) }
        frames += read
    }
}
