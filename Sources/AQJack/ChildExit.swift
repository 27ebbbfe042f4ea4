import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended: its exit code, or the signal that ended it.
public enum ChildExit: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    /// The exit code, or the signal number (as `Process.terminationStatus` gives it).
    public var status: Int32 {
        switch self {
        case .exited(let code): code
        case .signalled(let signal): signal
        }
    }

    /// True for an exit (not a signal) with code 0.
    public var succeeded: Bool { self == .exited(0) }

    /// True when the child exited (whatever the code), false when a signal ended it.
    public var isExit: Bool {
        if case .exited = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .signalled(let signal): "signal \(signal)"
        }
    }
}

extension Process {
    /// Waits until the child has ended and says how, polling every 5 ms; nil when it is still
    /// running after `timeout` seconds (it is left running: the caller decides).
    ///
    /// Use this, not `waitUntilExit()`: on Linux that spins the calling thread's run loop until
    /// Foundation's own monitor thread marks the child ended, and off the main thread it can wait
    /// forever for a child that has already exited (swift-corelibs-foundation; swiftlang/swift
    /// #79881 is one report). A CI run of ours stalled for over an hour in a test that SIGKILLed a
    /// child and waited. Here the child's state is read with `waitid(WNOWAIT)`, which sees an
    /// ended child without reaping it, so Foundation still reaps it and its `isRunning` and
    /// `terminationStatus` stay right once it has.
    ///
    /// Threads: any. Blocks the calling thread (never call it on a real-time thread).
    public func waitForExit(timeout: Double? = nil) -> ChildExit? {
        let pid = processIdentifier
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        while true {
            if !isRunning {
                return terminationReason == .exit ? .exited(terminationStatus) : .signalled(terminationStatus)
            }
            var info = siginfo_t()
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid {
                let status = info._sifields._sigchld.si_status
                // si_code: CLD_EXITED (1) for an exit; CLD_KILLED (2) or CLD_DUMPED (3) for a signal.
                return info.si_code == 1 ? .exited(status) : .signalled(status)
            }
            if let deadline, Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Waits at most `timeout` seconds (with ``waitForExit(timeout:)``); a child still running
    /// then is killed (SIGKILL) and waited for again (at most 10 s). Returns how it ended and
    /// whether this call had to kill it: the one "a hung child must not hang us" wait of the
    /// tests and the reference-tool runner.
    ///
    /// Threads: any. Blocks the calling thread.
    public func waitOrKill(timeout: Double) -> (exit: ChildExit, killed: Bool) {
        if let exit = waitForExit(timeout: timeout) { return (exit, false) }
        kill(processIdentifier, SIGKILL)
        return (waitForExit(timeout: 10) ?? .signalled(SIGKILL), true)
    }
}
