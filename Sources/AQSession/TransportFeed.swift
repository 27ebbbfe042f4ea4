import AQCodecs
import AQCore
import AQMedia
import Synchronization

/// The feeding side of transport-following playback: services the process thread's seeks and
/// keeps the ring full of the file from the transport frame asked for (file frame `p` at
/// transport frame `p`; silence past its end). One thread at a time calls ``pump()``: the
/// session's feeder thread, or the caller of a caller-clocked driver at the end of each run.
final class TransportFeed: @unchecked Sendable {
    let source: FrameSource
    let feeder: TransportPlaybackFeeder
    /// Frames read per pass: 4096.
    private static let chunkFrames = 4096
    private var scratch: [Float]
    /// The transport frame of the next frame to write; nil until the first seek.
    private var position: Int64?

    init(source: FrameSource, feeder: TransportPlaybackFeeder) {
        self.source = source
        self.feeder = feeder
        scratch = [Float](repeating: 0, count: Self.chunkFrames * source.channelCount)
    }

    /// Takes a seek if one is asked for (waiting up to `seekWaitMilliseconds` for the process
    /// thread to empty the ring; 0 on a caller-clocked driver, whose cycles run only between
    /// pumps) and fills the ring as far as it has room. Returns whether it wrote anything.
    /// - Throws: the file's read error, or a file that ends before its frame count.
    @discardableResult
    func pump(seekWaitMilliseconds: Int) throws(AudioFileError) -> Bool {
        if let asked = feeder.serviceSeek(milliseconds: seekWaitMilliseconds) {
            position = Int64(asked)
            if asked < source.frameCount { try source.seek(toFrame: Int64(asked)) }
        }
        var wrote = false
        while !feeder.hasPendingSeek, let current = position {
            let room = min(feeder.writableFrameCount, Self.chunkFrames)
            guard room > 0 else { break }
            let got = try fill(room, from: current)
            if current + Int64(got) < source.frameCount, got < room {
                throw AudioFileError(AudioFileError.fileInvalidFileCode, "'\(source.path)' ended at frame \(current + Int64(got)) of \(source.frameCount)")
            }
            position = current + Int64(room)
            wrote = true
        }
        return wrote
    }

    /// Writes `room` frames to the ring: the file's from transport frame `current`, silence past
    /// its end. Returns the frames read from the file.
    private func fill(_ room: Int, from current: Int64) throws(AudioFileError) -> Int {
        let channels = source.channelCount
        let (source, feeder) = (source, feeder)
        return try scratch.withUnsafeMutableBufferPointer { (buffer) throws(AudioFileError) -> Int in
            let wanted = Int(max(0, min(Int64(room), source.frameCount - current)))
            var read = 0
            while read < wanted {
                let count = try source.read(into: buffer.baseAddress! + read * channels, maximumFrames: wanted - read)
                if count == 0 { break }
                read += count
            }
            (buffer.baseAddress! + read * channels).update(repeating: 0, count: (room - read) * channels)
            feeder.write(buffer.baseAddress!, frameCount: room)
            return read
        }
    }
}
