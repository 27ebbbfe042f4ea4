/// One HTTP request as a handler of ``HTTPServer`` sees it: checked already (its size, its token).
public struct HTTPRequest: Sendable {
    /// `GET`, `POST` or `HEAD`.
    public let method: String
    /// The path, decoded, without the query (`/status`).
    public let path: String
    /// The query's fields (`?a=1&b=2`), decoded; the last of a repeated field wins.
    public let query: [String: String]
    /// The body (at most the server's ``HTTPServer/Options/maximumRequestBytes``).
    public let body: [UInt8]
    /// The peer's address, for messages.
    public let remoteAddress: String

    public init(method: String, path: String, query: [String: String] = [:], body: [UInt8] = [], remoteAddress: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// Reads `a=1&b=x%20y` (`+` is a space).
    public static func fields(of query: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { percentDecoded(String($0)) }
            if let name = parts.first, !name.isEmpty { fields[name] = parts.count > 1 ? parts[1] : "" }
        }
        return fields
    }

    /// `%XX` escapes and `+` decoded; a malformed escape is kept as written.
    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), input.count >= 2,
                      let value = UInt8(String(decoding: input.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                input = input.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What a handler answers: a status, a content type and a body (sent with its length and
/// `Cache-Control: no-store`; the connection is closed after it).
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]

    public init(status: Int, contentType: String, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    public static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
    }

    public static func json(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: Array(text.utf8))
    }

    public static func html(_ text: String) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(text.utf8))
    }

    /// An error as JSON, `{"error": MESSAGE}`, with `status`.
    public static func error(_ message: String, status: Int) -> HTTPResponse {
        json("{\"error\":\(JSONText.string(message))}", status: status)
    }

    /// The reason phrase of `status`.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 503: "Service Unavailable"
        default: status < 400 ? "OK" : status < 500 ? "Client Error" : "Server Error"
        }
    }
}

/// JSON text written by hand, for documents whose fields are few and fixed.
public enum JSONText {
    /// `text` as a JSON string, quoted and escaped.
    public static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A finite number as JSON writes it; `null` for NaN or an infinity.
    public static func number(_ value: Double) -> String {
        value.isFinite ? "\(value)" : "null"
    }
}
