import Foundation

extension Process {
    /// Runs the process with no signal blocked, as a shell would start it.
    ///
    /// A child inherits the signal mask of the thread that starts it, and the test runner's
    /// threads block almost every signal (measured: a `jacktrip` started from a test had
    /// `SigBlk: fffffffe3bfbfa27`, SIGTERM and SIGINT among them), so a tool that stops on
    /// SIGTERM through an ordinary handler never saw it and was killed 5 s later. The calling
    /// thread's mask is cleared for the start and restored after it.
    public func runWithSignalsUnblocked() throws {
        var none = sigset_t(), saved = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try run()
    }
}
