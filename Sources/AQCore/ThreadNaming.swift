import Glibc

/// The names aqjack's own threads carry for the system.
public enum ThreadNaming {
    /// Names the calling thread as `ps -L`, `top -H` and gdb show it (Linux keeps at most 15
    /// bytes; a longer name is cut). Linux takes the name written to /proc/thread-self/comm, as
    /// glibc's pthread_setname_np does: Swift's Glibc module does not offer that function, and
    /// Foundation's `Thread.name` stays in Foundation. Not real-time: a system call of its own.
    public static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        let cut = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        _ = cut.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }
}
