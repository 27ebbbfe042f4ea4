import Foundation

/// Messages to stderr, prefixed `aqjack:`, so stdout stays clean for data and JSON.
enum Diagnostics {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("aqjack: error: \(message)\n".utf8))
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data("aqjack: \(message)\n".utf8))
    }
}
