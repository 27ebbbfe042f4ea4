import Glibc

/// The value of the environment variable `name`, or nil, read with `getenv`. Not
/// `ProcessInfo.processInfo.environment`: that builds ProcessInfo and a dictionary of the whole
/// environment on first use, 9 % of the process's CPU samples in an `aqjack play` that stopped
/// at a missing file (`perf record`, 200 runs), and every command read one variable at its start.
func environmentValue(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
