import AQCodecs
import AQMedia
import AQSession
import AQTestSupport
import CAudioTypes
import Foundation
import Testing

/// Files whose writes wait at a gate the test opens: a disk that stalls on demand, the one fault
/// the real disk cannot produce when a test asks. Everything else is the real file.
private final class GatedFiles: RecordingFiles, @unchecked Sendable {
    let file: any RecordingFiles
    let gate = DispatchSemaphore(value: 0)

    init(_ file: any RecordingFiles) { self.file = file }

    var layout: LinearPCMLayout { file.layout }
    var sampleRate: Double { file.sampleRate }
    var packetCount: Int64 { file.packetCount }
    var paths: [String] { file.paths }
    var canCarryTimeReference: Bool { file.canCarryTimeReference }
    func markStart(frame: UInt64, originated: Date?) throws(AudioFileError) {
        gate.wait()   // the first command the disk thread runs: it stalls here until opened
        try file.markStart(frame: frame, originated: originated)
    }
    func append(_ bytes: UnsafeRawPointer, frames: Int) throws(AudioFileError) { try file.append(bytes, frames: frames) }
    func close() throws(AudioFileError) { try file.close() }
}

@Suite("Files written by the disk-writer thread (no server needed)")
struct DiskBackedFilesTests {
    @Test("a disk stalled past its ring: the frames with no room are dropped and kept as silence; a timeline gap's silence given meanwhile takes no room and is not counted as dropped; every other frame exact and in its place")
    func stallAndGap() throws {
        let path = NSTemporaryDirectory() + "aqjack-diskbacked-\(getpid()).wav"
        defer { unlink(path) }
        let format = CompressedFormatValues.floatPCM(sampleRate: 48000, channelCount: 1)
        let layout = try LinearPCMLayout(validating: format)
        let gated = GatedFiles(try AudioFile.create(path: path, fileType: AudioFileTypeValues.wave, format: format, eraseExisting: true).pcmWriter!)
        let stream = try DiskStream(ringBytes: 4096)
        let files = DiskBackedFiles(gated, stream: stream)
        try files.markStart(frame: 0, originated: nil)

        // Blocks of 256 frames whose samples are their file frame numbers (+1, so none is 0).
        var expected: [Float] = []
        func give(_ frames: Int) throws {
            let block = (0 ..< frames).map { Float(expected.count + $0 + 1) }
            try block.withUnsafeBytes { try files.append($0.baseAddress!, frames: frames) }
            expected += block
        }
        let ringFrames = stream.ringBytes / layout.bytesPerFrame
        for _ in 0 ..< ringFrames / 256 { try give(256) }
        #expect(files.droppedFrames == 0)
        // The ring is full: these are dropped (silence in the file), then a gap of 300 frames.
        try give(256)
        expected.replaceSubrange(expected.count - 256 ..< expected.count, with: repeatElement(0, count: 256))
        try files.appendSilence(frames: 300)
        expected += repeatElement(0, count: 300)
        #expect(files.droppedFrames == 256)
        gated.gate.signal()
        try files.close()
        // Once the disk has caught up (closing waited for it), more goes through.
        #expect(files.droppedFrames == 256)
        #expect(files.packetCount == Int64(expected.count))

        // Read back by libsndfile directly.
        let file = try SoundFileContents(path: path)
        #expect(file.frames == expected.count)
        let samples = file.samples
        let wrong = zip(samples, expected).filter { $0 != $1 }.count
        #expect(wrong == 0, "\(wrong) of \(expected.count) frames wrong")
    }
}
