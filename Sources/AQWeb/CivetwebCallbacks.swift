import CCivetweb
import Glibc

// civetweb's callbacks: C functions that reach the server's state through their user data.
// They run on civetweb's threads (never on a real-time path).

/// Keeps civetweb's words from a failing start for the error; every other line is dropped
/// (the server's refusals are answered to the client instead).
let civetwebLogMessage: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32 = { connection, message in
    if connection == nil, let message { HTTPServerState.startError.withLock { $0 = String(cString: message) } }
    return 1
}

let civetwebRequest: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { connection, data in
    guard let connection, let data else { return 0 }
    return Int32(serve(connection, Unmanaged<HTTPServerState>.fromOpaque(data).takeUnretainedValue()))
}

/// A WebSocket client is taken (0) when it carries the token and there is room for it.
let civetwebLiveConnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { connection, data in
    guard let connection, let data, let info = mg_get_request_info(connection) else { return 1 }
    let state = Unmanaged<HTTPServerState>.fromOpaque(data).takeUnretainedValue()
    let query = HTTPRequest.fields(of: info.pointee.query_string.map { String(cString: $0) } ?? "")
    let authorization = mg_get_header(connection, "Authorization").map { String(cString: $0) }
    let remote = withUnsafeBytes(of: info.pointee.remote_addr) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    guard state.options.admitsPeer?(remote, Int(info.pointee.remote_port)) ?? true,
          state.admits(query: query, authorization: authorization), state.liveCount < state.options.maximumLiveClients else {
        state.refused.add(1, ordering: .relaxed)
        return 1
    }
    return 0
}

let civetwebLiveReady: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { connection, data in
    guard let connection, let data else { return }
    _ = Unmanaged<HTTPServerState>.fromOpaque(data).takeUnretainedValue().addLive(connection)
}

/// Messages from a client are read and ignored; a close frame (opcode 8) ends the connection.
let civetwebLiveData: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32 = { _, bits, _, _, _ in
    bits & 0x0F == 8 ? 0 : 1
}

let civetwebLiveClose: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { connection, data in
    guard let connection, let data else { return }
    Unmanaged<HTTPServerState>.fromOpaque(data).takeUnretainedValue().removeLive(connection)
}

/// Checks a request (method, token, size), reads its body, has the handler answer it and writes
/// the answer; returns the status sent.
private func serve(_ connection: OpaquePointer, _ state: HTTPServerState) -> Int {
    guard let info = mg_get_request_info(connection)?.pointee else { return 0 }
    let method = info.request_method.map { String(cString: $0) } ?? ""
    let path = info.local_uri.map { String(cString: $0) } ?? "/"
    let query = HTTPRequest.fields(of: info.query_string.map { String(cString: $0) } ?? "")
    let remote = withUnsafeBytes(of: info.remote_addr) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    let authorization = mg_get_header(connection, "Authorization").map { String(cString: $0) }
    func answer(_ response: HTTPResponse, refused: Bool = false) -> Int {
        if refused { state.refused.add(1, ordering: .relaxed) } else { state.requests.add(1, ordering: .relaxed) }
        write(response, to: connection, headOnly: method == "HEAD")
        return response.status
    }
    guard state.options.admitsPeer?(remote, Int(info.remote_port)) ?? true else {
        return answer(.error("this server takes requests only from its own user's sockets on loopback (or with its token)", status: 403), refused: true)
    }
    guard ["GET", "HEAD", "POST"].contains(method) else {
        return answer(.error("the method '\(method)' is not served here: expected GET, HEAD or POST", status: 405), refused: true)
    }
    guard state.admits(query: query, authorization: authorization) else {
        return answer(.error("this server needs its token: send Authorization: Bearer TOKEN, or ?token=TOKEN", status: 401), refused: true)
    }
    let length = info.content_length
    guard length <= Int64(state.options.maximumRequestBytes) else {
        return answer(.error("a body of \(length) bytes is too large: at most \(state.options.maximumRequestBytes)", status: 413), refused: true)
    }
    var body = [UInt8](repeating: 0, count: max(0, Int(length)))
    var read = 0
    while read < body.count {
        let got = body.withUnsafeMutableBytes { mg_read(connection, $0.baseAddress! + read, $0.count - read) }
        if got <= 0 { break }
        read += Int(got)
    }
    guard read == body.count else {
        return answer(.error("the body ended after \(read) of the \(body.count) bytes its Content-Length announced", status: 400), refused: true)
    }
    if path == "/events", method == "GET", let events = state.options.events {
        guard state.eventClients.add(1, ordering: .acquiringAndReleasing).newValue <= state.options.maximumEventClients else {
            state.eventClients.subtract(1, ordering: .acquiringAndReleasing)
            return answer(.error("already \(state.options.maximumEventClients) event streams: try again later", status: 503), refused: true)
        }
        defer { state.eventClients.subtract(1, ordering: .acquiringAndReleasing) }
        state.requests.add(1, ordering: .relaxed)
        let resume = mg_get_header(connection, "Last-Event-ID").flatMap { Int(String(cString: $0)) } ?? 0
        stream(events, after: resume, to: connection, state: state)
        return 200
    }
    return answer(state.handler(HTTPRequest(method: method, path: path, query: query, body: body, remoteAddress: remote)))
}

/// Server-Sent Events: the events kept after `sequence`, then each as it comes, until the
/// client goes, the log closes or the server stops; a comment line every 5 s when idle (so a
/// client that went is noticed).
private func stream(_ log: EventLog, after sequence: Int, to connection: OpaquePointer, state: HTTPServerState) {
    func send(_ text: String) -> Bool { text.withCString { mg_write(connection, $0, strlen($0)) } > 0 }
    guard send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n") else { return }
    var last = sequence, idle = 0.0
    while !state.stopping.load(ordering: .acquiring) {
        guard let batch = log.wait(after: last, timeout: 0.25) else { return }
        if batch.isEmpty {
            idle += 0.25
            if idle >= 5 {
                idle = 0
                if !send(": idle\n\n") { return }
            }
            continue
        }
        idle = 0
        var text = ""
        for event in batch {
            text += "id: \(event.sequence)\nevent: \(event.name)\ndata: \(event.json)\n\n"
            last = event.sequence
        }
        if !send(text) { return }
    }
}

/// The status line, the headers and the body; the connection closes after it.
private func write(_ response: HTTPResponse, to connection: OpaquePointer, headOnly: Bool) {
    let head = "HTTP/1.1 \(response.status) \(HTTPResponse.reason(response.status))\r\n"
        + "Content-Type: \(response.contentType)\r\nContent-Length: \(response.body.count)\r\n"
        + "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
    _ = head.withCString { mg_write(connection, $0, strlen($0)) }
    if !headOnly, !response.body.isEmpty {
        _ = response.body.withUnsafeBytes { mg_write(connection, $0.baseAddress, $0.count) }
    }
}
