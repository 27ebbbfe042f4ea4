import AQCodecs
import AQMedia
import Foundation

// AudioFileOpenWithCallbacks: a file whose bytes come from the caller's read and size
// functions (an in-memory file, a custom container). The bytes are read once, at open, into an
// unlinked-at-close temporary file that AudioFile reads like any other: every reader aqjack has
// (libsndfile, libavformat, our packet files) works on it unchanged.

/// The temporary copies behind files opened with callbacks, removed when the file is closed.
enum CallbackFiles {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: [Int: String] = [:]

    static func remember(_ path: String, for id: AudioFileID) {
        lock.withLock { paths[Int(bitPattern: UnsafeRawPointer(id))] = path }
    }

    /// Removes the copy behind `id`, if it has one.
    static func forget(_ id: AudioFileID) {
        guard let path = lock.withLock({ paths.removeValue(forKey: Int(bitPattern: UnsafeRawPointer(id))) }) else { return }
        unlink(path)
    }
}

/// Opens a file for reading through `inReadFunc` and `inGetSizeFunc` (the write and set-size
/// functions are for files opened for writing, which this does not do: pass them or nil). The
/// type hint is accepted; the contents decide, as for `AudioFileOpenURL`.
///
/// - Returns: `kAudioFileUnspecifiedError` when the read function fails or returns fewer bytes
///   than the size function promised (its status is not kept), `kAudioFilePermissionsError`
///   for a write function without a read function's file, else what `AudioFileOpenURL` answers.
@discardableResult
public func AudioFileOpenWithCallbacks(_ inClientData: UnsafeMutableRawPointer, _ inReadFunc: AudioFile_ReadProc,
                                       _ inWriteFunc: AudioFile_WriteProc?, _ inGetSizeFunc: AudioFile_GetSizeProc,
                                       _ inSetSizeFunc: AudioFile_SetSizeProc?, _ inFileTypeHint: AudioFileTypeID,
                                       _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    let size = inGetSizeFunc(inClientData)
    guard size >= 0 else { return kAudio_ParamError }
    var template = Array((FileManager.default.temporaryDirectory.path + "/aqjack-callbacks-XXXXXX").utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else { return kAudioFileUnspecifiedError }
    let path = String(cString: template.map { UInt8(bitPattern: $0) })
    // Reads fill a 64 KiB chunk, however short each is, before it is written: a read function
    // that returns a byte at a time costs a call a byte, not a write(2) a byte.
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var filled = 0
    var position: Int64 = 0
    var copied = true
    func flush() -> Bool {
        defer { filled = 0 }
        return filled == 0 || chunk.withUnsafeBytes { write(descriptor, $0.baseAddress!, filled) } == filled
    }
    while position < size {
        var count = UInt32(min(Int64(chunk.count - filled), size - position))
        let status = chunk.withUnsafeMutableBytes { inReadFunc(inClientData, position, count, $0.baseAddress! + filled, &count) }
        guard status == noErr, count > 0, Int(count) <= chunk.count - filled else {
            copied = false
            break
        }
        filled += Int(count)
        position += Int64(count)
        if filled == chunk.count, !flush() {
            copied = false
            break
        }
    }
    if copied, !flush() { copied = false }
    close(descriptor)
    guard copied else {
        unlink(path)
        return kAudioFileUnspecifiedError
    }
    do throws(AudioFileError) {
        let id = FileHandles.register(try AudioFile.open(path: path, typeHint: inFileTypeHint))
        CallbackFiles.remember(path, for: id)
        outAudioFile.pointee = id
        return noErr
    } catch {
        unlink(path)
        return error.status
    }
}

/// Creating a file through callbacks is not offered: the writers need a file they can seek in
/// and finalize. Answers `kAudioFileOperationNotSupportedError`; create a file with
/// `AudioFileCreateWithURL` (a temporary one, read back, for a file kept in memory).
@discardableResult
public func AudioFileInitializeWithCallbacks(_ inClientData: UnsafeMutableRawPointer, _ inReadFunc: AudioFile_ReadProc,
                                             _ inWriteFunc: AudioFile_WriteProc, _ inGetSizeFunc: AudioFile_GetSizeProc,
                                             _ inSetSizeFunc: AudioFile_SetSizeProc, _ inFileType: AudioFileTypeID,
                                             _ inFormat: UnsafePointer<AudioStreamBasicDescription>, _ inFlags: AudioFileFlags,
                                             _ outAudioFile: UnsafeMutablePointer<AudioFileID?>) -> OSStatus {
    kAudioFileOperationNotSupportedError
}
