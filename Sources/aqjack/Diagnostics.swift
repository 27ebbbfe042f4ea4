import AQJack
import AQMedia
import Foundation

/// Messages to stderr, prefixed `aqjack:`, so stdout stays clean for data and JSON. Every
/// message is made printable first (``printable(_:)``): a file name or a network message with
/// control bytes in it cannot move the terminal's cursor or ring its bell.
enum Diagnostics {
    static func error(_ message: String) { emit("aqjack: error: \(printable(message))\n") }

    static func warning(_ message: String) { emit("aqjack: warning: \(printable(message))\n") }

    static func note(_ message: String) { emit("aqjack: \(printable(message))\n") }

    /// Writes `text` to `handle` as it is; a stream that cannot take it (a closed pipe, a full
    /// disk) loses the text and nothing else: Foundation's `write(_: Data)` traps on such an
    /// error, which would end a recording because its reader went away.
    static func emit(_ text: String, to handle: FileHandle = .standardError) {
        try? handle.write(contentsOf: Data(text.utf8))
    }

    /// Makes a closed pipe (`aqjack record ... | head`, an `--on-file` command that does not read
    /// its input, a patchbay that stops reading) an error on that write (``emit(_:to:)`` drops
    /// it), never a signal that ends a recording before its files are finalized. SIGPIPE gets a
    /// handler that does nothing rather than `SIG_IGN`: an ignored signal stays ignored in the
    /// programs aqjack starts (an `--on-file` pipeline would then see EPIPE errors where a shell
    /// pipeline ends quietly), a handler is reset to the default by `exec`. Declared here, not in
    /// `main.swift`, where a closure would be main-actor code and trap on another thread.
    static func surviveClosedPipes() {
        signal(SIGPIPE) { _ in }
    }

    /// `text` with the bytes of a name that is not UTF-8 as `\xHH` (``FilePath/display(_:)``)
    /// and every control character but the line feed as `\xHH` too.
    static func printable(_ text: String) -> String {
        let shown = FilePath.display(text)
        guard shown.unicodeScalars.contains(where: isControl) else { return shown }
        var escaped = ""
        for scalar in shown.unicodeScalars {
            if isControl(scalar) {
                escaped += "\\x" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// `text` in single quotes, for naming a value from outside in a message.
    static func quoted(_ text: String) -> String { "'" + text + "'" }

    /// C0 and C1 controls and DEL, but not the line feed that separates a message's lines.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "\n" && (scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value))
    }
}

extension Diagnostics {
    /// Stalled callbacks a recorder's client keeps for ``writeStalls(of:)``: 65,536 (1.3 MB)
    /// when AQJACK_STALLS asks for them, else 64 (JackClient's default).
    static var stallLogCapacity: Int { environmentValue("AQJACK_STALLS") == nil ? 64 : 1 << 16 }

    /// With `AQJACK_STALLS=FILE` in the environment, writes the client's stalled callbacks to
    /// FILE, one a line: "FRAME_TIME SINCE_PREVIOUS_US DURATION_US CPU_US MINOR_FAULTS"
    /// (``JackClient/stalledCycleDetails``). For the bench, which sets each gap in a recording
    /// beside the callbacks around it.
    static func writeStalls(of client: JackClient) {
        guard let path = environmentValue("AQJACK_STALLS") else { return }
        let lines = client.stalledCycleDetails.map { "\($0.frameTime) \($0.sincePreviousMicros) \($0.durationMicros) \($0.cpuMicros) \($0.minorFaults)\n" }
        if !FileManager.default.createFile(atPath: path, contents: Data(lines.joined().utf8)) {
            warning("could not write the stalled callbacks to \(path) (AQJACK_STALLS)")
        }
    }
}

/// Prints a command's final summary: one JSON object (sorted keys) or its text form.
func printSummary<Summary: Encodable>(_ summary: Summary, json: Bool, text: () -> String) {
    if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: (try? encoder.encode(summary)) ?? Data(), as: UTF8.self))
    } else {
        print(FilePath.display(text()))
    }
}
