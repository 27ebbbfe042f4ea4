import Glibc

/// The checks every file writer makes on the path it is about to create, in one place, so each
/// refusal says what is really wrong (issue 9, items 3 and 16).
///
/// Apple's `AudioFileCreateWithURL` fails on an existing file unless `kAudioFileFlags_EraseFile`
/// is given; it documents no code for a missing folder. We answer a missing folder with
/// `kAudioFileFileNotFoundError` (-43, `fnfErr`), the code Apple's `AudioFileOpenURL` gives for
/// a missing file, and a directory with `kAudioFilePermissionsError` ('prm?').
public enum OutputPath {
    /// Refuses `path` unless a file can be created there.
    ///
    /// - Throws: -43 when its folder does not exist; 'prm?' when it is a directory, a device or
    ///   other non-regular file, or an existing file and `eraseExisting` is false (the file is
    ///   left untouched).
    public static func checkCreatable(_ path: String, eraseExisting: Bool) throws(AudioFileError) {
        var status = stat()
        if FilePath.withCString(path, { stat($0, &status) }) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR {
                throw AudioFileError(AudioFileError.filePermissionsCode,
                                       "'\(path)' is a directory: give a file name, e.g. '\(path.hasSuffix("/") ? path : path + "/")take1.wav'")
            }
            // A device, FIFO or socket is never replaced (convert renames its result over the
            // output: that would turn /dev/null into a file).
            if status.st_mode & S_IFMT != S_IFREG {
                throw AudioFileError(AudioFileError.filePermissionsCode,
                                       "'\(path)' is not a regular file (a device, FIFO or socket): give the name of a file to write")
            }
            if !eraseExisting {
                throw AudioFileError(AudioFileError.filePermissionsCode,
                                       "'\(path)' exists; it was left untouched (pass kAudioFileFlags_EraseFile, or --force, to replace it)")
            }
            return
        }
        let folder = directory(of: path)
        if FilePath.withCString(folder, { stat($0, &status) }) != 0 || status.st_mode & S_IFMT != S_IFDIR {
            throw AudioFileError(AudioFileError.fileNotFoundCode, "cannot create '\(path)': the folder '\(folder)' does not exist")
        }
    }

    /// The folder `path` is in ("." for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    /// Whether `a` and `b` name the same existing file (the same path, a hard link or a
    /// symbolic link to it).
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        guard FilePath.withCString(a, { stat($0, &first) }) == 0, FilePath.withCString(b, { stat($0, &second) }) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }
}
