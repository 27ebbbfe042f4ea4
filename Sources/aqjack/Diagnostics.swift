import AQMedia
import Foundation

/// Messages to stderr, prefixed `aqjack:`, so stdout stays clean for data and JSON.
enum Diagnostics {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("aqjack: error: \(FilePath.display(message))\n".utf8))
    }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("aqjack: warning: \(FilePath.display(message))\n".utf8))
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data("aqjack: \(FilePath.display(message))\n".utf8))
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
