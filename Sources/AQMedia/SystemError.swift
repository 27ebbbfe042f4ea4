import Glibc

/// The system's reason for a failed call, as messages show it: the errno name and its text,
/// e.g. "ENOSPC (No space left on device)", so a studio engineer can search for it and a
/// script can match it (issue 9, item 12).
public enum SystemError {
    /// `code` (an errno value) named and explained.
    public static func describe(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let name = names[code] else { return "errno \(code) (\(text))" }
        return "\(name) (\(text))"
    }

    private static let names: [Int32: String] = [
        ENOSPC: "ENOSPC", EDQUOT: "EDQUOT", EFBIG: "EFBIG", EIO: "EIO", EROFS: "EROFS", EACCES: "EACCES",
        EPERM: "EPERM", ENOENT: "ENOENT", EISDIR: "EISDIR", ENOTDIR: "ENOTDIR", EEXIST: "EEXIST", EBADF: "EBADF",
        EINVAL: "EINVAL", ENOMEM: "ENOMEM", EMFILE: "EMFILE", ENAMETOOLONG: "ENAMETOOLONG", EXDEV: "EXDEV",
    ]
}
