import AQCodecs
import AQMedia
import CAudioTypes
import Foundation
import Glibc

/// Where a recording puts linear-PCM frames: one file, several for more channels than one file
/// holds (``SplitRecordingFiles``), consecutive parts (``TimeSplitFiles``), or any of these
/// written on the disk-writer thread (``DiskBackedFiles``). Used from one thread at a time.
public protocol RecordingFiles: AnyObject {
    /// The layout of the whole stream (every channel), as the queue delivers it.
    var layout: LinearPCMLayout { get }
    /// The rate of the files, Hz.
    var sampleRate: Double { get }
    /// Frames written to each file so far.
    var packetCount: Int64 { get }
    /// The files, in channel order.
    var paths: [String] { get }
    /// Whether the files can carry the start frame (a BWF time reference: WAVE, RF64).
    var canCarryTimeReference: Bool { get }
    /// Records the JACK frame of the first sample (in the files' rate) and the wall-clock time
    /// of that frame (nil: now), before the first write, with the recording's names: in the
    /// files where they have a place for it (WAVE and RF64's bext and iXML, CAF's 'info',
    /// MPEG-4's tags); parts in time take their split and names from it.
    func markStart(frame: UInt64, originated: Date?) throws(AudioFileError)
    /// Appends `frames` interleaved frames of the whole stream.
    func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError)
    /// Appends `frames` frames of silence: the frames a gap in the device timeline leaves.
    func appendSilence(frames: Int) throws(AudioFileError)
    func close() throws(AudioFileError)
    /// Closes the files, then calls `done` with their paths (every part, once closed); files
    /// written on the disk thread queue both there and return at once (``DiskBackedFiles``).
    func close(then done: @escaping @Sendable ([String]) -> Void) throws(AudioFileError)
    /// Frames that never reached the files (a disk further behind than its ring holds), kept as
    /// silence.
    var droppedFrames: Int64 { get }
}

extension RecordingFiles {
    public func close(then done: @escaping @Sendable ([String]) -> Void) throws(AudioFileError) {
        try close()
        done(paths)
    }
    public var droppedFrames: Int64 { 0 }

    /// Appends `frames` frames of silence (all-zero bytes: zero in every PCM encoding), in chunks
    /// of at most 8192 frames: the frames a gap in the JACK timeline leaves.
    public func appendSilence(frames: Int) throws(AudioFileError) {
        guard frames > 0 else { return }
        let chunk = min(frames, 8192)
        let zeros = UnsafeMutableRawPointer.allocate(byteCount: chunk * layout.bytesPerFrame, alignment: 16)
        defer { zeros.deallocate() }
        zeros.initializeMemory(as: UInt8.self, repeating: 0, count: chunk * layout.bytesPerFrame)
        var left = frames
        while left > 0 {
            let count = min(left, chunk)
            try append(zeros, frames: count)
            left -= count
        }
    }
}

extension AudioFileWriter: RecordingFiles {
    public var sampleRate: Double { dataFormat.mSampleRate }
    public var paths: [String] { [path] }
    public func markStart(frame: UInt64, originated: Date?) throws(AudioFileError) {
        try describeStart(frame: frame, originated: originated)
    }
    public func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
        try writePackets(bytes, byteCount: frames * layout.bytesPerFrame, startPacket: packetCount, packetCount: frames)
    }
}

/// A recording kept as files each holding some of its channels: wider than libsndfile's 1024
/// channels a file, files of at most 1024 channels each (`take.wav` of 2040 channels becomes
/// `take.ch1-1024.wav` and `take.ch1025-2040.wav`), or stems, a mono file per channel
/// (``init(stemsOf:names:fileType:format:eraseExisting:metadata:)``, or compressed:
/// ``init(encodedStemsOf:names:fileType:format:bitRate:quality:eraseExisting:metadata:)``).
/// Every file starts at the same JACK frame (each carries the same BWF time reference where the
/// type has one) and has the same length, so a DAW lines them up; each is an ordinary file that
/// libsndfile, sox and ffprobe read.
///
/// Each buffer's frames are gathered into one file's channels at a time (a scratch buffer of
/// ``scratchFrames`` frames, allocated once) and written. Queue thread only.
public final class SplitRecordingFiles: RecordingFiles {
    /// The most channels one file takes (libsndfile's limit).
    public static let channelsPerFile = 1024
    /// Frames gathered per write: 4096 frames of 1024 float channels is 16 MiB.
    public static let scratchFrames = 4096

    public let layout: LinearPCMLayout
    public let sampleRate: Double
    private let parts: [(files: any RecordingFiles, firstChannel: Int)]
    private let scratch: UnsafeMutableRawPointer
    private var isClosed = false

    /// The path of the part holding channels `first ... last` (1-based) of a recording to `path`.
    public static func partPath(_ path: String, first: Int, last: Int) -> String {
        insertingBeforeExtension(".ch\(first)-\(last)", into: path)
    }

    /// Creates one file per 1024 channels of `format` (linear PCM), of type `fileType`, each
    /// carrying `metadata` with its own channels' track names. An existing part without
    /// `eraseExisting` is refused before any file is created.
    public convenience init(path: String, fileType: UInt32, format: AudioStreamBasicDescription, eraseExisting: Bool,
                            metadata: RecordingMetadata? = nil) throws(AudioFileError) {
        let channels = Int(format.mChannelsPerFrame)
        let groups = stride(from: 0, to: channels, by: Self.channelsPerFile).map { first in
            let end = min(channels, first + Self.channelsPerFile)
            return (path: Self.partPath(path, first: first + 1, last: end), channels: first ..< end)
        }
        try self.init(pcm: groups, fileType: fileType, format: format, eraseExisting: eraseExisting, metadata: metadata)
    }

    /// Creates stems: a mono file per channel of `format`, channel i's at `path` with `.NAME`
    /// before its extension, NAME being `names[i]` made safe for a file name
    /// (``stemPaths(_:names:)``).
    public convenience init(stemsOf path: String, names: [String], fileType: UInt32, format: AudioStreamBasicDescription, eraseExisting: Bool,
                            metadata: RecordingMetadata? = nil) throws(AudioFileError) {
        let groups = Self.stemPaths(path, names: names).enumerated().map { (path: $0.element, channels: $0.offset ..< $0.offset + 1) }
        try self.init(pcm: groups, fileType: fileType, format: format, eraseExisting: eraseExisting, metadata: metadata)
    }

    /// Creates compressed stems: a mono ``EncodedFiles`` per channel (AAC or Apple Lossless,
    /// `format` their compressed description with the recording's channel count, `bitRate` and
    /// `quality` each stem's), named as ``init(stemsOf:names:fileType:format:eraseExisting:metadata:)``
    /// names them; frames come as 32-bit Float, interleaved.
    public convenience init(encodedStemsOf path: String, names: [String], fileType: UInt32, format: AudioStreamBasicDescription,
                            bitRate: Int? = nil, quality: Int? = nil, eraseExisting: Bool, metadata: RecordingMetadata? = nil) throws(AudioFileError) {
        let groups = Self.stemPaths(path, names: names).enumerated().map { (path: $0.element, channels: $0.offset ..< $0.offset + 1) }
        var mono = format
        mono.mChannelsPerFrame = 1
        let layout = try LinearPCMLayout(validating: CompressedFormatValues.floatPCM(sampleRate: format.mSampleRate, channelCount: names.count))
        try self.init(groups: groups, layout: layout, eraseExisting: eraseExisting) { path, channels throws(AudioFileError) in
            try EncodedFiles(path: path, fileType: fileType, format: mono, bitRate: bitRate, quality: quality, eraseExisting: eraseExisting,
                             metadata: metadata.map { Self.metadata($0, of: channels) })
        }
    }

    /// The stems' paths of a recording to `path`, one per name: `take.wav` and
    /// `system:capture_1` → `take.system_capture_1.wav`. Each character of a name but ASCII
    /// letters, digits, `-`, `_` and `+` becomes `_` (runs of them one); a name used before gets `-2`, `-3` ...
    public static func stemPaths(_ path: String, names: [String]) -> [String] {
        var used: Set<String> = []
        return names.map { name in
            var safe = ""
            for scalar in name.unicodeScalars {
                let keep = scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "-_+".unicodeScalars.contains(scalar))
                if keep { safe.unicodeScalars.append(scalar) } else if !safe.hasSuffix("_") { safe += "_" }
            }
            if safe.isEmpty || safe == "_" { safe = "channel" }
            var unique = safe, count = 1
            while used.contains(unique) {
                count += 1
                unique = "\(safe)-\(count)"
            }
            used.insert(unique)
            return insertingBeforeExtension("." + unique, into: path)
        }
    }

    /// `metadata` for the file of the recording's channels `channels`: their track names only.
    private static func metadata(_ metadata: RecordingMetadata, of channels: Range<Int>) -> RecordingMetadata {
        var part = metadata
        part.trackNames = Array(metadata.trackNames.dropFirst(channels.lowerBound).prefix(channels.count))
        return part
    }

    /// Creates a linear-PCM file per group: `path` holding the channels `channels` of `format`.
    private convenience init(pcm groups: [(path: String, channels: Range<Int>)], fileType: UInt32, format: AudioStreamBasicDescription,
                             eraseExisting: Bool, metadata: RecordingMetadata?) throws(AudioFileError) {
        let layout = try LinearPCMLayout(validating: format)
        try self.init(groups: groups, layout: layout, eraseExisting: eraseExisting) { path, channels throws(AudioFileError) in
            var partFormat = format
            partFormat.mChannelsPerFrame = UInt32(channels.count)
            partFormat.mBytesPerFrame = UInt32(layout.bytesPerSample * channels.count)
            partFormat.mBytesPerPacket = partFormat.mBytesPerFrame
            let file = try AudioFile.create(path: path, fileType: fileType, format: partFormat, eraseExisting: eraseExisting)
            guard let writer = file.pcmWriter else {
                throw AudioFileError(AudioFileError.fileUnsupportedDataFormatCode, "a recording kept in files of some of its channels needs linear PCM")
            }
            writer.metadata = metadata.map { Self.metadata($0, of: channels) }
            return writer
        }
    }

    /// Creates the files of each group with `make` (`path` holding the channels `channels` of a
    /// stream laid out as `layout`). An existing file without `eraseExisting` is refused before
    /// any is made; a failure removes those already made.
    init(groups: [(path: String, channels: Range<Int>)], layout: LinearPCMLayout, eraseExisting: Bool,
         make: (_ path: String, _ channels: Range<Int>) throws(AudioFileError) -> any RecordingFiles) throws(AudioFileError) {
        self.layout = layout
        for group in groups { try OutputPath.checkCreatable(group.path, eraseExisting: eraseExisting) }
        var parts: [(files: any RecordingFiles, firstChannel: Int)] = []
        for group in groups {
            do throws(AudioFileError) {
                parts.append((try make(group.path, group.channels), group.channels.lowerBound))
            } catch {
                // Nothing half made stays behind: the parts already created go again.
                for part in parts {
                    try? part.files.close()
                    for path in part.files.paths { unlink(path) }
                }
                throw error
            }
        }
        self.parts = parts
        sampleRate = parts[0].files.sampleRate
        scratch = .allocate(byteCount: Self.scratchFrames * layout.bytesPerSample * Self.channelsPerFile, alignment: 16)
    }

    deinit {
        try? close()
        scratch.deallocate()
    }

    public var packetCount: Int64 { parts[0].files.packetCount }
    public var paths: [String] { parts.flatMap(\.files.paths) }
    public var canCarryTimeReference: Bool { parts[0].files.canCarryTimeReference }

    public func markStart(frame: UInt64, originated: Date?) throws(AudioFileError) {
        for part in parts { try part.files.markStart(frame: frame, originated: originated) }
    }

    public func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) {
        let sample = layout.bytesPerSample
        let frameBytes = layout.bytesPerFrame
        for part in parts {
            let partBytes = part.files.layout.bytesPerFrame
            var done = 0
            while done < frames {
                let count = min(Self.scratchFrames, frames - done)
                var source = bytes + done * frameBytes + part.firstChannel * sample
                var destination = scratch
                for _ in 0 ..< count {
                    destination.copyMemory(from: source, byteCount: partBytes)
                    source += frameBytes
                    destination += partBytes
                }
                try part.files.append(scratch, frames: count)
                done += count
            }
        }
    }

    public func close() throws(AudioFileError) {
        guard !isClosed else { return }
        isClosed = true
        var failure: AudioFileError?
        for part in parts {
            do throws(AudioFileError) { try part.files.close() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }
}

/// `path` with `suffix` before the file name's extension (`take.wav`, `-001` → `take-001.wav`),
/// or at the end when the name has none: how split recordings name their parts.
public func insertingBeforeExtension(_ suffix: String, into path: String) -> String {
    let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
    let name = path[slash...]
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return path + suffix }
    return "\(path[..<dot])\(suffix)\(path[dot...])"
}
